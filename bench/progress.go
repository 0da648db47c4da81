package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// Progress reports on stderr: a live line on a terminal, one line per family otherwise.
type Progress struct {
	w     io.Writer
	tty   bool
	total int
	done  int
	start time.Time
}

// NewProgress writes to w; live lines only when w is a terminal.
func NewProgress(w io.Writer) *Progress {
	p := &Progress{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *Progress) Begin(total int) {
	if p == nil {
		return
	}
	p.total, p.done, p.start = total, 0, time.Now()
}

// Case announces a case about to run on a target.
func (p *Progress) Case(c *Case, t *Target) {
	if p == nil {
		return
	}
	p.done++
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K[%d/%d %4.0fs] %s on %s", p.done, p.total, time.Since(p.start).Seconds(), c.Label(), t.Name)
	}
}

// FamilyDone reports a finished family.
func (p *Progress) FamilyDone(f *Family, cases int, d time.Duration) {
	if p == nil || p.tty {
		return
	}
	fmt.Fprintf(p.w, "bench: [%d/%d %4.0fs] %s: %d sizes in %.1fs\n", p.done, p.total, time.Since(p.start).Seconds(), f.Title, cases, d.Seconds())
}

func (p *Progress) End() {
	if p == nil {
		return
	}
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "bench: %d runs in %.1fs\n", p.done, time.Since(p.start).Seconds())
}
