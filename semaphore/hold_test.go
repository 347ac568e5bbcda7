package semaphore

import (
	"errors"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// The count after the create is what bounds the holders whatever other
// processes do (see attempt.hold): lease nodes created without the mutex
// are counted if they came before the attempt's own (and not if they came
// after), an attempt that finds more than Max gives its node back, and
// other children are not leases. The attempts here skip the mutex, as a
// participant that does not take it would.
func TestHoldCountsTheLeasesCreatedBefore(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		s := New(c, zktest.UniquePath(t)+"/sem", 1)
		if err := c.EnsurePath(ctx, s.leases); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Create(ctx, s.leases+"/readme", nil, client.Persistent); err != nil {
			t.Fatal(err)
		}
		create := func() string {
			t.Helper()
			p, err := c.CreateProtected(ctx, client.JoinPath(s.leases, leaseKind.Marker), nil, client.EphemeralSequential)
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		first, second := create(), create()
		holdsOnlyTheFirst(t, s, first, second)
		recipetest.WaitChildren(t, c, s.leases, 1)
	})
}

// holdsOnlyTheFirst checks, with Max 1 and no mutex, that an attempt with
// the lease node first holds, and that one with second, created after
// first, gives its node back (errRecount); then it releases first.
func holdsOnlyTheFirst(t *testing.T, s *Semaphore, first, second string) {
	t.Helper()
	ctx, c := recipetest.Context(t), s.c
	held, err := (&attempt{s: s, sess: c.Session(), n: 1}).hold(ctx, []string{first})
	if err != nil {
		t.Fatalf("the first of two lease nodes, Max 1: %v", err)
	}
	if _, err := (&attempt{s: s, sess: c.Session(), n: 1}).hold(ctx, []string{second}); !errors.Is(err, errRecount) {
		t.Fatalf("the second of two lease nodes, Max 1: %v, want errRecount", err)
	}
	if ok, _, err := c.Exists(ctx, second); err != nil || ok {
		t.Fatalf("the node given back is still there (%v)", err)
	}
	if err := held[0].Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Once the leases directory's counter has wrapped ("-2147483648" comes
// right after "2147483647"), the count still takes every lease node
// created before the attempt's own: the ones from before the wrap too.
// (The wrapped node is created by name here: wrapping the counter takes
// 2^31 creates.)
func TestHoldCountsTheLeasesCreatedBeforeTheWrap(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		s := New(c, zktest.UniquePath(t)+"/sem", 1)
		if err := c.EnsurePath(ctx, s.leases); err != nil {
			t.Fatal(err)
		}
		before, err := c.CreateProtected(ctx, client.JoinPath(s.leases, leaseKind.Marker), nil, client.EphemeralSequential)
		if err != nil {
			t.Fatal(err)
		}
		wrapped := client.JoinPath(s.leases, "_c_0f8b2f0e-7a2c-4d2e-9c1e-3b1c2d3e4f50-"+leaseKind.Marker+"-2147483648")
		if _, err := c.Create(ctx, wrapped, nil, client.Ephemeral); err != nil {
			t.Fatal(err)
		}
		holdsOnlyTheFirst(t, s, before, wrapped)
		recipetest.WaitChildren(t, c, s.leases, 0)
	})
}

// A lease node created under the client's next session (the attempt's
// session was lost between its check and the create) is not held, and is
// deleted under the session that owns it: left, it would take a lease for
// as long as that session lives.
func TestHoldGivesBackANodeOfTheNextSession(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		s := New(c, zktest.UniquePath(t)+"/sem", 1)
		if err := c.EnsurePath(ctx, s.leases); err != nil {
			t.Fatal(err)
		}
		lost := c.Session()
		b.ExpireSession(t, lost)
		recipetest.Within(t, lost.Done(), "the client's loss of its session")
		if _, err := c.WaitConnected(ctx); err != nil {
			t.Fatal(err)
		}
		p, err := c.CreateProtected(ctx, client.JoinPath(s.leases, leaseKind.Marker), nil, client.EphemeralSequential)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := (&attempt{s: s, sess: lost, n: 1}).hold(ctx, []string{p}); !errors.Is(err, ErrLost) {
			t.Fatalf("a lease node of the next session: %v, want ErrLost", err)
		}
		recipetest.WaitChildren(t, c, s.leases, 0)
	})
}
