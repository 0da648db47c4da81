package main

import (
	"fmt"
	"strconv"
	"strings"
)

// listFlag is a llama-bench list parameter: comma-separated values, and the flag may be given
// more than once (the values add up; the first use replaces the default).
type listFlag struct {
	vals []string
	set  bool
}

func newListFlag(def string) *listFlag { return &listFlag{vals: []string{def}} }

func (l *listFlag) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(l.vals, ",")
}

// Set adds a use of the flag.
func (l *listFlag) Set(s string) error {
	if !l.set {
		l.vals, l.set = nil, true
	}
	l.vals = append(l.vals, s)
	return nil
}

// maxListValues bounds what a range may expand to.
const maxListValues = 4096

// ints parses l as llama-bench does: each comma-separated item a number, or a range
// "first-last" (step 1), "first-last+step" or "first-last*mult"; every value at least lo.
func (l *listFlag) ints(flagName string, lo int) ([]int, error) {
	var out []int
	for _, use := range l.vals {
		for _, item := range strings.Split(use, ",") {
			vs, err := rangeInts(strings.TrimSpace(item))
			if err != nil {
				return nil, fmt.Errorf("bench: -%s %q: %w", flagName, use, err)
			}
			for _, v := range vs {
				if v < lo {
					return nil, fmt.Errorf("bench: -%s %q: %d is below %d", flagName, use, v, lo)
				}
			}
			if out = append(out, vs...); len(out) > maxListValues {
				return nil, fmt.Errorf("bench: -%s %q: more than %d values", flagName, use, maxListValues)
			}
		}
	}
	return out, nil
}

// rangeInts expands one item of a list: a number or a range (see listFlag.ints).
func rangeInts(item string) ([]int, error) {
	dash := strings.Index(item[min(1, len(item)):], "-") // a leading '-' is a sign
	if dash < 0 {
		v, err := strconv.Atoi(item)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number or a range (first-last, first-last+step, first-last*mult)", item)
		}
		return []int{v}, nil
	}
	dash += min(1, len(item))
	first, err := strconv.Atoi(item[:dash])
	if err != nil {
		return nil, fmt.Errorf("range %q: first value %q is not a number", item, item[:dash])
	}
	rest, op, step := item[dash+1:], byte('+'), 1
	if i := strings.IndexAny(rest, "+*"); i >= 0 {
		op = rest[i]
		if step, err = strconv.Atoi(rest[i+1:]); err != nil {
			return nil, fmt.Errorf("range %q: %q after %c is not a number", item, rest[i+1:], op)
		}
		rest = rest[:i]
	}
	last, err := strconv.Atoi(rest)
	if err != nil {
		return nil, fmt.Errorf("range %q: last value %q is not a number", item, rest)
	}
	switch {
	case last < first:
		return nil, fmt.Errorf("range %q: last value below the first", item)
	case op == '+' && step < 1:
		return nil, fmt.Errorf("range %q: step %d, want at least 1", item, step)
	case op == '*' && (step < 2 || first < 1):
		return nil, fmt.Errorf("range %q: a multiplied range needs a factor of at least 2 and a first value of at least 1", item)
	}
	var out []int
	for v := first; v <= last; {
		if out = append(out, v); len(out) > maxListValues {
			return nil, fmt.Errorf("range %q: more than %d values", item, maxListValues)
		}
		if op == '+' {
			v += step
		} else {
			v *= step
		}
	}
	return out, nil
}

// pairs parses l as -pg values: each use one "pp,tg" pair of positive lengths.
func (l *listFlag) pairs(flagName string) ([][2]int, error) {
	var out [][2]int
	for _, use := range l.vals {
		if use == "" {
			continue
		}
		f := strings.Split(use, ",")
		if len(f) != 2 {
			return nil, fmt.Errorf("bench: -%s %q: want prompt,generation lengths (512,128)", flagName, use)
		}
		var p [2]int
		for i, s := range f {
			v, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || v < 1 {
				return nil, fmt.Errorf("bench: -%s %q: %q is not a positive length", flagName, use, s)
			}
			p[i] = v
		}
		out = append(out, p)
	}
	return out, nil
}

// parseFlashAttn reads -fa as llama-bench does: on, off or auto (or 1, 0, -1).
func parseFlashAttn(s string) (int, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on", "1", "true":
		return 1, nil
	case "off", "0", "false":
		return 0, nil
	case "auto", "-1":
		return -1, nil
	}
	return 0, fmt.Errorf("bench: -fa %q: want on, off or auto (1, 0, -1)", s)
}

// parseLoadModes reads -mmp (0|1 lists) and -lm (auto|mmap|none lists) into the load modes to
// run, true for a mapped file: mapped alone when neither is given. mlock and direct I/O are
// llama-bench modes tandem has not got.
func parseLoadModes(mmp, lm *listFlag) ([]bool, error) {
	var modes []bool
	if mmp.set {
		vs, err := mmp.ints("mmp", 0)
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if v > 1 {
				return nil, fmt.Errorf("bench: -mmp %q: %d is not 0 or 1", mmp, v)
			}
			modes = append(modes, v == 1)
		}
	}
	for _, use := range lm.vals {
		for _, m := range strings.Split(use, ",") {
			switch strings.TrimSpace(m) {
			case "":
			case "auto", "mmap":
				modes = append(modes, true)
			case "none":
				modes = append(modes, false)
			default:
				return nil, fmt.Errorf("bench: -lm %q: want auto, mmap or none (tandem has no mlock or direct-I/O load)", use)
			}
		}
	}
	if len(modes) == 0 {
		modes = []bool{true}
	}
	return modes, nil
}
