package scheduler

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/tandem-ml/tandem/core"
)

// Dump writes the current plan: each split's backend, nodes and copied inputs; with verbose, every
// node with its assignment, the reason for it, and its sources' backends. A nil w writes nothing.
func (s *Scheduler) Dump(w io.Writer, verbose bool) {
	if s == nil || w == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.plan == nil {
		fmt.Fprintln(w, "scheduler: no plan")
		return
	}
	s.dumpPlan(w, s.plan, verbose)
}

// report shows a new plan: on stderr when TANDEM_SCHED_DEBUG is set (2: verbose), and to
// Options.Logger.
func (s *Scheduler) report(p *plan) {
	if s.debug > 0 {
		s.dumpPlan(os.Stderr, p, s.debug > 1)
	}
	lg := s.opts.Logger
	if lg == nil {
		return
	}
	ctx := context.Background()
	name := func(id int) string {
		if id < 0 {
			return "NULL"
		}
		return s.backends[id].Name()
	}
	if lg.Enabled(ctx, slog.LevelDebug) {
		for i, sp := range p.splits {
			var in []string
			for _, c := range sp.inputs {
				in = append(in, fmt.Sprintf("%s from %s", orName(c.src), name(c.srcBackend)))
			}
			lg.LogAttrs(ctx, slog.LevelDebug, "tandem scheduler split", slog.Int("split", i),
				slog.String("backend", name(sp.backend)), slog.Int("nodes", len(sp.nodes)),
				slog.Any("inputs", in), slog.Any("deps", sp.deps))
		}
	}
	if lg.Enabled(ctx, LevelTrace) {
		for i, sp := range p.splits {
			for k, n := range sp.users {
				lg.LogAttrs(ctx, LevelTrace, "tandem scheduler node", slog.Int("split", i), slog.Int("node", sp.start+k),
					slog.String("op", n.Op.String()), slog.String("name", orName(n)),
					slog.String("backend", name(p.assign[n])), slog.String("reason", p.cause[n]))
			}
		}
	}
}

func (s *Scheduler) dumpPlan(w io.Writer, p *plan, verbose bool) {
	name := func(id int) string {
		if id < 0 {
			return "NULL"
		}
		return s.backends[id].Name()
	}
	for i, sp := range p.splits {
		var in []string
		for _, c := range sp.inputs {
			in = append(in, fmt.Sprintf("%s (%s, from %s)", orName(c.src), sizeStr(c.src.NBytes()), name(c.srcBackend)))
		}
		fmt.Fprintf(w, "## SPLIT #%d: %s # %d nodes, %d inputs: [%s] deps %v\n", i, name(sp.backend), len(sp.nodes), len(sp.inputs), strings.Join(in, ", "), sp.deps)
		if !verbose {
			continue
		}
		for k, n := range sp.users {
			if n.Op.IsView() {
				continue
			}
			fmt.Fprintf(w, "  node #%4d %-12s %-24s %8s [%-8s] (%s)", sp.start+k, n.Op, trunc(orName(n), 24), sizeStr(n.NBytes()), name(p.assign[n]), p.cause[n])
			for j, src := range sp.nodes[k].Src {
				if src == nil {
					continue
				}
				orig := n.Src[j]
				fmt.Fprintf(w, " %s [%s]", trunc(orName(src), 20), name(p.assign[orig]))
			}
			fmt.Fprintln(w)
		}
	}
}

func orName(t *core.Tensor) string {
	if t.Name != "" {
		return t.Name
	}
	return fmt.Sprintf("%v", t.Op)
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func sizeStr(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
