package core

import (
	"fmt"
	"io"
	"strings"
)

// WriteDot writes the graph in Graphviz DOT: nodes as boxes labelled with name, op, type and shape;
// leafs as ellipses; edges from each source to its user, labelled with the source slot. A nil g
// returns ErrNilGraph; a nil w is an error.
func (g *Graph) WriteDot(w io.Writer) error {
	if g == nil {
		return ErrNilGraph
	}
	if w == nil {
		return fmt.Errorf("tandem: WriteDot: nil writer")
	}
	var b strings.Builder
	b.WriteString("digraph tandem {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n")
	ids := map[*Tensor]string{}
	id := func(t *Tensor) string {
		if s, ok := ids[t]; ok {
			return s
		}
		s := fmt.Sprintf("t%d", len(ids))
		ids[t] = s
		return s
	}
	shape := func(t *Tensor) string {
		return fmt.Sprintf("[%d,%d,%d,%d]", t.Ne[0], t.Ne[1], t.Ne[2], t.Ne[3])
	}
	label := func(t *Tensor) string {
		op := t.Op.String()
		switch t.Op {
		case OpUnary:
			op = UnaryOp(t.Params[0]).String()
		case OpGLU:
			op = GLUOp(t.Params[0]).String()
		}
		name := t.Name
		if name == "" {
			name = "-"
		}
		return escapeDot(fmt.Sprintf("%s | %s | %v %s", name, op, t.Type, shape(t)))
	}
	for _, l := range g.leafs {
		fmt.Fprintf(&b, "  %s [shape=ellipse, style=filled, fillcolor=\"#e8f0fe\", label=\"%s\"];\n", id(l), escapeDot(
			fmt.Sprintf("%s\\n%v %s", orDash(l.Name), l.Type, shape(l))))
	}
	for i, n := range g.nodes {
		color := "#ffffff"
		if n.Flags&FlagOutput != 0 {
			color = "#fde68a"
		} else if n.Op.IsView() {
			color = "#eeeeee"
		}
		fmt.Fprintf(&b, "  %s [shape=record, style=filled, fillcolor=\"%s\", label=\"{#%d | %s}\"];\n", id(n), color, i, label(n))
	}
	for _, n := range g.nodes {
		for j, s := range n.Src {
			if s == nil {
				continue
			}
			if _, ok := ids[s]; !ok {
				fmt.Fprintf(&b, "  %s [shape=ellipse, style=dashed, label=\"%s\"];\n", id(s), escapeDot(orDash(s.Name)+"\\n"+shape(s)))
			}
			fmt.Fprintf(&b, "  %s -> %s [label=\"src%d\"];\n", ids[s], ids[n], j)
		}
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func escapeDot(s string) string {
	r := strings.NewReplacer(`"`, `\"`, "<", `\<`, ">", `\>`, "{", `\{`, "}", `\}`)
	return r.Replace(s)
}
