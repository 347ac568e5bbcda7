package inspect

import (
	"context"

	"github.com/zkit-dev/zkit/internal/layout"
	"github.com/zkit-dev/zkit/recipes"
)

// deltaKind orders a counter's deltas, oldest first (layout.DeltaMarker).
var deltaKind = recipes.Kind{Marker: layout.DeltaMarker, Recipe: layout.Counter.Name}

// counterDeltas recognises a counter whose writers left deltas for each
// other to apply (layout.Counter): every child a delta, and data that
// decodes. The deltas are listed as waiters, oldest first.
func counterDeltas(_ context.Context, _ *reader, r *Report, kids []child) (bool, error) {
	if !layout.Counter.Fits(sighting(r, kids)) {
		return false, nil
	}
	names, byName := index(kids)
	r.Kind, r.Values = Counter, values(r.Data)
	for _, n := range recipes.SortNodes(names, deltaKind) {
		r.Nodes = append(r.Nodes, node(Waiter, byName[n.Name]))
	}
	return true, nil
}
