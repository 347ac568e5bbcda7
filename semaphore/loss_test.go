package semaphore_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// A lease ends when its session expires, like a lock's: Done closes with
// a cause matching ErrLost and client.ErrSessionLost, its fenced writes
// are refused, and the next waiter gets the lease with a higher token.
func TestHolderExpiry(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := semPath(t, admin)
		// Tolerant of suspension, so that the cause is the expiry itself,
		// not the disconnection that comes with it.
		doomed := b.Connect(t)
		old, err := semaphore.New(doomed, path, 2, semaphore.WithSuspendTolerance(time.Hour)).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		other, err := semaphore.New(b.Connect(t), path, 2).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		next := acquireN(ctx, semaphore.New(b.Connect(t), path, 2), 1)
		waitNodes(t, admin, path, 2, 1)
		pending(t, next, "an acquire with both leases held")

		b.ExpireSession(t, old.Session())
		recipetest.Within(t, old.Done(), "the expired holder's Done")
		if !errors.Is(old.Err(), semaphore.ErrLost) || !client.IsSessionLost(old.Err()) {
			t.Fatalf("lease ended with %v, want ErrLost and a lost session", old.Err())
		}
		l := got(t, next)
		if l[0].Token() <= old.Token() {
			t.Fatalf("next token %d after %d", l[0].Token(), old.Token())
		}
		if _, err := old.Multi(ctx, client.SetOp(path, nil, -1)); !errors.Is(err, semaphore.ErrLost) {
			t.Fatalf("fenced write of the expired holder: %v, want ErrLost", err)
		}
		if _, err := admin.Multi(ctx, old.Guard(), client.SetOp(path, nil, -1)); err == nil {
			t.Fatal("the expired holder's guard passed on the server")
		}
		if err := old.Unlock(ctx); !errors.Is(err, semaphore.ErrLost) {
			t.Fatalf("Unlock after the loss: %v, want ErrLost", err)
		}
		unlock(t, other, l[0])
		waitNodes(t, admin, path, 0, 0)

		// A waiter whose session expires while it waits for a lease (it
		// holds the mutex) has lost only its place: the mutex goes to the
		// next, and it queues again behind, under its next session.
		hold, err := semaphore.New(admin, path, 1).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		waiter := b.Connect(t)
		waiting := make(chan struct{})
		front := acquireN(ctx, semaphore.New(waiter, path, 1, semaphore.WithLogger(slog.New(onMessage{
			msg: "zkit: semaphore: holding its mutex, waiting for a lease", ch: waiting, once: new(sync.Once)}))), 1)
		// It holds the mutex and waits for a lease (it says so in its
		// log). Expired any earlier, while it creates its node, it would
		// join again under its next session, as every acquire does.
		recipetest.Within(t, waiting, "the waiter to hold the mutex and wait for a lease")
		waitNodes(t, admin, path, 1, 1)
		behind := acquireN(ctx, semaphore.New(b.Connect(t), path, 1), 1)
		waitNodes(t, admin, path, 1, 2)
		expired := waiter.Session()
		b.ExpireSession(t, expired)
		recipetest.Eventually(t, "the waiter queued again under its next session", func() bool {
			pending(t, front, "an acquire whose session expired while it waited")
			sess := waiter.Session()
			return sess != nil && sess.ID() != expired.ID() && len(recipetest.Children(t, admin, path+"/locks")) == 2
		})
		unlock(t, hold)
		unlock(t, got(t, behind)...)
		again := got(t, front)
		if again[0].Session().ID() == expired.ID() {
			t.Fatal("held under the expired session")
		}
		unlock(t, again...)
		waitNodes(t, admin, path, 0, 0)
	})
}

// The Multi that creates the lease node (and releases the mutex) is
// applied but its reply is lost: the attempt finds its node by its
// protection id and holds it; exactly one lease node results, and the
// mutex is free.
func TestLostCreateReply(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := semPath(t, admin)
		if err := admin.EnsurePath(ctx, path+"/leases"); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 3} {
			p := zktest.NewProxy(t, b.Addr())
			p.CutAfterNextMultiCreate(path + "/leases/")
			c := b.Connect(t, client.WithDialer(p.Dialer()))
			sub := c.Subscribe()
			leases, err := semaphore.New(c, path, 3).AcquireN(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			if !recipetest.WaitEventFor(t, sub, zktest.Scale(5*time.Second), func(ev client.Event) bool {
				return ev.State == client.StateSuspended
			}) {
				t.Fatal("the reply was never cut")
			}
			sub.Close()
			got := recipetest.Children(t, admin, path+"/leases")
			if len(got) != n {
				t.Fatalf("after a lost reply: lease nodes %v, want %d", got, n)
			}
			for _, l := range leases {
				if !slices.Contains(got, strings.TrimPrefix(l.Node(), path+"/leases/")) || l.Err() != nil {
					t.Fatalf("lease %s (%v) not among %v", l.Node(), l.Err(), got)
				}
			}
			waitNodes(t, admin, path, n, 0)
			unlock(t, leases...)
			waitNodes(t, admin, path, 0, 0)
		}
	})
}

// A suspended connection ends a lease at once by default (ErrSuspended)
// and its node is deleted once the client is back, so the next waiter
// gets in; a tolerant lease lives through it.
func TestSuspension(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := semPath(t, admin)
		opts, cut, heal := b.Blackhole(t)
		c := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(4*time.Second)))...)
		strict, err := semaphore.New(c, path, 2).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tolerant, err := semaphore.New(c, path, 2, semaphore.WithSuspendTolerance(time.Hour)).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		next := acquireN(ctx, semaphore.New(admin, path, 2), 1)
		waitNodes(t, admin, path, 2, 1)
		cut()
		recipetest.Within(t, strict.Done(), "the strict lease's end")
		if !errors.Is(strict.Err(), semaphore.ErrSuspended) || !errors.Is(strict.Err(), semaphore.ErrLost) {
			t.Fatalf("strict lease ended with %v, want ErrSuspended", strict.Err())
		}
		pending(t, next, "an acquire while the suspended lease's node is still there")
		heal()
		l := got(t, next) // the strict lease's node was deleted once reconnected
		if err := tolerant.Err(); err != nil {
			t.Fatalf("the tolerant lease ended: %v", err)
		}
		unlock(t, tolerant, l[0])
		waitNodes(t, admin, path, 0, 0)
	})
}

// Someone else deleting a lease node ends that lease (ErrNodeDeleted).
func TestNodeDeleted(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := semPath(t, c)
		l, err := semaphore.New(c, path, 1).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Connect(t).Delete(ctx, l.Node(), -1); err != nil {
			t.Fatal(err)
		}
		recipetest.Within(t, l.Done(), "the lease's end")
		if !errors.Is(l.Err(), semaphore.ErrNodeDeleted) {
			t.Fatalf("lease ended with %v, want ErrNodeDeleted", l.Err())
		}
		next, err := semaphore.New(c, path, 1).Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		unlock(t, next)
	})
}

// onMessage is a slog handler that closes ch at the first record whose
// message is msg.
type onMessage struct {
	msg  string
	ch   chan struct{}
	once *sync.Once
}

func (h onMessage) Enabled(context.Context, slog.Level) bool { return true }

func (h onMessage) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.ch) })
	}
	return nil
}

func (h onMessage) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h onMessage) WithGroup(string) slog.Handler      { return h }
