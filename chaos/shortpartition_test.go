package chaos

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// Scenario 4: a client is partitioned from the whole ensemble for less
// than its session timeout, while it holds locks, leads an election, waits
// for a lock, starts another attempt, and follows a node, a directory and
// another election's leader that change meanwhile. It keeps its session;
// a lease and a term with a suspend tolerance longer than the partition
// are still held; the attempt started in the partition leaves exactly one
// node; the lock released meanwhile is acquired; and every follower ends
// on the final state.
func shortPartition(t *testing.T, e *env) Summary {
	const timeout = 8 * time.Second
	admin := e.admin(t)
	prog := NewProgress()
	sum := Summary{}
	var loads []*lockLoad
	followed := 0
	for round := range pick(1, 5) {
		ctx := testContext(t, 2*time.Minute)
		v := e.worker(t, 2*round, timeout)
		o := e.worker(t, 2*round+1, 10*time.Second)
		tolerant := newLockLoad(t, admin, "lock-tolerant", []*worker{v}, 0, NewHistory(), prog)
		tolerant.acquire = func(ctx context.Context, w *worker, _ bool) (lease, error) {
			return asLease(lock.New(w.c, tolerant.dir, lock.WithSuspendTolerance(zktest.Scale(timeout))).Lock(ctx))
		}
		strict := newLockLoad(t, admin, "rwlock-strict", []*worker{v}, 0, NewHistory(), prog)
		waited := newLockLoad(t, admin, "rwlock-waited", []*worker{v, o}, 0, NewHistory(), prog)
		late := newLockLoad(t, admin, "lock-late", []*worker{v}, 0, NewHistory(), prog)
		leading := newLockLoad(t, admin, "election-tolerant", []*worker{v}, 0, NewHistory(), prog)
		leading.acquire = func(ctx context.Context, w *worker, _ bool) (lease, error) {
			term, err := election.New(w.c, leading.dir, "victim", election.WithSuspendTolerance(zktest.Scale(timeout))).Campaign(ctx)
			if err != nil {
				return nil, err
			}
			return termLease{term}, nil
		}
		observed := newLockLoad(t, admin, "election-observed", []*worker{o}, 0, NewHistory(), prog)
		loads = append(loads, tolerant, strict, waited, late, leading, observed)

		kept := mustTake(t, ctx, tolerant, v, false)
		led := mustTake(t, ctx, leading, v, false)
		before := mustTake(t, ctx, observed, o, false)
		dropped := mustTake(t, ctx, strict, v, false)
		reader := mustTake(t, ctx, waited, o, true)
		writer := make(chan *held, 1)
		go func() { writer <- takeOrNil(t, ctx, waited, v, false) }()
		waitFor(t, 20*time.Second, "the victim queues", func() bool { return len(children(t, admin, waited.dir)) == 2 })

		// Followers on the victim's client, of a node and a directory the
		// other client changes during the partition.
		base := zktest.UniquePath(t) + fmt.Sprintf("/followed-%d", round)
		if err := admin.EnsurePath(ctx, base+"/dir"); err != nil {
			t.Fatal(err)
		}
		// The victim may sit on a server that has not applied that yet:
		// a follower that starts on a missing node stops.
		if err := v.c.Sync(ctx, base+"/dir"); err != nil {
			t.Fatal(err)
		}
		value := follow(ctx, v.c, func(ctx context.Context) (string, <-chan client.WatchEvent, error) {
			d, _, ch, err := v.c.GetW(ctx, base)
			return string(d), ch, err
		})
		members := follow(ctx, v.c, func(ctx context.Context) (string, <-chan client.WatchEvent, error) {
			names, _, ch, err := v.c.ChildrenW(ctx, base+"/dir")
			slices.Sort(names)
			return strings.Join(names, ","), ch, err
		})
		leader := latest(election.New(v.c, observed.dir, "").Observe(ctx), nil)
		waitFor(t, 20*time.Second, "the followers start", func() bool {
			return value.got() && members.got() && leader.last().Token == before.lease.Token()
		})

		start := time.Now()
		v.r.Blackhole()
		sum.Faults++
		// A new attempt whose create is lost in the partition.
		lateCh := make(chan *held, 1)
		go func() { lateCh <- takeOrNil(t, ctx, late, v, false) }()
		// The other client releases the lock the victim waits for, and
		// changes what it follows: the observed election's leader resigns
		// and another candidate leads.
		reader.release()
		before.release()
		after := mustTake(t, ctx, observed, o, false)
		var want []string
		for i := range 20 {
			if _, err := admin.Set(ctx, base, []byte(strconv.Itoa(i)), -1); err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("m%02d", i)
			if _, err := admin.Create(ctx, base+"/dir/"+name, nil, client.Persistent); err != nil {
				t.Fatal(err)
			}
			if i%3 == 0 {
				if err := admin.Delete(ctx, base+"/dir/"+name, -1); err != nil {
					t.Fatal(err)
				}
			} else {
				want = append(want, name)
			}
		}
		time.Sleep(time.Until(start.Add(zktest.Scale(timeout) * 2 / 5)))
		healed := prog.Now()
		v.r.Heal()

		// Everything the victim was doing completes, on the same session.
		wh := waitHeld(t, writer, "the victim's write lock, released during the partition")
		lh := waitHeld(t, lateCh, "the victim's attempt started in the partition")
		waitFor(t, 20*time.Second, "the followers end on the final state", func() bool {
			return value.last() == "19" && members.last() == strings.Join(want, ",") && leader.last().Token == after.lease.Token()
		})
		prog.Done("recovered")
		sum.Recovery = max(sum.Recovery, time.Duration(prog.Now()-healed))
		followed += 3
		if !v.sessionKept() {
			t.Errorf("the victim lost its session in a partition shorter than its timeout")
			sum.Violations++
		}
		for _, l := range []*lockLoad{waited, late} {
			if n := len(children(t, admin, l.dir)); n != 1 {
				t.Errorf("%s: %d nodes once the victim holds, want 1 (no duplicate)", l.name, n)
				sum.Violations++
			}
		}
		for _, hd := range []*held{kept, led} {
			if err := hd.lease.Err(); err != nil {
				t.Errorf("%s: a lease tolerating %v of suspension was lost in a shorter partition: %v", hd.l.name, timeout, err)
				sum.Violations++
			} else if _, st, err := syncedGet(ctx, admin, hd.lease.Node()); err != nil || st.EphemeralOwner != v.first.ID() {
				t.Errorf("%s: the kept lease's node: %v", hd.l.name, err)
				sum.Violations++
			}
		}
		select {
		case <-dropped.lease.Done(): // zkit's default: lost once suspended
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Errorf("a lease with no suspend tolerance survived a suspension")
			sum.Violations++
		}
		waitFor(t, 20*time.Second, "the dropped lease's node is deleted", func() bool { return len(children(t, admin, strict.dir)) == 0 })
		for _, hd := range []*held{kept, led, dropped, wh, lh, after} {
			hd.release()
		}
	}
	for _, l := range loads {
		sum.Ops += l.h.Len()
		sum.Violations += checkHistory(t, l.name, l.h, l.model)
	}
	sum.Recipes = []string{"lock", "rwlock", "election", "follow"}
	sum.Held = fmt.Sprintf("session kept; no duplicate node; lease and term with tolerance kept, lease without it ended and deleted; waiter woke after the partition; %d followers (node, directory, leader) ended on the final state", followed)
	return sum
}

func mustTake(t *testing.T, ctx context.Context, l *lockLoad, w *worker, shared bool) *held {
	t.Helper()
	hd, err := l.take(ctx, w, shared)
	if err != nil {
		t.Fatalf("%s: %v", l.name, err)
	}
	return hd
}

func takeOrNil(t *testing.T, ctx context.Context, l *lockLoad, w *worker, shared bool) *held {
	hd, err := l.take(ctx, w, shared)
	if err != nil {
		t.Errorf("%s: %v", l.name, err)
	}
	return hd
}

func waitHeld(t *testing.T, ch <-chan *held, what string) *held {
	t.Helper()
	select {
	case hd := <-ch:
		if hd == nil {
			t.FailNow()
		}
		return hd
	case <-time.After(zktest.Scale(30 * time.Second)):
		t.Fatalf("timed out waiting for %s", what)
	}
	return nil
}

// follower keeps the last value of a feed.
type follower[T any] struct {
	mu    sync.Mutex
	value T
	n     int // values received
}

// follow follows what read reads with recipes.Follow, on c.
func follow(ctx context.Context, c *client.Client, read recipes.ReadFunc[string]) *follower[string] {
	return latest(recipes.Follow(ctx, c, read, func(a, b string) bool { return a == b }), nil)
}

// latest keeps the last value of feed, calling each (when not nil) with
// every value as it arrives.
func latest[T any](feed *recipes.Feed[T], each func(T)) *follower[T] {
	f := &follower[T]{}
	go func() {
		for v := range feed.Values() {
			if each != nil {
				each(v)
			}
			f.mu.Lock()
			f.value = v
			f.n++
			f.mu.Unlock()
		}
	}()
	return f
}

func (f *follower[T]) last() T {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.value
}

func (f *follower[T]) got() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n > 0
}
