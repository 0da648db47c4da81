package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// fmtDuration prints 3 significant digits in ns, µs, ms or s.
func fmtDuration(d time.Duration) string {
	s := d.Seconds()
	switch {
	case d <= 0:
		return "0"
	case s < 1e-6:
		return sig3(s*1e9) + " ns"
	case s < 1e-3:
		return sig3(s*1e6) + " µs"
	case s < 1:
		return sig3(s*1e3) + " ms"
	}
	return sig3(s) + " s"
}

// sig3 prints v with 3 significant digits and no exponent (1.23, 12.3, 123, 1234).
func sig3(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a < 0.01:
		return fmt.Sprintf("%.2g", v)
	case a < 1:
		return fmt.Sprintf("%.3f", v)
	case a < 10:
		return fmt.Sprintf("%.2f", v)
	case a < 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}

// fmtBytes prints bytes in B, KiB, MiB or GiB.
func fmtBytes(b float64) string {
	switch {
	case b < 1024:
		return fmt.Sprintf("%.0f B", b)
	case b < 1<<20:
		return sig3(b/1024) + " KiB"
	case b < 1<<30:
		return sig3(b/(1<<20)) + " MiB"
	}
	return sig3(b/(1<<30)) + " GiB"
}

// fmtCount prints sizes as the chart and -sizes write them: 512, 64K, 1M (K = 1024).
func fmtCount(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dG", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dM", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0 && n >= 16<<10:
		return fmt.Sprintf("%dK", n>>10)
	}
	return fmt.Sprint(n)
}

// fmtNMSE prints an NMSE in scientific notation ("0" when exact).
func fmtNMSE(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.IsInf(v, 1):
		return "inf"
	}
	return fmt.Sprintf("%.1e", v)
}

// fmtRatio prints a speed ratio: 1.23× CPU, 0.045× CPU.
func fmtRatio(r float64) string {
	if r >= 0.1 && r < 10 {
		return fmt.Sprintf("%.2f× CPU", r)
	}
	return sig3(r) + "× CPU"
}

// Table is an aligned text table.
type Table struct {
	Header []string
	Right  []bool // right-align column i
	Rows   [][]string
}

func width(s string) int { return utf8.RuneCountInString(s) }

// Write prints the table with two spaces between columns; an empty row prints as a blank line.
func (t *Table) Write(w io.Writer) error {
	ws := make([]int, len(t.Header))
	for _, r := range append([][]string{t.Header}, t.Rows...) {
		for i, c := range r {
			if i < len(ws) {
				ws[i] = max(ws[i], width(c))
			}
		}
	}
	var b strings.Builder
	line := func(r []string) {
		if len(r) == 0 {
			b.WriteString("\n")
			return
		}
		var sb strings.Builder
		for i := range ws {
			c := ""
			if i < len(r) {
				c = r[i]
			}
			pad := strings.Repeat(" ", ws[i]-width(c))
			if i > 0 {
				sb.WriteString("  ")
			}
			if i < len(t.Right) && t.Right[i] {
				sb.WriteString(pad + c)
			} else {
				sb.WriteString(c + pad)
			}
		}
		b.WriteString(strings.TrimRight(sb.String(), " ") + "\n")
	}
	line(t.Header)
	for _, r := range t.Rows {
		line(r)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ResultsTable lays results out grouped by family and case, one row per target; the family title
// is printed on its first row, the shape on each case's first row, a blank line between families.
func ResultsTable(results []*Result) *Table {
	t := &Table{
		Header: []string{"case", "shape", "device", "median", "min", "reps", "throughput", "vs CPU", "NMSE", "notes"},
		Right:  []bool{false, false, false, true, true, true, true, true, true, false},
	}
	var lastFam *Family
	var lastCase *Case
	for _, r := range results {
		fam, shape := "", ""
		if r.Family != lastFam {
			if lastFam != nil {
				t.Rows = append(t.Rows, nil)
			}
			fam = r.Family.Title
		}
		if r.Case != lastCase {
			shape = r.Case.Shape
		}
		lastFam, lastCase = r.Family, r.Case
		row := []string{fam, shape, r.Device()}
		switch r.Status {
		case StatusOK:
			row = append(row, fmtDuration(r.Median), fmtDuration(r.Min), fmt.Sprint(len(r.Times)),
				sig3(r.Throughput())+" "+r.Family.Metric.Unit())
			if r.VsCPU > 0 {
				row = append(row, fmtRatio(r.VsCPU))
			} else {
				row = append(row, "—")
			}
			switch {
			case r.HasNMSE && r.Wrong:
				row = append(row, fmtNMSE(r.NMSE)+" !")
			case r.HasNMSE:
				row = append(row, fmtNMSE(r.NMSE))
			case r.Baseline:
				row = append(row, "ref")
			default:
				row = append(row, "—")
			}
			row = append(row, notes(r))
		default:
			row = append(row, "—", "—", "—", "—", "—", "—", string(r.Status)+": "+r.Reason)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func notes(r *Result) string {
	var n []string
	if r.Wrong {
		n = append(n, fmt.Sprintf("WRONG (NMSE limit %.0e)", r.Family.Limit))
	}
	switch {
	case r.NGL >= 0:
		n = append(n, modelNotes(r))
	case r.Kind == KindSched:
		n = append(n, fmt.Sprintf("%s, %s; per run: %s copies, %s", plural(r.Splits, "split"), plural(r.Copies, "copy"),
			sig3(r.CopiesPerRun), fmtBytes(r.CopyBytes)))
	}
	if len(r.Times) == 1 && len(r.Warmup) > 0 {
		n = append(n, "1 rep: one run exceeds -maxrun")
	}
	return strings.Join(n, "; ")
}

// Summary is one target's overall standing: the geometric mean of its speed ratios.
type Summary struct {
	Target           string
	Ratio            float64 // geometric mean of vs CPU over the cases with a ratio
	Cases            int     // cases with a ratio
	OK, Skipped, Err int
	Wrong            int
}

// Summarize returns one summary per target, in first-seen order.
func Summarize(results []*Result) []Summary {
	var order []string
	m := map[string]*Summary{}
	logs := map[string]float64{}
	for _, r := range results {
		s := m[r.Target]
		if s == nil {
			s = &Summary{Target: r.Target}
			m[r.Target] = s
			order = append(order, r.Target)
		}
		switch r.Status {
		case StatusOK:
			s.OK++
			if r.VsCPU > 0 {
				s.Cases++
				logs[r.Target] += math.Log(r.VsCPU)
			}
			if r.Wrong {
				s.Wrong++
			}
		case StatusSkipped:
			s.Skipped++
		default:
			s.Err++
		}
	}
	out := make([]Summary, 0, len(order))
	for _, name := range order {
		s := m[name]
		if s.Cases > 0 {
			s.Ratio = math.Exp(logs[name] / float64(s.Cases))
		}
		out = append(out, *s)
	}
	return out
}

// WriteSummary prints the per-target summary lines.
func WriteSummary(w io.Writer, ss []Summary) {
	fmt.Fprintln(w, "summary (geometric mean of vs CPU over the cases that ran on both):")
	t := &Table{Right: []bool{false, true, false}}
	t.Header = []string{"  device", "vs CPU", "cases"}
	for _, s := range ss {
		ratio := "—"
		if s.Cases > 0 {
			ratio = fmtRatio(s.Ratio)
		}
		detail := fmt.Sprintf("%d ran", s.OK)
		if s.Skipped > 0 {
			detail += fmt.Sprintf(", %d skipped", s.Skipped)
		}
		if s.Err > 0 {
			detail += fmt.Sprintf(", %d failed", s.Err)
		}
		if s.Wrong > 0 {
			detail += fmt.Sprintf(", %d WRONG", s.Wrong)
		}
		t.Rows = append(t.Rows, []string{"  " + s.Target, ratio, detail})
	}
	t.Write(w)
}

// modelNotes describes a model row: the layers offloaded and, off the CPU alone, the scheduler's
// splits and copies of one graph (a prompt's micro-batch or one generated token).
func modelNotes(r *Result) string {
	s := fmt.Sprintf("ngl %d/%d", r.NGL, r.Layers)
	if r.NGL == r.Layers {
		s += " (all; embeddings on the CPU)"
	}
	if r.Status == StatusOK && r.FlashAttn {
		s += ", flash attention"
	}
	if r.Kind != KindCPU && r.Status == StatusOK {
		s += fmt.Sprintf("; per graph: %s, %s", plural(r.Splits, "split"), plural(r.Copies, "copy"))
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "y") {
		return fmt.Sprintf("%d %sies", n, word[:len(word)-1])
	}
	return fmt.Sprintf("%d %ss", n, word)
}
