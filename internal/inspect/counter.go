package inspect

import (
	"context"

	"github.com/zkit-dev/zkit/recipes"
)

// counterDeltas recognises a counter whose writers left deltas for each
// other to apply: every child a delta, and data that decodes. The deltas
// are listed as waiters, oldest first.
func counterDeltas(_ context.Context, _ *reader, r *Report, kids []child) (bool, error) {
	names, byName := index(kids)
	nodes := recipes.SortNodes(names, recipes.CounterAddKind)
	if len(nodes) != len(kids) || r.Stat.EphemeralOwner != 0 {
		return false, nil
	}
	vals := values(r.Data)
	if len(vals) == 0 && len(r.Data) > 0 {
		return false, nil
	}
	r.Kind, r.Values = Counter, vals
	for _, n := range nodes {
		r.Nodes = append(r.Nodes, node(Waiter, byName[n.Name]))
	}
	return true, nil
}
