package chaos

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Scenario 9: a watch storm and membership churn with a server killed in
// the middle. Watchers (recipes.Follow, the loop every zkit observer is
// built on) follow a node that writers update thousands of times and a
// directory whose ephemeral members join and leave; the leader is killed
// and restarted meanwhile. Every watcher must end on the final state.
func watchStorm(t *testing.T, e *env) Summary {
	var (
		watchers = pick(100, 500)
		updates  = pick(2000, 10000)
		members  = pick(100, 500)
		clients  = pick(10, 20)
	)
	admin := e.admin(t)
	ctx := testContext(t, 5*time.Minute)
	base := zktest.UniquePath(t)
	value, dir := base+"/value", base+"/members"
	if err := admin.EnsurePath(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Create(ctx, value, nil, client.Persistent); err != nil {
		t.Fatal(err)
	}
	var ws []*worker
	for i := range clients {
		ws = append(ws, e.worker(t, i, 10*time.Second))
	}
	fctx, stopFollowing := context.WithCancel(ctx)
	defer stopFollowing()
	var fs []*follower[string]
	for i := range watchers {
		c := ws[i%len(ws)].c
		if i%2 == 0 {
			fs = append(fs, follow(fctx, c, func(ctx context.Context) (string, <-chan client.WatchEvent, error) {
				d, _, ch, err := c.GetW(ctx, value)
				return string(d), ch, err
			}))
		} else {
			fs = append(fs, follow(fctx, c, func(ctx context.Context) (string, <-chan client.WatchEvent, error) {
				names, _, ch, err := c.ChildrenW(ctx, dir)
				slices.Sort(names)
				return strings.Join(names, ","), ch, err
			}))
		}
	}
	waitFor(t, 60*time.Second, "every watcher has a first value", func() bool {
		for _, f := range fs {
			if !f.got() {
				return false
			}
		}
		return true
	})

	// A tree cache of the whole storm beside them, on the admin's session.
	tree, err := cache.OpenTree(ctx, e.admin(t), base)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()

	// Writers and churners, on the same clients as the watchers.
	var done atomic.Int64
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Go(func() {
			for k := i; k < updates; k += len(ws) {
				retry(ctx, func() error { _, err := w.c.Set(ctx, value, fmt.Appendf(nil, "%d", k), -1); return err })
				done.Add(1)
			}
		})
		wg.Go(func() {
			for k := i; k < members; k += len(ws) {
				name := fmt.Sprintf("%s/m-%04d", dir, k)
				retry(ctx, func() error {
					_, err := w.c.Create(ctx, name, nil, client.Ephemeral)
					if errors.Is(err, client.ErrNodeExists) {
						return nil
					}
					return err
				})
				if k%3 == 0 { // churn: a third leave again
					retry(ctx, func() error {
						err := w.c.Delete(ctx, name, -1)
						if errors.Is(err, client.ErrNoNode) {
							return nil
						}
						return err
					})
				}
			}
		})
	}
	sum := Summary{Recipes: []string{"follow (observers)", "cache", "ephemeral members"}}
	waitFor(t, 60*time.Second, "a third of the updates", func() bool { return done.Load() >= int64(updates/3) })
	leader, err := e.z.Leader()
	if err != nil {
		t.Fatal(err)
	}
	e.z.Kill(leader)
	sum.Faults++
	time.Sleep(zktest.Scale(time.Second))
	e.z.Restart(leader)
	wg.Wait()

	// The final state, read after a sync, and every watcher on it.
	finished := time.Now()
	if err := admin.Sync(ctx, base); err != nil {
		t.Fatal(err)
	}
	d, _, err := admin.Get(ctx, value)
	if err != nil {
		t.Fatal(err)
	}
	names := children(t, admin, dir)
	slices.Sort(names)
	want := []string{string(d), strings.Join(names, ",")}
	deadline := time.Now().Add(zktest.Scale(60 * time.Second))
	for i, f := range fs {
		for f.last() != want[i%2] && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if f.last() != want[i%2] {
			sum.Violations++
		}
	}
	if sum.Violations > 0 {
		t.Errorf("%d of %d watchers did not end on the final state", sum.Violations, watchers)
	}
	// The cache, read at the final state's zxid: the value and the members.
	snap, err := tree.WaitFor(ctx, admin.LastZxid())
	if err != nil {
		t.Fatalf("cache: %v", err)
	}
	var cached []string
	for _, p := range snap.Paths() {
		if parent, name := client.SplitPath(p); parent == dir {
			cached = append(cached, name)
		}
	}
	if v, ok := snap.Get(value); !ok || string(v.Data) != want[0] || strings.Join(cached, ",") != want[1] {
		sum.Violations++
		t.Errorf("the tree cache did not end on the final state: value %q, %d members, want %q and %d", v.Data, len(cached), want[0], len(names))
	}
	sum.Recovery = time.Since(finished)
	sum.Ops = updates + members + members/3
	sum.Held = fmt.Sprintf("%d watchers over %d sessions, %d updates, %d members joined and %d left: every watcher and a tree cache ended on the final state",
		watchers, clients, updates, members, (members+2)/3)
	return sum
}

// retry calls fn until it succeeds or ctx ends, pausing briefly after
// each failure (connection loss while a server restarts). fn must be
// idempotent.
func retry(ctx context.Context, fn func() error) {
	for ctx.Err() == nil {
		if fn() == nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}
