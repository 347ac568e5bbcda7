package membership_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/membership"
)

// A group whose node and parents do not exist yet, with the ensemble's
// leader killed while the first members create them and their nodes, then
// again while they leave: every Join and Leave succeeds (no session is
// lost), each member's node is owned by its session, and no node is left
// after Leave.
func TestFailoverWhileCreatingGroup(t *testing.T) {
	recipetest.EachFault(t, recipetest.LeaderKillsBeforeAndAfter, func(t *testing.T, e *recipetest.Ensemble, f recipetest.Fault) {
		clients := e.Clients(t, 4)
		path, parents := recipetest.UnderMissingParents(t, "group")
		members := make([]*membership.Member, len(clients))
		e.Run(t, f, len(clients), func(ctx context.Context, i int) {
			m, err := membership.New(clients[i], path).Join(ctx, fmt.Sprint("m", i), nil)
			if err != nil {
				t.Errorf("Join: %v", err)
			}
			members[i] = m
		})
		if t.Failed() {
			t.FailNow()
		}
		list, err := membership.New(clients[0], path).List(recipetest.Context(t))
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != len(clients) {
			t.Fatalf("%d members listed, want %d", len(list), len(clients))
		}
		for i, m := range list {
			if want := clients[i].Session().ID(); m.ID != fmt.Sprint("m", i) || m.Stat.EphemeralOwner != want {
				t.Errorf("member %s owned by %#x, want m%d owned by %#x", m.ID, m.Stat.EphemeralOwner, i, want)
			}
		}
		e.Run(t, f, len(members), func(ctx context.Context, i int) {
			if err := members[i].Leave(ctx); err != nil {
				t.Errorf("Leave: %v", err)
			}
		})
		recipetest.Layout{Empty: []string{path}, Persistent: parents}.Require(t, clients[0])
	})
}
