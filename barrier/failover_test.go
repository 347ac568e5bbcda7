package barrier_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/internal/recipetest"
)

// A double barrier whose directory and parents do not exist yet, with the
// ensemble's leader killed while the first members create them and their
// nodes, then again while they all leave: the barrier does not open before
// the last member enters, every Enter and Leave succeeds (no session is
// lost), and no node is left behind; the emptied directory, a container,
// goes, its parents stay, all with the barrier's ACL.
func TestFailoverWhileCreatingDirectory(t *testing.T) {
	recipetest.EachFault(t, recipetest.LeaderKillsBeforeAndAfter, func(t *testing.T, e *recipetest.Ensemble, f recipetest.Fault) {
		const count = 4
		clients := e.Clients(t, count)
		dir, parents := recipetest.UnderMissingParents(t, "barrier")
		members := make([]*barrier.Double, count)
		var entered atomic.Int32 // Enters called
		enter := func(ctx context.Context, i int) {
			members[i] = barrier.NewDouble(clients[i], dir, count, barrier.WithACL(recipetest.NoAdminACL...))
			entered.Add(1)
			if err := members[i].Enter(ctx); err != nil {
				t.Errorf("Enter: %v", err)
			} else if n := entered.Load(); n < count {
				t.Errorf("the barrier opened with %d of %d members", n, count)
			}
		}
		wait := e.Start(t, f, count-1, enter)
		// The first members wait: their nodes, and only theirs, are there.
		recipetest.WaitChildren(t, clients[0], dir, count-1)
		enter(recipetest.Context(t), count-1)
		wait()
		if t.Failed() {
			t.FailNow()
		}
		e.Run(t, f, count, func(ctx context.Context, i int) {
			if err := members[i].Leave(ctx); err != nil {
				t.Errorf("Leave: %v", err)
			}
		})
		recipetest.Layout{
			Containers: []string{dir},
			Persistent: parents,
			ACL:        recipetest.NoAdminACL,
		}.Require(t, clients[0])
	})
}
