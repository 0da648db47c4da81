package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Chart is the data of the -svg chart: small multiples, one panel per family, each with one line
// (series) per device that ran the family; throughput against size, both on log scales.
type Chart struct {
	Title    string
	Subtitle string
	Devices  []string          // legend order; colors are assigned in this order
	Labels   map[string]string // legend text per device when it is not the name ("Vulkan0 (software)")
	Panels   []Panel
}

// label is the legend text of dev.
func (c *Chart) label(dev string) string {
	if l, ok := c.Labels[dev]; ok {
		return l
	}
	return dev
}

// Panel is one family (for a model family: one case, against the layers offloaded).
type Panel struct {
	Title   string
	XLabel  string
	Unit    string
	LinearX bool // a linear x axis (layers offloaded, from 0) instead of a log one
	Lines   []Line
}

// Line is one device's series in a panel (Points may be empty when every size was skipped).
type Line struct {
	Device  string
	Points  []Point
	Skipped []Skip // sizes that did not run, drawn as crosses on the x axis
}

// Skip is a size a device did not run, and why.
type Skip struct {
	X      float64
	Reason string
}

// Point is one size: X the size N, Y the throughput.
type Point struct{ X, Y float64 }

// ChartFromResults builds the chart: panels in family order, lines in target order. A model
// family gets a panel per case with tokens/s against the layers offloaded: the CPU at 0 and one
// curve per device+CPU scheduler from its split rows to the device's own row (every layer).
func ChartFromResults(title, subtitle string, results []*Result) *Chart {
	c := &Chart{Title: title, Subtitle: subtitle}
	devSeen := map[string]bool{}
	type panelKey struct {
		f *Family
		c *Case
	}
	panelOf := map[panelKey]int{}
	for _, r := range results {
		key, x, series := panelKey{f: r.Family}, float64(0), r.Target
		if r.Case != nil {
			x = float64(r.Case.N)
		}
		if r.Family.model != nil {
			key.c, x = r.Case, float64(r.NGL)
			if r.Kind == KindDevice {
				series = r.Target + "+CPU" // every layer offloaded: the end of the scheduler's curve
			}
		}
		pi, ok := panelOf[key]
		if !ok {
			pi = len(c.Panels)
			panelOf[key] = pi
			p := Panel{Title: r.Family.Title, XLabel: r.Family.XLabel, Unit: r.Family.Metric.Unit()}
			if key.c != nil {
				p.Title, p.LinearX = "MODEL "+r.Family.model.Info.Desc+" "+r.Case.Shape, true
			}
			c.Panels = append(c.Panels, p)
		}
		if !devSeen[series] {
			devSeen[series] = true
			c.Devices = append(c.Devices, series)
		}
		p := &c.Panels[pi]
		li := -1
		for i, l := range p.Lines {
			if l.Device == series {
				li = i
			}
		}
		if li < 0 {
			li = len(p.Lines)
			p.Lines = append(p.Lines, Line{Device: series})
		}
		switch {
		case r.Status == StatusOK && r.Throughput() > 0:
			p.Lines[li].Points = append(p.Lines[li].Points, Point{x, r.Throughput()})
		case r.Status != StatusOK && r.Case != nil && (r.Case.N > 0 || key.c != nil):
			p.Lines[li].Skipped = append(p.Lines[li].Skipped, Skip{x, string(r.Status) + ": " + r.Reason})
		}
	}
	return c
}

var palette = []string{"#1f6fb4", "#e8710a", "#2a9d3c", "#c33d3d", "#8757b8", "#8c564b", "#d9489b", "#6b6b6b"}

func (c *Chart) indexOf(dev string) int {
	for i, d := range c.Devices {
		if d == dev {
			return i
		}
	}
	return -1
}

// colorOf returns the device's color, stable across panels.
func (c *Chart) colorOf(dev string) string {
	if i := c.indexOf(dev); i >= 0 {
		return palette[i%len(palette)]
	}
	return "#000"
}

// marker draws series i's point shape at (x, y) — circle, square, diamond, triangle — so that
// series with equal values stay distinguishable; title becomes its tooltip.
func marker(i int, x, y float64, title string) string {
	if title != "" {
		title = "<title>" + title + "</title>"
	}
	switch (max(i, 0)) % 4 {
	case 1:
		return fmt.Sprintf(`<rect x="%.1f" y="%.1f" width="7" height="7">%s</rect>`, x-3.5, y-3.5, title)
	case 2:
		return fmt.Sprintf(`<path d="M%.1f %.1fl4.5 4.5l-4.5 4.5l-4.5 -4.5z">%s</path>`, x, y-4.5, title)
	case 3:
		return fmt.Sprintf(`<path d="M%.1f %.1fl4.5 8l-9 0z">%s</path>`, x, y-5, title)
	}
	return fmt.Sprintf(`<circle cx="%.1f" cy="%.1f" r="3.5">%s</circle>`, x, y, title)
}

// tickLabel prints an axis value briefly: 0.05, 2, 500, 20000.
func tickLabel(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// Layout constants (pixels).
const (
	panelW   = 360
	panelH   = 250
	padLeft  = 62
	padRight = 14
	padTop   = 30
	padBot   = 46
	gridCols = 3
	headerH  = 86
)

// logTicks returns tick values for a log axis over [lo, hi] (both > 0): 1-2-5 steps when the range
// is at most two decades, decades otherwise.
func logTicks(lo, hi float64) []float64 {
	var out []float64
	steps := []float64{1, 2, 5}
	if math.Log10(hi/lo) > 2.05 {
		steps = []float64{1}
	}
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, s := range steps {
			v := s * math.Pow(10, e)
			if v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
				out = append(out, v)
			}
		}
	}
	return out
}

// niceUp is the smallest 1, 2 or 5 × 10^k not below v (v > 0).
func niceUp(v float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, s := range []float64{1, 2, 5} {
		if s*e >= v*(1-1e-9) {
			return s * e
		}
	}
	return 10 * e
}

// niceDown is the largest 1, 2 or 5 × 10^k not above v (v > 0).
func niceDown(v float64) float64 {
	e := math.Pow(10, math.Floor(math.Log10(v)))
	for _, s := range []float64{5, 2} {
		if s*e <= v*(1+1e-9) {
			return s * e
		}
	}
	return e
}

// yRange widens [lo, hi] to 1-2-5 values so the lines do not touch the frame.
func yRange(lo, hi float64) (float64, float64) {
	if lo <= 0 || hi <= 0 {
		return 0.1, 1
	}
	a, b := niceDown(lo), niceUp(hi)
	if a == b {
		a, b = niceDown(a*0.99), niceUp(b*1.01)
	}
	return a, b
}

// WriteSVG draws the chart as a standalone SVG document.
func WriteSVG(w io.Writer, c *Chart) error {
	cols := min(gridCols, max(1, len(c.Panels)))
	rows := (len(c.Panels) + cols - 1) / cols
	W := cols * panelW
	H := headerH + max(rows, 1)*panelH + 8
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="11">`+"\n", W, H, W, H)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", W, H)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="16" font-weight="bold" text-anchor="middle">%s</text>`+"\n", W/2, esc(c.Title))
	if c.Subtitle != "" {
		fmt.Fprintf(&b, `<text x="%d" y="42" fill="#555" text-anchor="middle">%s</text>`+"\n", W/2, esc(c.Subtitle))
	}
	// Legend: one entry per device, centered.
	const entryW = 170
	x0 := W/2 - len(c.Devices)*entryW/2
	b.WriteString(`<g class="legend">` + "\n")
	for i, d := range c.Devices {
		x := x0 + i*entryW
		fmt.Fprintf(&b, `<g data-legend="%s" fill="%s"><line x1="%d" y1="62" x2="%d" y2="62" stroke="%s" stroke-width="2.5"%s/>%s<text x="%d" y="66" fill="#000">%s</text></g>`+"\n",
			esc(d), c.colorOf(d), x, x+24, c.colorOf(d), dash(d), marker(c.indexOf(d), float64(x+12), 62, ""), x+30, esc(c.label(d)))
	}
	b.WriteString("</g>\n")
	for i, p := range c.Panels {
		px := (i % cols) * panelW
		py := headerH + (i/cols)*panelH
		writePanel(&b, c, p, px, py)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// dash marks scheduler series (two devices) with a dashed line.
func dash(dev string) string {
	if strings.Contains(dev, "+") {
		return ` stroke-dasharray="6 3"`
	}
	return ""
}

func writePanel(b *strings.Builder, c *Chart, p Panel, px, py int) {
	x0, y0 := float64(px+padLeft), float64(py+padTop)
	pw, ph := float64(panelW-padLeft-padRight), float64(panelH-padTop-padBot)
	fmt.Fprintf(b, `<g class="panel" data-title="%s">`+"\n", esc(p.Title))
	fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="12" font-weight="bold" text-anchor="middle">%s</text>`+"\n", x0+pw/2, py+18, esc(p.Title))
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fafafa" stroke="#999"/>`+"\n", x0, y0, pw, ph)

	// Domains.
	var xs []float64
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, l := range p.Lines {
		for _, pt := range l.Points {
			xs = append(xs, pt.X)
			ylo, yhi = math.Min(ylo, pt.Y), math.Max(yhi, pt.Y)
		}
	}
	if len(xs) > 0 {
		for _, l := range p.Lines {
			for _, sk := range l.Skipped {
				xs = append(xs, sk.X)
			}
		}
	}
	if len(xs) == 0 {
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="#777" text-anchor="middle">no results</text>`+"\n", x0+pw/2, y0+ph/2)
		for _, l := range p.Lines {
			fmt.Fprintf(b, `<g class="series" data-device="%s"></g>`+"\n", esc(l.Device))
		}
		b.WriteString("</g>\n")
		return
	}
	sort.Float64s(xs)
	xlo, xhi := xs[0], xs[len(xs)-1]
	lx := func(v float64) float64 {
		return x0 + 12 + (pw-24)*(math.Log(v)-math.Log(xlo))/(math.Log(xhi)-math.Log(xlo))
	}
	switch {
	case p.LinearX:
		if xlo == xhi {
			xlo, xhi = xlo-1, xhi+1
		}
		lx = func(v float64) float64 { return x0 + 12 + (pw-24)*(v-xlo)/(xhi-xlo) }
	case xlo == xhi:
		xlo, xhi = xlo/2, xhi*2
	}
	ylo, yhi = yRange(ylo, yhi)
	ly := func(v float64) float64 {
		return y0 + ph - ph*(math.Log(v)-math.Log(ylo))/(math.Log(yhi)-math.Log(ylo))
	}

	// Axes: x ticks at the sizes that ran or were skipped (fewer labels when crowded), y ticks 1-2-5.
	var ticks []float64
	for i, v := range xs {
		if i == 0 || v != xs[i-1] {
			ticks = append(ticks, v)
		}
	}
	every := 1 + (len(ticks)-1)/6
	b.WriteString(`<g class="x-axis" stroke="#ddd">` + "\n")
	for i, v := range ticks {
		x := lx(v)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`, x, y0, x, y0+ph)
		if i%every == 0 {
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" stroke="none" fill="#333" text-anchor="middle">%s</text>`, x, y0+ph+14, fmtCount(int64(v)))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" stroke="none" fill="#333" text-anchor="middle">%s</text>`+"\n", x0+pw/2, y0+ph+32, esc(p.XLabel))
	b.WriteString("</g>\n")
	b.WriteString(`<g class="y-axis" stroke="#ddd">` + "\n")
	for _, v := range logTicks(ylo, yhi) {
		y := ly(v)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><text x="%.1f" y="%.1f" stroke="none" fill="#333" text-anchor="end">%s</text>`+"\n",
			x0, y, x0+pw, y, x0-4, y+4, tickLabel(v))
	}
	fmt.Fprintf(b, `<text transform="translate(%d %.1f) rotate(-90)" stroke="none" fill="#333" text-anchor="middle">%s</text>`+"\n", px+14, y0+ph/2, esc(p.Unit))
	b.WriteString("</g>\n")

	// One series per device.
	for _, l := range p.Lines {
		col := c.colorOf(l.Device)
		fmt.Fprintf(b, `<g class="series" data-device="%s" stroke="%s" fill="%s">`, esc(l.Device), col, col)
		pts := append([]Point(nil), l.Points...)
		sort.Slice(pts, func(i, j int) bool { return pts[i].X < pts[j].X })
		if len(pts) > 1 {
			var ps []string
			for _, pt := range pts {
				ps = append(ps, fmt.Sprintf("%.1f,%.1f", lx(pt.X), ly(pt.Y)))
			}
			fmt.Fprintf(b, `<polyline fill="none" stroke-width="2"%s points="%s"/>`, dash(l.Device), strings.Join(ps, " "))
		}
		for _, pt := range pts {
			b.WriteString(marker(c.indexOf(l.Device), lx(pt.X), ly(pt.Y),
				esc(fmt.Sprintf("%s, %s: %s %s", l.Device, fmtCount(int64(pt.X)), sig3(pt.Y), p.Unit))))
		}
		// Sizes this device skipped: a cross just above the x axis, the reason as its tooltip.
		for _, sk := range l.Skipped {
			x, y := lx(sk.X), y0+ph-6
			fmt.Fprintf(b, `<path class="skipped" d="M%.1f %.1fl6 6m0 -6l-6 6" stroke-width="1.5" fill="none"><title>%s</title></path>`,
				x-3, y-3, esc(fmt.Sprintf("%s, %s: %s", l.Device, fmtCount(int64(sk.X)), sk.Reason)))
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</g>\n")
}
