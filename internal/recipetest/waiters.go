package recipetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/lock"
)

// WaiterStats is what ManyWaiters saw.
type WaiterStats struct {
	Releases int // the waiters, each of which held and released once
	// Watch events: Handoff on a client other than the releaser's (the
	// next waiter waking), Own on the releaser's own node, WorstPerNode
	// the most any one node fired. A herd shows as many events per
	// release.
	Handoff, Own, WorstPerNode int
	// Violations: two holders at once, or a holder whose token is not
	// higher than the previous holder's (out of queue order: the waiters
	// all queued before the first release, so FIFO means increasing
	// tokens).
	Violations []string
}

// ManyWaiters queues waiters lock attempts on dir, round robin over
// clients, behind a lock that admin holds, then releases it: every waiter
// must get the lock once, one at a time, in queue order. It fails the test
// on any error and returns what it saw; the caller judges the figures.
func ManyWaiters(t *testing.T, admin *client.Client, clients []*client.Client, dir string, waiters int) WaiterStats {
	t.Helper()
	ctx := Context(t)
	if err := admin.EnsurePath(ctx, dir); err != nil {
		t.Fatal(err)
	}
	// Hold the lock while the waiters queue up, so that all of them wait.
	first, err := lock.New(admin, dir).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type tally struct {
		mu     sync.Mutex
		mine   map[string]bool // nodes created through this client
		events []client.Event
	}
	var (
		order   Exclusion
		wg      sync.WaitGroup
		tallies = make([]*tally, len(clients))
		locks   = make([]*lock.Lock, len(clients))
	)
	for s, c := range clients {
		tl := &tally{mine: map[string]bool{}}
		tallies[s] = tl
		locks[s] = lock.New(c, dir)
		sub := c.Subscribe()
		go func() {
			for ev := range sub.Events() {
				if ev.State == client.StateNone && ev.Type != client.EventNone {
					tl.mu.Lock()
					tl.events = append(tl.events, ev)
					tl.mu.Unlock()
				}
			}
		}()
		t.Cleanup(sub.Close)
	}
	// Round robin over the clients, so that most handoffs go from one
	// session to another.
	for i := range waiters {
		tl, l := tallies[i%len(clients)], locks[i%len(clients)]
		wg.Go(func() {
			lease, err := l.Lock(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			tl.mu.Lock()
			tl.mine[lease.Node()] = true
			tl.mu.Unlock()
			order.Enter(lease.Token())
			order.Leave()
			if err := lease.Unlock(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	WaitChildren(t, admin, dir, waiters+1)
	if err := first.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	WaitChildren(t, admin, dir, 0)

	st := WaiterStats{Releases: waiters, Violations: order.Violations()}
	perPath := map[string]int{}
	for _, tl := range tallies {
		tl.mu.Lock()
		for _, ev := range tl.events {
			perPath[ev.Path]++
			if tl.mine[ev.Path] {
				st.Own++
			} else {
				st.Handoff++
			}
		}
		tl.mu.Unlock()
	}
	for _, n := range perPath {
		st.WorstPerNode = max(st.WorstPerNode, n)
	}
	return st
}

// Exclusion is what a lock protects, in tests: it counts holders that
// overlap, and holders whose fencing token is not higher than the previous
// holder's. It is safe for concurrent use.
type Exclusion struct {
	mu         sync.Mutex
	last       int64
	inside     int
	violations []string
}

// Enter is a holder with token entering its critical section.
func (x *Exclusion) Enter(token int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.inside++
	if x.inside > 1 {
		x.violations = append(x.violations, fmt.Sprintf("%d holders at once", x.inside))
	}
	if token <= x.last {
		x.violations = append(x.violations, fmt.Sprintf("token %d after %d", token, x.last))
	}
	x.last = token
}

// Leave is the holder leaving its critical section.
func (x *Exclusion) Leave() {
	x.mu.Lock()
	x.inside--
	x.mu.Unlock()
}

// Violations lists what went wrong so far.
func (x *Exclusion) Violations() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]string(nil), x.violations...)
}
