package inspect

import (
	"slices"

	"github.com/zkit-dev/zkit/internal/layout"
)

// leaf recognises what a node without children holds (layout.Classify):
// an ephemeral node is a rendezvous, whose data is the address published;
// a persistent one whose data decodes is a counter; an empty one is a
// counter at 0 or a set barrier, which nothing tells apart.
func leaf(r *Report) {
	fits := layout.Classify(sighting(r, nil))
	switch {
	case slices.Contains(fits, layout.Rendezvous):
		r.Kind = Rendezvous
		r.Nodes = []Node{node(Holder, child{"", r.Data, r.Stat})}
		if len(r.Data) == 0 {
			r.Notes = append(r.Notes, "empty: not filled yet")
		}
	case slices.Contains(fits, layout.Barrier):
		r.Notes = append(r.Notes, "an empty node without children: a counter at 0, a set barrier (Curator's DistributedBarrier), or anything else")
	case slices.Contains(fits, layout.Counter):
		r.Kind, r.Values = Counter, values(r.Data)
	default:
		r.Notes = append(r.Notes, "no recipe's layout recognised")
	}
}

// values decodes a counter's data in every encoding it fits
// (layout.CounterValues).
func values(data []byte) []Value {
	var out []Value
	for _, v := range layout.CounterValues(data) {
		out = append(out, Value{v.Encoding, v.Value})
	}
	return out
}

// sighting is what r and its children kids show, for layout's classifier.
func sighting(r *Report, kids []child) layout.Sighting {
	s := layout.Sighting{Path: r.Path, Stat: r.Stat, Data: r.Data, Children: make([]layout.Child, len(kids))}
	for i, k := range kids {
		s.Children[i] = k.layout()
	}
	return s
}

// layout is k, for layout's classifier.
func (k child) layout() layout.Child { return layout.Child{Name: k.name, Stat: k.stat, Data: k.data} }
