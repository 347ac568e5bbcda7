package lock_test

import (
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
)

// A Lock called after the session expired on the server, before the
// client noticed (its connection is silent): the create goes out on the
// dead session; once the client learns of the expiry, the attempt holds
// under the next session, and nothing of the old one is left.
func TestLockAfterUnnoticedExpiry(t *testing.T) {
	for _, comb := range []int{0, 4} {
		t.Run(map[int]string{0: "plain", 4: "combining"}[comb], func(t *testing.T) { lockAfterUnnoticedExpiry(t, comb) })
	}
}

func lockAfterUnnoticedExpiry(t *testing.T, comb int) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		opts, cut, heal := b.Blackhole(t)
		c := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(4*time.Second)))...)
		dir := recipetest.LockDir(t, admin)
		var lopts []lock.Option
		if comb > 0 {
			lopts = append(lopts, lock.WithCombining(comb))
		}
		l := lock.New(c, dir, lopts...)
		old := c.Session()
		cut()
		b.ExpireSession(t, old)
		type res struct {
			l   *lock.Lease
			err error
		}
		out := make(chan res, 2)
		for range 2 {
			go func() {
				l, err := l.Lock(ctx)
				out <- res{l, err}
			}()
		}
		recipetest.Eventually(t, "the client is suspended", func() bool { s, _ := c.Suspended(); return s })
		heal()
		for range 2 {
			r := <-out
			if r.err != nil {
				t.Fatalf("Lock: %v", r.err)
			}
			if r.l.Session() == old || r.l.Session().ID() == old.ID() {
				t.Fatal("held under the expired session")
			}
			if err := r.l.Err(); err != nil {
				t.Fatalf("lease ended: %v", err)
			}
			if got := recipetest.Children(t, admin, dir); len(got) > 2 {
				t.Fatalf("children %v", got)
			}
			if err := r.l.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		}
		recipetest.WaitChildren(t, admin, dir, 0)
	})
}

// A Lock whose create is applied under a session and loses its reply, the
// session then expiring before the client reconnects: the node went with
// the session; the attempt holds under the next one, alone.
func TestLockCreateReplyLostWithSession(t *testing.T) {
	b := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
	admin := b.Connect(t)
	p := zktest.NewProxy(t, b.Addr())
	c := b.Connect(t, client.WithDialer(p.Dialer()), client.WithSessionTimeout(zktest.Scale(4*time.Second)))
	dir := recipetest.LockDir(t, admin)
	if err := admin.EnsurePath(ctx, dir); err != nil {
		t.Fatal(err)
	}
	old := c.Session()
	b.Reference().DropReplyAfterCommit(func(op, path string) bool {
		if (op == "multi" || strings.HasPrefix(op, "create")) && strings.HasPrefix(path, dir+"/") {
			p.Blackhole()
			return true
		}
		return false
	})
	type res struct {
		l   *lock.Lease
		err error
	}
	out := make(chan res, 1)
	go func() {
		l, err := lock.New(c, dir).Lock(ctx)
		out <- res{l, err}
	}()
	recipetest.Eventually(t, "the client is suspended", func() bool { s, _ := c.Suspended(); return s })
	if got := recipetest.Children(t, admin, dir); len(got) != 1 {
		t.Fatalf("children after the lost reply: %v", got)
	}
	b.ExpireSession(t, old)
	p.Heal()
	r := <-out
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.l.Session().ID() == old.ID() {
		t.Fatal("held under the expired session")
	}
	if got := recipetest.Children(t, admin, dir); len(got) != 1 {
		t.Fatalf("children while held: %v", got)
	}
	if err := r.l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	recipetest.WaitChildren(t, admin, dir, 0)
}

// A lease whose session the client gave up on its own clock, while the
// server still had it (its timers reset, as a restart or a leader election
// does), ended by the suspension before or by that loss: once the client
// is connected again, under its next session, the node is deleted as soon
// as it can be, not only when the server expires the old session, and the
// next waiter holds instead of waiting for a node that nobody holds.
func TestLeaseNodeOfGivenUpSession(t *testing.T) {
	for _, tolerance := range []time.Duration{0, time.Hour} {
		t.Run(tolerance.String(), func(t *testing.T) { leaseNodeOfGivenUpSession(t, tolerance) })
	}
}

func leaseNodeOfGivenUpSession(t *testing.T, tolerance time.Duration) {
	b := zktest.ReferenceBackend(t)
	ref := b.Reference()
	ctx := recipetest.Context(t)
	admin := b.Connect(t)
	dir := recipetest.LockDir(t, admin)
	timeout := zktest.Scale(4 * time.Second)
	p := zktest.NewProxy(t, b.Addr())
	c := b.Connect(t, client.WithDialer(p.Dialer()), client.WithSessionTimeout(timeout))
	held, err := lock.New(c, dir, lock.WithSuspendTolerance(tolerance)).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	next := make(chan *lock.Lease, 1)
	go func() {
		l, err := lock.New(b.Connect(t, client.WithSessionTimeout(zktest.Scale(30*time.Second))), dir).Lock(ctx)
		if err == nil {
			next <- l
		}
	}()
	recipetest.WaitChildren(t, admin, dir, 2)
	old := recipetest.GiveUpSession(t, ref, p, c, timeout, held.Done())
	p.Heal()
	if _, err := c.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-next:
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	case <-time.After(timeout / 2):
		t.Fatalf("the next waiter still waits for %s of a session the client gave up (server sessions %x, old %x)", held.Node(), ref.Sessions(), old.ID())
	}
}
