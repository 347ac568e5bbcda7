package barrier_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

func TestSimpleBarrier(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := zktest.UniquePath(t) + "/a/b/gate"
		gate := barrier.New(c, path)
		if err := gate.Wait(ctx); err != nil {
			t.Fatalf("Wait on a barrier that is not set: %v", err)
		}
		for range 2 { // setting twice is setting once
			if err := gate.Set(ctx); err != nil {
				t.Fatal(err)
			}
		}
		const waiters = 3
		done := make(chan error, waiters)
		for range waiters {
			w := barrier.New(b.Connect(t), path)
			go func() { done <- w.Wait(ctx) }()
		}
		quiet(t, done, "Wait returned while the barrier was set")
		tctx, cancel := context.WithTimeout(ctx, zktest.Scale(100*time.Millisecond))
		defer cancel()
		if err := gate.Wait(tctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait with a deadline returned %v, want context.DeadlineExceeded", err)
		}
		for range 2 {
			if err := gate.Remove(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for range waiters {
			if err := recv(t, done, "the waiters"); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A waiter told of the removal goes, even if the barrier is set again
// before it can look.
func TestSimpleBarrierRemovedAndSetAgain(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := zktest.UniquePath(t)
		gate := barrier.New(c, path)
		if err := gate.Set(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- barrier.New(b.Connect(t), path).Wait(ctx) }()
		quiet(t, done, "Wait returned while the barrier was set")
		if _, err := c.Multi(ctx, client.DeleteOp(path, -1), client.CreateOp(path, nil, client.Persistent)); err != nil {
			t.Fatal(err)
		}
		if err := recv(t, done, "Wait"); err != nil {
			t.Fatal(err)
		}
	})
}

// A waiter outlives its session: the barrier belongs to no session, and
// it goes on waiting under the client's next one.
func TestSimpleBarrierWaiterSessionExpiry(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := zktest.UniquePath(t)
		gate := barrier.New(c, path)
		if err := gate.Set(ctx); err != nil {
			t.Fatal(err)
		}
		wc := b.Connect(t)
		done := make(chan error, 1)
		go func() { done <- barrier.New(wc, path).Wait(ctx) }()
		quiet(t, done, "Wait returned while the barrier was set")
		sess := wc.Session()
		b.ExpireSession(t, sess)
		recipetest.Within(t, sess.Done(), "the waiter's session loss")
		quiet(t, done, "Wait returned after its session expired, with the barrier set")
		if err := gate.Remove(ctx); err != nil {
			t.Fatal(err)
		}
		if err := recv(t, done, "Wait"); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSimpleBarrierLostCreateReply(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		dir := zktest.UniquePath(t)
		if err := admin.EnsurePath(ctx, dir); err != nil {
			t.Fatal(err)
		}
		gate := barrier.New(b.Connect(t, b.CutNextCreate(t, dir)...), dir+"/gate")
		if err := gate.Set(ctx); err != nil {
			t.Fatal(err)
		}
		if got := recipetest.Children(t, admin, dir); len(got) != 1 || got[0] != "gate" {
			t.Fatalf("after a lost create reply: %v", got)
		}
	})
}

// The nodes a barrier creates get the caller's ACL, missing parents
// included, for a simple barrier as for a double one.
func TestACL(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t, client.WithDigestAuth("zkit", "secret"))
		acl := client.DigestACL(client.PermAll, "zkit", "secret")
		path := barrierPath(t, c)
		if err := barrier.New(c, path+"-gates/gate", barrier.WithACL(acl...)).Set(ctx); err != nil {
			t.Fatal(err)
		}
		d := barrier.NewDouble(c, path+"-doubles/d", 1, barrier.WithACL(acl...))
		if err := d.Enter(ctx); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path + "-gates", path + "-gates/gate", path + "-doubles", path + "-doubles/d", path + "-doubles/d/ready", d.Node()} {
			got, _, err := c.GetACL(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Scheme != "digest" {
				t.Errorf("%s has ACL %v, want %v", p, got, acl)
			}
		}
		if err := d.Leave(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
