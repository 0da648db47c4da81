package main

import (
	"fmt"
	"html"
	"io"
	"strings"
)

// WriteHTML writes a standalone page: the header and table as preformatted text, then the chart.
func WriteHTML(w io.Writer, cfg *Config, disc *Discovery, results []*Result, chart *Chart) error {
	var tb, svg strings.Builder
	WriteHeader(&tb, cfg, disc)
	fmt.Fprintln(&tb)
	if err := ResultsTable(results).Write(&tb); err != nil {
		return err
	}
	fmt.Fprintln(&tb)
	WriteSummary(&tb, Summarize(results))
	if err := WriteSVG(&svg, chart); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tandem bench</title>
<style>body{font-family:Helvetica,Arial,sans-serif;margin:2em}pre{font-size:12px;line-height:1.3}</style>
</head><body>
<h1>tandem bench</h1>
<pre>%s</pre>
%s
</body></html>
`, html.EscapeString(tb.String()), svg.String())
	return err
}
