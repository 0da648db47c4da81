package cpu

import (
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/quant"
)

// LIGHTNING_INDEXER (core.LightningIndexer): the keys are split among the workers as ggml's
// kernel does; each worker converts a key row to f32 once per stream and scores it against every
// token's heads (ReLU of the q·k dots, weighted, summed in order of heads, plus the f16 mask).

func init() {
	register(core.OpLightningIndexer, opImpl{compute: computeLightningIndexer, tasks: lightningTasks,
		work: lightningWork, supports: lightningSupports})
}

func lightningSupports(dst *core.Tensor) bool { return core.LightningIndexerNodeValid(dst) }

func lightningTasks(dst *core.Tensor, nth int) int { return int(max(1, min(int64(nth), dst.Ne[0]))) }

// lightningWork: a key row in f32 per worker.
func lightningWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(dst.Src[0].Ne[0], nTasks) }

func computeLightningIndexer(p *params, dst *core.Tensor) {
	q, k, w, m := dst.Src[0], dst.Src[1], dst.Src[2], dst.Src[3]
	dq, dk, dw, dm, dd := q.Data(), k.Data(), w.Data(), m.Data(), dst.Data()
	v := vec{p.ref}
	n, nh, nt, ns := q.Ne[0], q.Ne[1], q.Ne[2], q.Ne[3]
	krow := scratch(p, n)
	j0, j1 := rowRange(dst.Ne[0], p.ith, p.nth)
	for s := int64(0); s < ns; s++ {
		ms := s % m.Ne[3]
		for j := j0; j < j1; j++ {
			loadRow(k, dk, 0, j, s, krow)
			for t := int64(0); t < nt; t++ {
				var score float32
				for h := int64(0); h < nh; h++ {
					qk := v.dot(f32sAt(dq, h*q.Nb[1]+t*q.Nb[2]+s*q.Nb[3], n), krow)
					score += max(qk, 0) * getF32(dw, h*w.Nb[0]+t*w.Nb[1]+s*w.Nb[3])
				}
				mv := quant.FP16ToFP32(u16s(dm[j*m.Nb[0]+t*m.Nb[1]+ms*m.Nb[3]:])[0])
				setF32(dd, j*dst.Nb[0]+t*dst.Nb[1]+s*dst.Nb[3], score+mv)
			}
		}
	}
}
