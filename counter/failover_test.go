package counter_test

import (
	"context"
	"testing"

	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/internal/recipetest"
)

// A counter whose node and parents do not exist yet, with the ensemble's
// leader killed while the first Adds create them: every Add succeeds or
// reports an unknown outcome, no value is returned twice, the total lies
// between the acknowledged and those plus the unknown, and the node has
// the counter's ACL.
func TestFailoverWhileCreating(t *testing.T) {
	recipetest.EachFault(t, recipetest.LeaderKills, func(t *testing.T, e *recipetest.Ensemble, f recipetest.Fault) {
		const each = 3
		clients := e.Clients(t, 6)
		path, parents := recipetest.UnderMissingParents(t, "count")
		var ty tally
		e.Run(t, f, len(clients), func(ctx context.Context, i int) {
			k := counter.New(clients[i], path, counter.WithACL(recipetest.NoAdminACL...))
			for range each {
				ty.add(k.Add(ctx, 1))
			}
		})
		final, err := counter.New(clients[0], path).Get(recipetest.Context(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ty.other {
			t.Errorf("Add failed: %v", e)
		}
		ty.check(t, final)
		// Parents created on the way get the client's default ACL.
		recipetest.Layout{Persistent: []string{path}, ACL: recipetest.NoAdminACL}.Require(t, clients[0])
		recipetest.Layout{Persistent: parents}.Require(t, clients[0])
	})
}
