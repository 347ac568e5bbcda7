package lock_test

import (
	"sync"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
)

// A thousand waiters, each its own attempt, on a handful of sessions: all
// of them get the lock, one at a time, and a release wakes one waiter, not
// all of them.
func TestThousandWaiters(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const sessions, waiters = 8, 1000
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		dir := recipetest.LockDir(t, admin)
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
		var res fencedResource
		var wg sync.WaitGroup
		tallies := make([]*tally, sessions)
		locks := make([]*lock.Lock, sessions)
		for s := range sessions {
			c := b.Connect(t)
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
		// Round robin over the sessions, so that most handoffs go from one
		// session to another.
		for i := range waiters {
			tl, l := tallies[i%sessions], locks[i%sessions]
			wg.Add(1)
			go func() {
				defer wg.Done()
				lease, err := l.Lock(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				tl.mu.Lock()
				tl.mine[lease.Node()] = true
				tl.mu.Unlock()
				res.enter(lease.Token())
				res.leave()
				if err := lease.Unlock(ctx); err != nil {
					t.Error(err)
				}
			}()
		}
		recipetest.WaitChildren(t, admin, dir, waiters+1)
		if err := first.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if len(res.violations) > 0 {
			t.Fatalf("mutual exclusion violated: %v", res.violations[:min(5, len(res.violations))])
		}
		recipetest.WaitChildren(t, admin, dir, 0)

		// Count the watch events: a release should wake the next waiter
		// (a handoff event, on a client other than the releaser's) and
		// fire the releaser's own watch on its node. A herd would show as
		// many events per release.
		var handoff, own int
		perPath := map[string]int{}
		for _, tl := range tallies {
			tl.mu.Lock()
			for _, ev := range tl.events {
				perPath[ev.Path]++
				if tl.mine[ev.Path] {
					own++
				} else {
					handoff++
				}
			}
			tl.mu.Unlock()
		}
		worst := 0
		for _, n := range perPath {
			worst = max(worst, n)
		}
		t.Logf("%d releases: %d handoff events, %d on the releaser's own node, at most %d per node",
			waiters, handoff, own, worst)
		if handoff > waiters*11/10 {
			t.Errorf("%d handoff events for %d releases: want about one per release", handoff, waiters)
		}
		if own > waiters {
			t.Errorf("%d events on own nodes for %d releases", own, waiters)
		}
		if worst > 2 {
			t.Errorf("a node fired %d watch events: herd", worst)
		}
	})
}
