package main

import (
	"encoding/json"
	"io"
	"math"
	"runtime"
	"time"
)

// Report is the -json document.
type Report struct {
	Tool     string       `json:"tool"`
	Format   int          `json:"format"`
	Started  time.Time    `json:"started"`
	Seconds  float64      `json:"seconds"`
	Go       string       `json:"go"`
	OS       string       `json:"os"`
	Arch     string       `json:"arch"`
	NumCPU   int          `json:"num_cpu"`
	Quick    bool         `json:"quick"`
	Threads  []int        `json:"threads"`
	Policy   JSONPolicy   `json:"policy"`
	Vulkan   JSONVulkan   `json:"vulkan"`
	Devices  []DeviceInfo `json:"devices"`
	Results  []JSONResult `json:"results"`
	Families []JSONFamily `json:"families"`
	Model    *JSONModel   `json:"model,omitempty"`
}

// JSONModel is the language model of -model.
type JSONModel struct {
	Path   string `json:"path"`
	Type   string `json:"type"` // llama-bench's model_type: "llama 1B Q4_0"
	Size   int64  `json:"size"` // weights' bytes
	Params int64  `json:"n_params"`
	Layers int    `json:"n_layers"` // offloadable: the blocks and the output layer
}

type JSONPolicy struct {
	Warmup       int     `json:"warmup"`
	MinReps      int     `json:"min_reps"`
	MaxReps      int     `json:"max_reps"`
	BudgetMS     float64 `json:"budget_ms"`
	MaxRunMS     float64 `json:"max_run_ms"`
	DeviceBudget float64 `json:"device_budget_s"`
}

type JSONVulkan struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
}

// JSONFamily describes a family once (the results refer to it by id).
type JSONFamily struct {
	ID        string  `json:"id"`
	Title     string  `json:"title"`
	XLabel    string  `json:"size_means"`
	Unit      string  `json:"unit"`
	NMSELimit float64 `json:"nmse_limit"`
}

// JSONResult is one case on one device. Times are in nanoseconds; throughput is in the family's
// unit (GFLOPS or GB/s); nmse is a number, "inf", or absent when there is no reference.
type JSONResult struct {
	Family          string   `json:"family"`
	Case            string   `json:"case"`
	N               int64    `json:"n"`
	Shape           string   `json:"shape"`
	Device          string   `json:"device"`
	Kind            string   `json:"kind"`
	Baseline        bool     `json:"baseline,omitempty"`
	Status          string   `json:"status"`
	Reason          string   `json:"reason,omitempty"`
	FLOPs           float64  `json:"flops"`
	Bytes           float64  `json:"bytes"`
	WarmupNS        []int64  `json:"warmup_ns,omitempty"`
	TimesNS         []int64  `json:"times_ns,omitempty"`
	MedianNS        int64    `json:"median_ns,omitempty"`
	MinNS           int64    `json:"min_ns,omitempty"`
	Throughput      float64  `json:"throughput,omitempty"`
	Unit            string   `json:"unit"`
	VsCPU           *float64 `json:"vs_cpu,omitempty"`
	NMSE            any      `json:"nmse,omitempty"`
	Wrong           bool     `json:"wrong,omitempty"`
	Splits          int      `json:"splits,omitempty"`
	Copies          int      `json:"copies,omitempty"`
	CopiesPerRun    *float64 `json:"copies_per_run,omitempty"`     // scheduler rows
	CopyBytesPerRun *float64 `json:"copy_bytes_per_run,omitempty"` // scheduler rows
	// model rows: the llama-bench test ("pp64", "tg16"), its token counts, the layers offloaded
	// and the model's offloadable layers; throughput is in tokens/s
	Test    string `json:"test,omitempty"`
	NPrompt int    `json:"n_prompt,omitempty"`
	NGen    int    `json:"n_gen,omitempty"`
	NGL     *int   `json:"n_gpu_layers,omitempty"`
	NLayers int    `json:"n_layers,omitempty"`
	// FlashAttn is llama-bench's flash_attn (1 when the session used FLASH_ATTN_EXT)
	FlashAttn *int `json:"flash_attn,omitempty"`
}

func kindName(k TargetKind) string {
	switch k {
	case KindDevice:
		return "device"
	case KindSched:
		return "scheduler"
	}
	return "cpu"
}

func nsList(ds []time.Duration) []int64 {
	if len(ds) == 0 {
		return nil
	}
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = d.Nanoseconds()
	}
	return out
}

// NewReport collects a run into the JSON document.
func NewReport(cfg *Config, disc *Discovery, results []*Result, started time.Time, elapsed time.Duration) *Report {
	rep := &Report{
		Tool: "tandem bench", Format: 1, Started: started.UTC(), Seconds: elapsed.Seconds(),
		Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, NumCPU: runtime.NumCPU(),
		Quick: cfg.Quick, Threads: cfg.Threads,
		Policy: JSONPolicy{Warmup: cfg.Policy.Warmup, MinReps: cfg.Policy.MinReps, MaxReps: cfg.Policy.MaxReps,
			BudgetMS: ms(cfg.Policy.Budget), MaxRunMS: ms(cfg.Policy.MaxRun), DeviceBudget: cfg.Policy.Device.Seconds()},
		Vulkan:  JSONVulkan{Available: disc.VulkanOK, Reason: disc.VulkanWhy},
		Devices: disc.Devices,
		Results: []JSONResult{},
	}
	seen := map[*Family]bool{}
	for _, r := range results {
		if !seen[r.Family] {
			seen[r.Family] = true
			rep.Families = append(rep.Families, JSONFamily{ID: r.Family.ID, Title: r.Family.Title,
				XLabel: r.Family.XLabel, Unit: r.Family.Metric.Unit(), NMSELimit: r.Family.Limit})
		}
		j := JSONResult{
			Family: r.Family.ID, Case: r.Family.Title, N: r.Case.N, Shape: r.Case.Shape,
			Device: r.Target, Kind: kindName(r.Kind), Baseline: r.Baseline, Status: string(r.Status), Reason: r.Reason,
			FLOPs: r.Case.FLOPs, Bytes: r.Case.Bytes, Unit: r.Family.Metric.Unit(),
			WarmupNS: nsList(r.Warmup), TimesNS: nsList(r.Times),
			MedianNS: r.Median.Nanoseconds(), MinNS: r.Min.Nanoseconds(), Throughput: r.Throughput(),
			Wrong: r.Wrong, Splits: r.Splits, Copies: r.Copies,
		}
		if r.Kind == KindSched && r.Status == StatusOK && r.NGL < 0 {
			cp, cb := r.CopiesPerRun, r.CopyBytes
			j.CopiesPerRun, j.CopyBytesPerRun = &cp, &cb
		}
		if r.NGL >= 0 {
			ngl := r.NGL
			fa := 0
			if r.FlashAttn {
				fa = 1
			}
			j.NGL, j.NLayers, j.Test, j.FlashAttn = &ngl, r.Layers, r.Case.Shape, &fa
			if r.Family.ID == modelTG {
				j.NGen = int(r.Case.N)
			} else {
				j.NPrompt = int(r.Case.N)
			}
			if r.Kind != KindCPU && r.Status == StatusOK {
				cp := r.CopiesPerRun
				j.CopiesPerRun = &cp
			}
		}
		if r.Status != StatusOK {
			j.MedianNS, j.MinNS = 0, 0
		}
		if r.VsCPU > 0 {
			v := r.VsCPU
			j.VsCPU = &v
		}
		if r.HasNMSE {
			if math.IsInf(r.NMSE, 0) || math.IsNaN(r.NMSE) {
				j.NMSE = "inf"
			} else {
				j.NMSE = r.NMSE
			}
		}
		rep.Results = append(rep.Results, j)
	}
	if m := disc.Model; m != nil {
		rep.Model = &JSONModel{Path: m.Path, Type: m.Info.Desc, Size: m.Info.Bytes, Params: m.Info.Params, Layers: m.Layers}
	}
	return rep
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// WriteJSON writes the report, indented.
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
