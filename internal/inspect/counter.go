package inspect

import (
	"context"

	"github.com/zkit-dev/zkit/recipes"
)

// counterTurns recognises a counter whose writers wait in line: every
// child a turn, and data that decodes. The turns are listed as waiters,
// first in line first.
func counterTurns(_ context.Context, _ *reader, r *Report, kids []child) (bool, error) {
	names, byName := index(kids)
	nodes := recipes.SortNodes(names, recipes.CounterTurnKind)
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
