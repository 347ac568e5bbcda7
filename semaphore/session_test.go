package semaphore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/testing/recipetest"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// Acquire and AcquireN called after the session expired on the server,
// before the client noticed: they hold under the next session, and nothing
// of the old one is left.
func TestAcquireAfterUnnoticedExpiry(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := semPath(t, admin)
		opts, cut, heal := b.Blackhole(t)
		c := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(4*time.Second)))...)
		s := semaphore.New(c, path, 3)
		old := c.Session()
		cut()
		b.ExpireSession(t, old)
		type res struct {
			l   []*semaphore.Lease
			err error
		}
		out := make(chan res, 2)
		go func() {
			l, err := s.Acquire(ctx)
			out <- res{[]*semaphore.Lease{l}, err}
		}()
		go func() {
			l, err := s.AcquireN(ctx, 2)
			out <- res{l, err}
		}()
		recipetest.Eventually(t, "the client is suspended", func() bool { s, _ := c.Suspended(); return s })
		heal()
		var all []*semaphore.Lease
		for range 2 {
			r := <-out
			if r.err != nil {
				t.Fatal(r.err)
			}
			all = append(all, r.l...)
		}
		for _, l := range all {
			if l.Session().ID() == old.ID() || l.Err() != nil {
				t.Fatalf("lease on 0x%x (old 0x%x): %v", l.Session().ID(), old.ID(), l.Err())
			}
		}
		if got := recipetest.Children(t, admin, path+"/leases"); len(got) != 3 {
			t.Fatalf("leases: %v", got)
		}
		for _, l := range all {
			if err := l.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		}
		recipetest.WaitChildren(t, admin, path+"/leases", 0)
		recipetest.WaitChildren(t, admin, path+"/locks", 0)
	})
}

// The Multi that creates an attempt's lease node and releases its mutex
// is applied and loses its reply, and the session expires before the
// client reconnects: the attempt fails with ErrLost (its mutex node went
// with the session) and nothing of it is left.
func TestCreateReplyLostWithSession(t *testing.T) {
	b := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
	admin := b.Connect(t)
	path := semPath(t, admin)
	p := zktest.NewProxy(t, b.Addr())
	c := b.Connect(t, client.WithDialer(p.Dialer()), client.WithSessionTimeout(zktest.Scale(4*time.Second)))
	if err := admin.EnsurePath(ctx, path+"/leases"); err != nil {
		t.Fatal(err)
	}
	old := c.Session()
	b.Reference().DropReplyAfterCommit(func(op, path string) bool {
		if op == "multi" && strings.Contains(path, "/leases/") {
			p.Blackhole()
			return true
		}
		return false
	})
	out := make(chan error, 1)
	go func() {
		l, err := semaphore.New(c, path, 2).Acquire(ctx)
		if err == nil {
			t.Errorf("acquired %s on 0x%x", l.Node(), l.Session().ID())
		}
		out <- err
	}()
	recipetest.Eventually(t, "the client is suspended", func() bool { s, _ := c.Suspended(); return s })
	if got := recipetest.Children(t, admin, path+"/leases"); len(got) != 1 {
		t.Fatalf("leases after the lost reply: %v", got)
	}
	b.ExpireSession(t, old)
	p.Heal()
	if err := <-out; !errors.Is(err, semaphore.ErrLost) || !errors.Is(err, client.ErrSessionLost) {
		t.Fatalf("Acquire: %v, want ErrLost", err)
	}
	recipetest.WaitChildren(t, admin, path+"/leases", 0)
	recipetest.WaitChildren(t, admin, path+"/locks", 0)
	l, err := semaphore.New(c, path, 2).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
