package semaphore_test

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// Close of the client while an AcquireN waits for room (holding the
// mutex) and while another waits for the mutex: both return promptly with
// client.ErrClosed, leave no node and no goroutine.
func TestCloseWhileWaiting(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := semPath(t, admin)
		held, err := semaphore.New(admin, path, 3).AcquireN(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		base := runtime.NumGoroutine()
		c := b.Connect(t)
		s := semaphore.New(c, path, 3)
		front := acquireN(ctx, s, 2)
		waitNodes(t, admin, path, 2, 1)
		behind := acquireN(ctx, s, 1)
		waitNodes(t, admin, path, 2, 2)
		c.Close()
		for _, ch := range []<-chan acquired{front, behind} {
			select {
			case a := <-ch:
				if !errors.Is(a.err, client.ErrClosed) || a.leases != nil {
					t.Fatalf("acquire after Close: %d leases, %v; want client.ErrClosed", len(a.leases), a.err)
				}
			case <-time.After(zktest.Scale(5 * time.Second)):
				t.Fatal("acquire did not return after Close")
			}
		}
		waitNodes(t, admin, path, 2, 0)
		recipetest.WaitGoroutines(t, base)
		unlock(t, held...)
	})
}

// A session expiry ends every lease of an AcquireN at once, and frees
// them all.
func TestAcquireNExpiry(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := semPath(t, admin)
		doomed := b.Connect(t)
		ls, err := semaphore.New(doomed, path, 3, semaphore.WithSuspendTolerance(time.Hour)).AcquireN(ctx, 3)
		if err != nil {
			t.Fatal(err)
		}
		next := acquireN(ctx, semaphore.New(b.Connect(t), path, 3), 3)
		waitNodes(t, admin, path, 3, 1)
		// Release one of them first: the others stay held.
		unlock(t, ls[1])
		select {
		case <-ls[0].Done():
			t.Fatal("unlocking one lease ended another")
		default:
		}
		pending(t, next, "AcquireN(3) with 2 held")
		b.ExpireSession(t, doomed.Session())
		for i, l := range []*semaphore.Lease{ls[0], ls[2]} {
			recipetest.Within(t, l.Done(), "the lease's end")
			if !errors.Is(l.Err(), semaphore.ErrLost) {
				t.Fatalf("lease %d ended with %v", i, l.Err())
			}
		}
		unlock(t, got(t, next)...)
		waitNodes(t, admin, path, 0, 0)
	})
}

// TryAcquire on a full semaphore, and behind a waiter: ErrNoLease, no node.
func TestTryFull(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := semPath(t, admin)
		s := semaphore.New(admin, path, 2)
		all, err := s.AcquireN(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if l, err := s.TryAcquire(ctx); !errors.Is(err, semaphore.ErrNoLease) || l != nil {
			t.Fatalf("TryAcquire on a full semaphore: %v", err)
		}
		waitNodes(t, admin, path, 2, 0)
		unlock(t, all[0])
		w := acquireN(ctx, semaphore.New(b.Connect(t), path, 2), 2)
		waitNodes(t, admin, path, 1, 1)
		if _, err := s.TryAcquire(ctx); !errors.Is(err, semaphore.ErrNoLease) {
			t.Fatalf("TryAcquire behind a waiter: %v", err)
		}
		waitNodes(t, admin, path, 1, 1)
		unlock(t, all[1])
		unlock(t, got(t, w)...)
		waitNodes(t, admin, path, 0, 0)
		l, err := s.TryAcquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		unlock(t, l)
	})
}

// Closing the client while an acquire has each of its requests in flight
// in turn ends the acquire with client.ErrClosed, whatever it saw of the
// Close meanwhile: its mutex and lease nodes going with the closing
// session are its own Close, not a deletion by someone else nor a lost
// session. An acquire that returned its lease just before the Close sees
// the lease end with client.ErrClosed too. No node is left.
func TestCloseDuringAcquire(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		t.Parallel()
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := semPath(t, admin)
		for k := 1; ; k++ {
			proxy := zktest.NewProxy(t, b.Addr())
			proxy.SetLatency(zktest.Scale(5 * time.Millisecond))
			c := b.Connect(t, client.WithDialer(proxy.Dialer()))
			sent := proxy.Requests()
			done := acquireN(ctx, semaphore.New(c, path, 1), 1)
			var a acquired
			recipetest.Eventually(t, fmt.Sprintf("request %d of the acquire sent, or the acquire done", k), func() bool {
				select {
				case a = <-done:
					return true
				default:
					return proxy.Requests()-sent >= int64(k)
				}
			})
			c.Close()
			if a.leases == nil && a.err == nil {
				a = <-done
			}
			switch {
			case a.err != nil && !errors.Is(a.err, client.ErrClosed):
				t.Fatalf("closed with request %d in flight: %v, want client.ErrClosed", k, a.err)
			case a.err == nil:
				recipetest.Within(t, a.leases[0].Done(), "the lease's end after Close")
				if err := a.leases[0].Err(); !errors.Is(err, client.ErrClosed) || !errors.Is(err, semaphore.ErrLost) {
					t.Fatalf("closed with request %d in flight: the lease ended with %v, want client.ErrClosed", k, err)
				}
			}
			waitNodes(t, admin, path, 0, 0)
			if a.err == nil {
				t.Logf("closed with each of the acquire's %d requests in flight", k-1)
				return // done before its k-th request: each one was covered
			}
		}
	})
}
