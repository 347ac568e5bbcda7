package lock_test

import (
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// A thousand waiters, each its own attempt, on a handful of sessions: all
// of them get the lock, one at a time and in queue order, and a release
// wakes one waiter, not all of them.
func TestThousandWaiters(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const sessions, waiters = 8, 1000
		admin := b.Connect(t)
		var clients []*client.Client
		for range sessions {
			clients = append(clients, b.Connect(t))
		}
		st := recipetest.ManyWaiters(t, admin, clients, recipetest.LockDir(t, admin), waiters)
		if len(st.Violations) > 0 {
			t.Fatalf("mutual exclusion or order violated: %v", st.Violations[:min(5, len(st.Violations))])
		}
		t.Logf("%d releases: %d handoff events, %d on the releaser's own node, at most %d per node",
			st.Releases, st.Handoff, st.Own, st.WorstPerNode)
		if st.Handoff > waiters*11/10 {
			t.Errorf("%d handoff events for %d releases: want about one per release", st.Handoff, waiters)
		}
		if st.Own > waiters {
			t.Errorf("%d events on own nodes for %d releases", st.Own, waiters)
		}
		if st.WorstPerNode > 2 {
			t.Errorf("a node fired %d watch events: herd", st.WorstPerNode)
		}
	})
}
