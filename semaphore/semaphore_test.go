package semaphore_test

import (
	"context"
	"errors"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// Never more than N holders: 32 contenders on 8 sessions, N = 4, each
// taking and releasing leases (one or two at a time) with a short hold, a
// checker counting the holders. Every lease's fenced write through Multi
// is applied; no node is left.
func TestNeverMoreThanMax(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const sessions, perSession, rounds, n = 8, 4, 6, 4
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := semPath(t, admin)
		h := &holders{max: n}
		work := path + "-work"
		if _, err := admin.Create(ctx, work, nil, client.Persistent); err != nil {
			t.Fatal(err)
		}
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			writes int
		)
		for s := range sessions {
			c := b.Connect(t)
			for g := range perSession {
				sem := semaphore.New(c, path, n)
				want := 1 + (s*perSession+g)%2 // half of them take two leases at once
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range rounds {
						leases, err := sem.AcquireN(ctx, want)
						if err != nil {
							t.Error(err)
							return
						}
						h.enter(len(leases))
						for _, l := range leases {
							if _, err := l.Multi(ctx, client.SetOp(work, nil, -1)); err != nil {
								t.Errorf("fenced write of a held lease: %v", err)
							}
						}
						mu.Lock()
						writes += len(leases)
						mu.Unlock()
						time.Sleep(time.Millisecond) // the work, long enough for holders to overlap
						h.leave(len(leases))
						for _, l := range leases {
							if err := l.Unlock(ctx); err != nil {
								t.Error(err)
							}
						}
					}
				}()
			}
		}
		wg.Wait()
		h.check(t)
		t.Logf("%d leases held, at most %d at once", writes, h.most)
		waitNodes(t, admin, path, 0, 0)
	})
}

// N leases are held at once, and the next attempt waits for one of them.
// Nodes are Curator's: "<path>/leases/_c_<uuid>-lease-<seq>" with tokens
// from their czxids.
func TestMaxHoldersAtOnce(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := semPath(t, c)
		var held []*semaphore.Lease
		for i := range 3 {
			l, err := semaphore.New(b.Connect(t), path, 3, semaphore.WithData([]byte("me"))).Acquire(ctx)
			if err != nil {
				t.Fatalf("lease %d of 3: %v", i+1, err)
			}
			held = append(held, l)
		}
		node := regexp.MustCompile(`^` + regexp.QuoteMeta(path) + `/leases/_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lease-[0-9]{10}$`)
		for i, l := range held {
			if !node.MatchString(l.Node()) {
				t.Errorf("lease node %q is not <path>/leases/_c_<uuid>-lease-<seq>", l.Node())
			}
			data, st, err := c.Get(ctx, l.Node())
			if err != nil || string(data) != "me" || recipes.TokenOf(st.Czxid) != l.Token() || st.EphemeralOwner != l.Session().ID() {
				t.Fatalf("lease node: %q %+v %v; token %d", data, st, err, l.Token())
			}
			if i > 0 && l.Token() <= held[i-1].Token() {
				t.Errorf("token %d after %d", l.Token(), held[i-1].Token())
			}
		}
		if _, err := semaphore.New(c, path, 3).TryAcquire(ctx); !errors.Is(err, semaphore.ErrNoLease) {
			t.Fatalf("TryAcquire with every lease held: %v, want ErrNoLease", err)
		}
		next := acquireN(ctx, semaphore.New(b.Connect(t), path, 3), 1)
		waitNodes(t, c, path, 3, 1) // it waits holding the mutex, with no lease node
		pending(t, next, "the fourth acquire")
		unlock(t, held[1])
		l := got(t, next)
		if l[0].Token() <= held[2].Token() {
			t.Errorf("token %d after %d", l[0].Token(), held[2].Token())
		}
		unlock(t, append(l, held[0], held[2])...)
		waitNodes(t, c, path, 0, 0)
		l2, err := semaphore.New(c, path, 3).TryAcquire(ctx)
		if err != nil {
			t.Fatalf("TryAcquire with every lease free: %v", err)
		}
		unlock(t, l2)
	})
}

// AcquireN is all or nothing: it takes no lease while it waits for more,
// and two callers that each want most of the leases take turns instead of
// holding part each and waiting for each other.
func TestAcquireNAllOrNothing(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := semPath(t, c)
		first, err := semaphore.New(c, path, 4).AcquireN(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(first) != 2 || first[0].Node() == first[1].Node() {
			t.Fatalf("AcquireN(2) gave %d leases: %v", len(first), first)
		}
		three := acquireN(ctx, semaphore.New(b.Connect(t), path, 4), 3)
		waitNodes(t, c, path, 2, 1) // waiting: nothing taken
		alsoThree := acquireN(ctx, semaphore.New(b.Connect(t), path, 4), 3)
		waitNodes(t, c, path, 2, 2)
		pending(t, three, "AcquireN(3) with 2 of 4 free")

		unlock(t, first[0])
		got3 := got(t, three)
		if len(got3) != 3 {
			t.Fatalf("AcquireN(3) gave %d leases", len(got3))
		}
		waitNodes(t, c, path, 4, 1)
		pending(t, alsoThree, "the second AcquireN(3)")
		unlock(t, first[1])
		waitNodes(t, c, path, 3, 1) // one free: still not enough
		pending(t, alsoThree, "the second AcquireN(3)")
		unlock(t, got3...)
		unlock(t, got(t, alsoThree)...)
		waitNodes(t, c, path, 0, 0)

		// n = Max takes the whole semaphore.
		all, err := semaphore.New(c, path, 4).AcquireN(ctx, 4)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := semaphore.New(c, path, 4).TryAcquire(ctx); !errors.Is(err, semaphore.ErrNoLease) {
			t.Fatalf("TryAcquire with all four held: %v", err)
		}
		unlock(t, all...)
	})
}

// A closed client: an acquire fails with client.ErrClosed, and the leases
// it held end with a cause matching it.
func TestClosedClient(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := semPath(t, c)
		l, err := semaphore.New(c, path, 2).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		recipetest.Within(t, l.Done(), "the lease's end")
		if !errors.Is(l.Err(), client.ErrClosed) || !errors.Is(l.Err(), semaphore.ErrLost) {
			t.Fatalf("lease ended with %v, want ErrLost and client.ErrClosed", l.Err())
		}
		if _, err := semaphore.New(c, path, 2).Acquire(ctx); !errors.Is(err, client.ErrClosed) {
			t.Fatalf("acquire on a closed client: %v", err)
		}
	})
}

// Cancellation and deadlines: an attempt waiting for a lease (holding the
// mutex) and one waiting for the mutex give up and leave no node.
func TestCancelAndTimeout(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := semPath(t, c)
		holder, err := semaphore.New(c, path, 1).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithCancel(ctx)
		front := acquireN(wctx, semaphore.New(b.Connect(t), path, 1), 1)
		waitNodes(t, c, path, 1, 1)

		tctx, cancelT := context.WithTimeout(ctx, zktest.Scale(300*time.Millisecond))
		defer cancelT()
		_, err = semaphore.New(b.Connect(t), path, 1).Acquire(tctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("acquire behind a waiter, past its deadline: %v", err)
		}
		waitNodes(t, c, path, 1, 1)

		cancel()
		if a := <-front; !errors.Is(a.err, context.Canceled) {
			t.Fatalf("cancelled acquire: %v", a.err)
		}
		waitNodes(t, c, path, 1, 0)

		tctx2, cancelT2 := context.WithTimeout(ctx, zktest.Scale(300*time.Millisecond))
		defer cancelT2()
		if _, err := semaphore.New(b.Connect(t), path, 1).AcquireN(tctx2, 1); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("AcquireN past its deadline: %v", err)
		}
		waitNodes(t, c, path, 1, 0)
		unlock(t, holder)
		waitNodes(t, c, path, 0, 0)
	})
}
