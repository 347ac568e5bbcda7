package inspect

import (
	"context"

	"github.com/zkit-dev/zkit/recipes"
)

// counterTurnKind is the shape of the turns zkit's contended counter
// writers wait in: "_c_<id>-turn-<seq>" children of the counter's node.
var counterTurnKind = recipes.Kind{Marker: "turn-", Exclusive: true}

// counterTurns recognises a counter whose writers wait in line: every
// child a turn, and data that decodes. The turns are listed as waiters,
// first in line first.
func counterTurns(_ context.Context, _ *reader, r *Report, kids []child) (bool, error) {
	byName := map[string]child{}
	names := make([]string, len(kids))
	for i, k := range kids {
		byName[k.name], names[i] = k, k.name
	}
	nodes := recipes.SortNodes(names, counterTurnKind)
	if len(nodes) != len(kids) || r.Stat.EphemeralOwner != 0 {
		return false, nil
	}
	values := values(r.Data)
	if len(values) == 0 && len(r.Data) > 0 {
		return false, nil
	}
	r.Kind, r.Values = Counter, values
	for _, n := range nodes {
		r.Nodes = append(r.Nodes, node(Waiter, byName[n.Name]))
	}
	return true, nil
}
