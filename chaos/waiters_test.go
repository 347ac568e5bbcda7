package chaos

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// Scenario 8: 1000 lock waiters over 20 sessions, each through its own
// fault proxy, on the ensemble: they hold one at a time, in queue order
// (FIFO), and a release costs about one watch event. (lock's own test runs
// the same workload, recipetest.ManyWaiters, on a single server.)
func manyWaiters(t *testing.T, e *env) Summary {
	const sessions = 20
	waiters := pick(1000, 1000)
	admin := e.admin(t)
	var clients []*client.Client
	for i := range sessions {
		clients = append(clients, e.worker(t, i, 20*time.Second).c)
	}
	start := time.Now()
	st := recipetest.ManyWaiters(t, admin, clients, zktest.UniquePath(t)+"/lock", waiters)
	elapsed := time.Since(start)
	sum := Summary{Recipes: []string{"lock"}, Ops: 2 * st.Releases, Violations: len(st.Violations)}
	for _, v := range st.Violations[:min(5, len(st.Violations))] {
		t.Errorf("violation: %s", v)
	}
	if st.Handoff > waiters*11/10 || st.WorstPerNode > 2 {
		t.Errorf("%d handoff events for %d releases, at most %d per node: a herd", st.Handoff, waiters, st.WorstPerNode)
		sum.Violations++
	}
	sum.Held = fmt.Sprintf("FIFO and one holder at a time over %d handoffs in %v; %.2f handoff watch events per release, at most %d per node",
		st.Releases, elapsed.Round(100*time.Millisecond), float64(st.Handoff)/float64(st.Releases), st.WorstPerNode)
	return sum
}
