package kern

import "sync/atomic"

// The packed GEMM's schedule with one barrier per product (gemmOwnA), for every kernel set but
// the bf16 pair path. What follows describes the 256-bit kernels; the 512-bit ones (w512) keep its
// phases and task split with their own blocking (own512MB weight rows, gemmKC512) and walk every
// task B-panel-major through tiles512, two panels of each operand per micro-kernel call.
//
// The team first packs all of B (the activations) once, every k block of it, into the shared
// scratch, and passes one barrier. After that the tasks are independent: a task is a block of
// ownMB weight rows times ownNB activation rows, and the worker that claims it packs the task's
// weight rows itself, k block by k block, into its own scratch (ownMB x kc floats, kept in L2)
// and runs the 6x16 micro-kernel over them: each 16-row A panel stays in L1 while the task's B
// panels of that k block stream past it from L2. The C block of a task (ownMB x ownNB) is
// written by that worker alone, overwritten in the first k block and accumulated after.
//
// The shared-panel schedule (gemm) packs each k block of A once for the whole team and needs a
// barrier per k block, where the faster worker waits for the slower one's last task; this one
// packs a weight row once per task column (f16 rows are widened as often), so the columns are as
// wide as ownNB allows unless the weight rows alone give the team too few tasks. On Zen 3 (one
// worker, f16 weights, GFLOPS per CPU second on a loaded machine, schedules alternating) the
// 5632x512x2048 product ran at 57-63 against the shared panels' 42-46; on two workers 2048³ lost
// 10-17% with columns of 264 rows (A packed 8 times) and is level with the shared panels with one
// column (f32 127/127 against 122/125 GFLOPS, f16 125/134 against 134/134).
// Tasks run weight-block-major, so the tasks that pack the same weight rows run next to each
// other on different workers and the second one reads the rows from the shared L3.
//
// Wide products (n >= ownWideN activation rows) walk a task the other way round. Each sweep of
// one A panel over the task's B panels writes a 64-byte piece of C in n rows ldc apart: a page
// each for m >= 1024, more pages than the TLB holds, and a miss at every tile's store (on Zen 3,
// 2048³ on one worker, the kernel over B panels streamed from L3 ran at 0.98 of its speed in L1,
// with the C tiles of those rows at 0.74-0.92). There a task holds up to ownMBWide weight rows
// (the team's task rows a multiple of nth), k blocks are ownKCWide, and each B panel (12 KiB, in
// L1) meets all the task's A panels in turn, which stream from L2 or L3: C is written along its
// rows, 2 KiB at a time, and passed over half as often. On Zen 3 (2048³, the two orders
// alternating in one process, medians of 8 rounds on a shared host): one worker 1.09-1.22x,
// f16 weights 1.15-1.19x, two workers 1.03-1.09x; A blocks of 256 or 384 rows gained 1.05-1.07x,
// of 1024 as many as 512. n = 1024 was level (0.98-1.02x), and so was n = 512 (TinyLlama's FFN
// over a 512-token prompt), so narrower products keep the order above. That order is now the
// reference (ownFuseB = false) for the one wide products run: ownFusedB, where each task packs
// its own B panels.

// Blocking of gemmOwnA (variables only so that benchmarks can try others: KERN_OWN in
// bench_test.go).
var (
	ownKC = 256  // k block: a 16-row A panel of 16 KiB stays in L1
	ownMB = 64   // weight rows per task (multiple of gemmNR): a 64 KiB A block per worker
	ownNB = 2052 // at most this many activation rows per task (multiple of gemmMR): a weight row is packed once for n <= 2052

	// Weight rows per task on the 512-bit kernels, at most: 256 x kc 512 floats, a 512 KiB A
	// block in L2; a wide product's (n >= ownWideN) tasks take up to own512MBWide, a 2 MiB A
	// block past L2 that ownFusedB walks in L2-sized sub-blocks. On Zen 5
	// (three alternating rounds) 2048³ ran 227-230 GFLOPS on one worker against 217-222 with 256
	// rows, two workers (512 rows a task) 441-455 against 430-435; TinyLlama's FFN up over a
	// 512-token prompt (5632x512x2048, f16 weights) lost 3% on one worker and 9% on two with them.
	own512MB     = 256
	own512MBWide = 1024

	ownWideN = 1536 // activation rows from which a product is wide (B-panel-major tasks)

	ownFuseB  = true // wide products pack B in each task (ownFusedB); false (tests): the team packs it
	ownKCWide = 512  // k block of a wide product: a 12 KiB B panel stays in L1
	ownMBWide = 512  // weight rows per task of a wide product, at most
)

const (
	ownFuseBPanels = 16 // B panels packed at a time in ownFusedB (96 activation rows, 192 KiB at kc 512)
	ownFuseAPanels = 16 // A panels per sub-block in ownFusedB (256 weight rows, 512 KiB at kc 512; even)
)

// ownPlan is gemmOwnA's deterministic work split (the same in every worker).
type ownPlan struct {
	m, n, k    int
	kc, nblk   int
	apan, bpan int
	bPanel     int // floats per packed B panel (bStride(kc))
	bBlock     int // floats of packed B per k block
	mb, nb     int // weight rows and activation rows per task
	mt, nt     int // task rows and columns
	aSize      int // floats of one worker's A block (a multiple of 16: 64-byte aligned)
	wide       bool
	w512       bool // the 512-bit kernels (tiles512): B-panel-major within a task, kc gemmKC512
	fuseB      bool // a wide product: B packed by each task (ownFusedB)
	groupSize  int  // floats of one worker's group of packed B panels (fuseB; a multiple of 16)
}

func newOwnPlan(m, n, k, nth int) ownPlan {
	pl := ownPlan{m: m, n: n, k: k, mb: ownMB, wide: n >= ownWideN && !gemm512, w512: gemm512}
	pl.fuseB = n >= ownWideN && ownFuseB
	kcMax := ownKC
	if pl.w512 {
		// Task rows of up to own512MB (own512MBWide) weight rows, as many tasks as a multiple of
		// the team and at least two per worker (down to one A panel pair a task), equal up to a
		// panel pair.
		kcMax = gemmKC512
		team := max(nth, 1)
		mbMax := own512MB
		if n >= ownWideN {
			mbMax = own512MBWide
		}
		mt := max((m+mbMax-1)/mbMax, 2*team)
		mt = (mt + team - 1) / team * team
		pl.mb = ((m+mt-1)/mt + 2*gemmNR - 1) / (2 * gemmNR) * (2 * gemmNR)
	}
	if pl.wide {
		kcMax = ownKCWide
		// Task rows of at most ownMBWide weight rows, as many as a multiple of the team.
		team := max(nth, 1)
		mt := ((m+ownMBWide-1)/ownMBWide + team - 1) / team * team
		pl.mb = ((m+mt-1)/mt + gemmNR - 1) / gemmNR * gemmNR
	}
	pl.kc, pl.nblk = kBlocks(k, kcMax)
	pl.apan = (m + gemmNR - 1) / gemmNR
	pl.bpan = (n + gemmMR - 1) / gemmMR
	pl.bPanel = bStride(pl.kc)
	pl.bBlock = pl.bpan * pl.bPanel
	pl.mt = (m + pl.mb - 1) / pl.mb
	// Task columns: as few as ownNB allows (each one packs the weights again), but enough that
	// every worker gets two tasks when the weight rows alone give too few.
	pl.nt = max((n+ownNB-1)/ownNB, (2*max(nth, 1)+pl.mt-1)/pl.mt)
	pl.nt = min(pl.nt, (n+gemmMR-1)/gemmMR)
	pl.nb = ((n+pl.nt-1)/pl.nt + gemmMR - 1) / gemmMR * gemmMR
	pl.nt = (n + pl.nb - 1) / pl.nb
	pl.aSize = (pl.mb*pl.kc + 15) &^ 15
	if pl.fuseB {
		pl.groupSize = (ownFuseBPanels*pl.bPanel + 15) &^ 15
	}
	return pl
}

// task gives task id's A panels ip0..ip1-1 and B panels jp0..jp1-1.
func (pl *ownPlan) task(id int) (ip0, ip1, jp0, jp1 int) {
	tm, tn := id/pl.nt, id%pl.nt
	ip0 = tm * pl.mb / gemmNR
	jp0 = tn * pl.nb / gemmMR
	return ip0, min(pl.apan, ip0+pl.mb/gemmNR), jp0, min(pl.bpan, jp0+pl.nb/gemmMR)
}

// claim takes the next task from counter, whose tasks are numbered from base: its panels, and
// false once none is left.
func (pl *ownPlan) claim(counter *atomic.Int64, base int64) (ip0, ip1, jp0, jp1 int, ok bool) {
	id := counter.Add(1) - 1 - base
	if id >= int64(pl.mt*pl.nt) {
		return 0, 0, 0, 0, false
	}
	ip0, ip1, jp0, jp1 = pl.task(int(id))
	return ip0, ip1, jp0, jp1, true
}

// ownWorkSize is the scratch of gemmOwnA, without the alignment slack.
func ownWorkSize(m, n, k, nth int) int {
	pl := newOwnPlan(m, n, k, nth)
	if pl.fuseB {
		return max(nth, 1) * (pl.aSize + pl.groupSize)
	}
	return (pl.nblk*pl.bBlock+15)&^15 + max(nth, 1)*pl.aSize
}

// gemmOwnA runs the product with the schedule above (n > gemmDotMaxN, m, n, k > 0, no bf16
// pairs). The protocol is Sgemm's, with one barrier call per worker when nth > 1.
func gemmOwnA(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a aSource, b bSource, c []float32, ldc int) {
	pl := newOwnPlan(m, n, k, nth)
	if ith < 0 || ith >= max(nth, 1) {
		panic("kern.Sgemm: bad worker index")
	}
	if len(work) < ownWorkSize(m, n, k, nth)+gemmAlign {
		panic("kern.Sgemm: work shorter than SgemmWorkSize")
	}
	off := alignOff(work)
	if pl.fuseB {
		mine := off + ith*(pl.aSize+pl.groupSize)
		ownFusedB(&pl, counter, work[mine:mine+pl.aSize], work[mine+pl.aSize:mine+pl.aSize+pl.groupSize], a, b, c, ldc)
		return
	}
	bp := work[off : off+pl.nblk*pl.bBlock]
	// The private blocks start at the next 64 bytes after packed B (bBlock need not be a
	// multiple of 16 floats); aSize is one, so every block is 64-byte aligned.
	mine := off + (pl.nblk*pl.bBlock+15)&^15 + ith*pl.aSize
	aw := work[mine : mine+pl.aSize]

	// Phase 1: pack B, gemmPackB panels of one k block per task.
	chunks := (pl.bpan + gemmPackB - 1) / gemmPackB
	npack := int64(pl.nblk * chunks)
	for {
		id := counter.Add(1) - 1
		if id >= npack {
			break
		}
		t, ch := int(id)/chunks, int(id)%chunks
		p0, kb := t*pl.kc, min(pl.kc, k-t*pl.kc)
		for jp := ch * gemmPackB; jp < min(pl.bpan, (ch+1)*gemmPackB); jp++ {
			j0 := jp * gemmMR
			o := t*pl.bBlock + jp*pl.bPanel
			packB(bp[o:o+bStride(kb)], b, j0*b.ldb+p0, min(gemmMR, n-j0), kb)
		}
	}
	base := npack + int64(nth)
	if nth > 1 {
		barrier()
	}

	// Phase 2: the tasks, each packing its own weight rows.
	var tmp [gemmMR * gemmNR]float32
	for {
		ip0, ip1, jp0, jp1, ok := pl.claim(counter, base)
		if !ok {
			return
		}
		for t := 0; t < pl.nblk; t++ {
			p0, kb := t*pl.kc, min(pl.kc, k-t*pl.kc)
			packABlock(aw, a, ip0, ip1, m, p0, kb)
			bt := bp[t*pl.bBlock:]
			if pl.w512 {
				tiles512(kb, aw, ip0, ip1, bt, pl.bPanel, jp0, jp1, m, n, c, ldc, t > 0)
				continue
			}
			if pl.wide {
				for jp := jp0; jp < jp1; jp++ {
					bq := bt[jp*pl.bPanel : jp*pl.bPanel+gemmMR*kb]
					for ip := ip0; ip < ip1; ip++ {
						gemmTile(kb, aw[(ip-ip0)*gemmNR*kb:(ip-ip0+1)*gemmNR*kb], bq, c, ldc, ip*gemmNR, jp*gemmMR, m, n, t > 0, &tmp)
					}
				}
				continue
			}
			for ip := ip0; ip < ip1; ip++ {
				ap := aw[(ip-ip0)*gemmNR*kb : (ip-ip0+1)*gemmNR*kb]
				for jp := jp0; jp < jp1; jp++ {
					gemmTile(kb, ap, bt[jp*pl.bPanel:jp*pl.bPanel+gemmMR*kb], c, ldc, ip*gemmNR, jp*gemmMR, m, n, t > 0, &tmp)
				}
			}
		}
	}
}

// packABlock packs the weight rows of A panels ip0..ip1-1, k steps p0..p0+kb-1, into aw.
func packABlock(aw []float32, a aSource, ip0, ip1, m, p0, kb int) {
	for ip := ip0; ip < ip1; ip++ {
		i0 := ip * gemmNR
		packA(aw[(ip-ip0)*gemmNR*kb:(ip-ip0+1)*gemmNR*kb], a, i0, min(gemmNR, m-i0), p0, kb)
	}
}

// ownFusedB runs gemmOwnA's tasks for a wide product without packing B for the team. For each
// k block a task packs its weight rows into aw, then walks its activation rows ownFuseBPanels
// panels at a time: it packs them into bw (in L2), and they meet the task's weight rows
// ownFuseAPanels panels at a time (an A sub-block that stays in L2 while the group's panels pass
// it, a B panel (a pair on the 512-bit kernels) in L1 while the sub-block's A panels stream past
// it). B is packed once per task instead of once for the team, which saves writing all of it to
// memory and reading it back, and the team passes no barrier. Tasks are claimed from counter
// from 0.
//
// On Zen 5 (2048³ f32, the schedules alternating in one process, medians of five rounds, huge
// pages): against the team-packed B, one worker gained 2.2% and two workers 1.9-2.6% with B
// packed one pair of panels at a time and the A block (1024 rows, past L2) streaming past each
// pair; sub-blocks of 256 weight rows against 16 B panels added 1.7-3.9% on one worker and
// 2.2-2.3% on two (8 panels or 128 rows 1% less, 32 panels level); prefetching the next group's
// rows while the kernels ran gained nothing. Task rows of 512 or 256 (B packed two or four
// times as often) lost 2-3% on one worker, and one task per worker was level with two. The
// 256-bit kernels on the same CPU (TANDEM_CPU_KERNELS=avx2) gained 2.2-2.3% on one and on two
// workers over their wide order above; sub-blocks of 8 or 32 panels and groups of 8 or 32 were
// level with 16 and 16 there, or 2% slower.
func ownFusedB(pl *ownPlan, counter *atomic.Int64, aw, bw []float32, a aSource, b bSource, c []float32, ldc int) {
	m, n, k := pl.m, pl.n, pl.k
	var tmp [gemmMR * gemmNR]float32
	for {
		ip0, ip1, jp0, jp1, ok := pl.claim(counter, 0)
		if !ok {
			return
		}
		for t := 0; t < pl.nblk; t++ {
			p0, kb := t*pl.kc, min(pl.kc, k-t*pl.kc)
			packABlock(aw, a, ip0, ip1, m, p0, kb)
			bs := bStride(kb)
			for jg := jp0; jg < jp1; jg += ownFuseBPanels {
				cnt := min(ownFuseBPanels, jp1-jg)
				for q := range cnt {
					j := (jg + q) * gemmMR
					packB(bw[q*bs:(q+1)*bs], b, j*b.ldb+p0, min(gemmMR, n-j), kb)
				}
				j0 := jg * gemmMR
				for ia := ip0; ia < ip1; ia += ownFuseAPanels {
					ib := min(ip1, ia+ownFuseAPanels)
					if pl.w512 {
						tiles512(kb, aw[(ia-ip0)*gemmNR*kb:], ia, ib, bw, bs, 0, cnt, m, n-j0, c[j0*ldc:], ldc, t > 0)
						continue
					}
					for q := range cnt {
						bq := bw[q*bs : q*bs+gemmMR*kb]
						for ip := ia; ip < ib; ip++ {
							gemmTile(kb, aw[(ip-ip0)*gemmNR*kb:(ip-ip0+1)*gemmNR*kb], bq, c, ldc, ip*gemmNR, (jg+q)*gemmMR, m, n, t > 0, &tmp)
						}
					}
				}
			}
		}
	}
}

// gemmTile computes the 6x16 C tile at weight row i0 and activation row j0 from the packed A
// panel ap and B panel bp (kb k steps): set, or added to with accum. Tiles cut by the edges of
// C (m or n) go through tmp.
func gemmTile(kb int, ap, bp, c []float32, ldc, i0, j0, m, n int, accum bool, tmp *[gemmMR * gemmNR]float32) {
	ni, nj := min(gemmNR, m-i0), min(gemmMR, n-j0)
	if ni == gemmNR && nj == gemmMR {
		kernel6x16(kb, ap, bp, c[j0*ldc+i0:], ldc, accum)
		return
	}
	kernel6x16(kb, ap, bp, tmp[:], gemmNR, false)
	for r := 0; r < nj; r++ {
		dst := c[(j0+r)*ldc+i0 : (j0+r)*ldc+i0+ni]
		src := tmp[r*gemmNR : r*gemmNR+ni]
		if accum {
			for q := range dst {
				dst[q] += src[q]
			}
		} else {
			copy(dst, src)
		}
	}
}
