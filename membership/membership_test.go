package membership_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/membership"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// Members join, update and leave; List and Watch show each step.
func TestJoinUpdateLeave(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := groupPath(t, admin)
		feed := membership.New(b.Connect(t), path).Watch(ctx)
		awaitSnapshot(t, feed, show, "")

		c1, c2 := b.Connect(t), b.Connect(t)
		m1, err := membership.New(c1, path).Join(ctx, "b-1", []byte("10.0.0.1"))
		if err != nil {
			t.Fatal(err)
		}
		m2, err := membership.New(c2, path).Join(ctx, "a-2", []byte("10.0.0.2"))
		if err != nil {
			t.Fatal(err)
		}
		if m1.Err() != nil || m2.Err() != nil {
			t.Fatalf("joined members not present: %v, %v", m1.Err(), m2.Err())
		}
		awaitSnapshot(t, feed, show, "a-2=10.0.0.2,b-1=10.0.0.1")
		eventuallyList(t, admin, path, "a-2=10.0.0.2,b-1=10.0.0.1")
		got, err := membership.New(admin, path).List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Stat.EphemeralOwner != c2.Session().ID() || got[1].Stat.EphemeralOwner != c1.Session().ID() {
			t.Fatal("member nodes are not owned by their members' sessions")
		}

		if err := m1.Update(ctx, []byte("10.0.0.9")); err != nil {
			t.Fatal(err)
		}
		awaitSnapshot(t, feed, show, "a-2=10.0.0.2,b-1=10.0.0.9")
		if m1.Err() != nil {
			t.Fatalf("own update ended the presence: %v", m1.Err())
		}

		if err := m2.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		recipetest.Within(t, m2.Done(), "Done after Leave")
		if !errors.Is(m2.Err(), recipes.ErrReleased) {
			t.Fatalf("Err after Leave = %v", m2.Err())
		}
		awaitSnapshot(t, feed, show, "b-1=10.0.0.9")
		if err := m2.Leave(ctx); err != nil {
			t.Fatalf("second Leave: %v", err)
		}
		if _, err := m2.Present(ctx); !errors.Is(err, recipes.ErrReleased) {
			t.Fatalf("Present after Leave = %v", err)
		}
		// Closing the client ends the other membership.
		c1.Close()
		recipetest.Within(t, m1.Done(), "Done after Close")
		if _, err := m1.Present(ctx); !errors.Is(err, client.ErrClosed) {
			t.Fatalf("Present after Close = %v", err)
		}
		awaitSnapshot(t, feed, show, "")
	})
}

// A second process claiming an id is a conflict, and the first keeps it.
func TestConflictingJoin(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := groupPath(t, admin)
		fc := b.Connect(t)
		first, err := membership.New(fc, path).Join(ctx, "w", []byte("first"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = membership.New(b.Connect(t), path).Join(ctx, "w", []byte("second"))
		var ce *membership.ConflictError
		if !errors.As(err, &ce) || !errors.Is(err, membership.ErrConflict) {
			t.Fatalf("second Join = %v, want a *ConflictError", err)
		}
		if ce.Owner != first.Presence().Session().ID() {
			t.Fatalf("conflict names owner 0x%x, want 0x%x", ce.Owner, first.Presence().Session().ID())
		}
		// The same id twice on one client (one session) too.
		if _, err := membership.New(fc, path).Join(ctx, "w", []byte("again")); !errors.Is(err, membership.ErrConflict) {
			t.Fatalf("second Join on the same client = %v, want ErrConflict", err)
		}
		eventuallyList(t, admin, path, "w=first")
		if first.Err() != nil {
			t.Fatalf("first member disturbed: %v", first.Err())
		}
		// A persistent node in the way is a conflict too.
		if _, err := admin.Create(ctx, path+"/p", []byte("static"), client.Persistent); err != nil {
			t.Fatal(err)
		}
		if _, err := membership.New(b.Connect(t), path).Join(ctx, "p", nil); !errors.Is(err, membership.ErrConflict) {
			t.Fatalf("Join over a persistent node = %v, want ErrConflict", err)
		}
	})
}

// A member whose node another process writes to stops with a conflict and
// deletes its own node, leaving the id to the other claimant.
func TestForeignWriteIsConflict(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := groupPath(t, admin)
		m, err := membership.New(b.Connect(t), path).Join(ctx, "w", []byte("mine"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Set(ctx, m.Node(), []byte("theirs"), -1); err != nil {
			t.Fatal(err)
		}
		recipetest.Within(t, m.Done(), "Done after a foreign write")
		if !errors.Is(m.Err(), membership.ErrConflict) {
			t.Fatalf("Err = %v, want ErrConflict", m.Err())
		}
		if _, err := m.Present(ctx); !errors.Is(err, membership.ErrConflict) {
			t.Fatalf("Present = %v, want ErrConflict", err)
		}
		eventuallyList(t, admin, path, "")
		if err := m.Update(ctx, []byte("again")); !errors.Is(err, membership.ErrConflict) {
			t.Fatalf("Update after the conflict = %v", err)
		}
		if err := m.Leave(ctx); !errors.Is(err, membership.ErrConflict) {
			t.Fatalf("Leave after the conflict = %v", err)
		}
	})
}

// After the session expires the member is not present (Done), then is
// present again under the new session with the data of an Update made in
// between.
func TestSessionExpiryRecreates(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := groupPath(t, admin)
		c := b.Connect(t)
		m, err := membership.New(c, path, membership.WithSuspendTolerance(time.Hour)).Join(ctx, "w", []byte("v1"))
		if err != nil {
			t.Fatal(err)
		}
		before := m.Presence()
		done := m.Done()
		b.ExpireSession(t, before.Session())
		recipetest.Within(t, done, "Done after the session expired")
		if err := before.Err(); !errors.Is(err, recipes.ErrLost) || !errors.Is(err, client.ErrSessionLost) {
			t.Fatalf("presence ended with %v, want session lost", err)
		}
		if err := m.Update(ctx, []byte("v2")); err != nil {
			t.Fatalf("Update between presences: %v", err)
		}
		p, err := m.Present(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p == before || p.Session().ID() == before.Session().ID() || p.Token() <= before.Token() {
			t.Fatalf("new presence: session 0x%x token %d, old 0x%x token %d",
				p.Session().ID(), p.Token(), before.Session().ID(), before.Token())
		}
		eventuallyList(t, admin, path, "w=v2")
		got, err := membership.New(admin, path).List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got[0].Stat.EphemeralOwner != c.Session().ID() {
			t.Fatal("the re-created node is not owned by the new session")
		}
		if err := m.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		eventuallyList(t, admin, path, "")
	})
}

// Disconnected beyond the tolerance, the member is not present (no stale
// self), a tolerant one once its tolerance has run out; back on the same
// session, it adopts its node again without re-creating it, and writes
// into it the data of an Update made while it was not present.
func TestSuspensionEndsPresence(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin, path, c, cut, heal := cuttable(t, b)
		m, err := membership.New(c, path).Join(ctx, "strict", nil)
		if err != nil {
			t.Fatal(err)
		}
		tolerant, err := membership.New(c, path, membership.WithSuspendTolerance(time.Hour)).Join(ctx, "tolerant", nil)
		if err != nil {
			t.Fatal(err)
		}
		brief, err := membership.New(c, path, membership.WithSuspendTolerance(zktest.Scale(200*time.Millisecond))).Join(ctx, "brief", nil)
		if err != nil {
			t.Fatal(err)
		}
		before := m.Presence()
		cut()
		recipetest.Within(t, before.Done(), "Done after the connection was suspended")
		if !errors.Is(before.Err(), recipes.ErrSuspended) || m.Err() == nil {
			t.Fatalf("presence ended with %v (member Err %v), want ErrSuspended", before.Err(), m.Err())
		}
		recipetest.Within(t, brief.Done(), "Done after the connection was suspended beyond the tolerance")
		if !errors.Is(brief.Err(), recipes.ErrSuspended) {
			t.Fatalf("the briefly tolerant member's presence ended with %v, want ErrSuspended", brief.Err())
		}
		if err := m.Update(ctx, []byte("v2")); err != nil {
			t.Fatalf("Update while not present: %v", err)
		}
		if tolerant.Err() != nil {
			t.Fatalf("the tolerant member's presence ended: %v", tolerant.Err())
		}
		heal()
		p, err := m.Present(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p == before || p.Token() != before.Token() || p.Session() != before.Session() {
			t.Fatal("after the reconnect the node was not adopted as it was")
		}
		if tolerant.Presence().Err() != nil {
			t.Fatalf("the tolerant member's presence ended: %v", tolerant.Err())
		}
		if _, err := brief.Present(ctx); err != nil {
			t.Fatal(err)
		}
		eventuallyList(t, admin, path, "brief=,strict=v2,tolerant=")
	})
}

// A foreign write made while the member was suspended is a conflict once
// the member is back, as one made while it is present: the member does
// not write its own data over it, and leaves the name to the writer.
func TestForeignWriteWhileSuspendedIsConflict(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin, path, c, cut, heal := cuttable(t, b)
		m, err := membership.New(c, path).Join(ctx, "w", []byte("mine"))
		if err != nil {
			t.Fatal(err)
		}
		before := m.Presence()
		cut()
		recipetest.Within(t, before.Done(), "Done after the connection was suspended")
		if _, err := admin.Set(ctx, m.Node(), []byte("theirs"), -1); err != nil {
			t.Fatal(err)
		}
		heal()
		if _, err := m.Present(ctx); !errors.Is(err, membership.ErrConflict) {
			t.Fatalf("Present after the foreign write = %v, want ErrConflict", err)
		}
		eventuallyList(t, admin, path, "")
	})
}

// Someone deleting a member's node ends its presence; the member is
// created again.
func TestDeletedNodeRecreated(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := groupPath(t, admin)
		m, err := membership.New(b.Connect(t), path).Join(ctx, "w", []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		before := m.Presence()
		if err := admin.Delete(ctx, m.Node(), -1); err != nil {
			t.Fatal(err)
		}
		recipetest.Within(t, before.Done(), "Done after the node was deleted")
		if !errors.Is(before.Err(), recipes.ErrNodeDeleted) {
			t.Fatalf("presence ended with %v", before.Err())
		}
		p, err := m.Present(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if p.Token() <= before.Token() {
			t.Fatal("not created again")
		}
		eventuallyList(t, admin, path, "w=x")
	})
}

// A create whose reply is lost leaves one node, adopted as the member's.
func TestLostCreateReply(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := groupPath(t, admin)
		if err := admin.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		c := b.Connect(t, b.CutNextCreate(t, path)...)
		m, err := membership.New(c, path).Join(ctx, "w", []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.Present(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := membership.New(admin, path).List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if show(got) != "w=x" || got[0].Stat.EphemeralOwner != p.Session().ID() {
			t.Fatalf("after a lost create reply: %q", show(got))
		}
		if err := m.Leave(ctx); err != nil {
			t.Fatal(err)
		}
		eventuallyList(t, admin, path, "")
	})
}

// A Join cancelled before it is done leaves nothing behind.
func TestCancelledJoin(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		admin := b.Connect(t)
		path := groupPath(t, admin)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := membership.New(b.Connect(t), path).Join(ctx, "w", nil); !errors.Is(err, context.Canceled) {
			t.Fatalf("Join with a cancelled context = %v", err)
		}
		eventuallyList(t, admin, path, "")
	})
}

// Bad input is a typed error before anything is sent.
func TestBadInput(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		base := zktest.UniquePath(t)
		cases := []struct{ path, id string }{
			{base, ""}, {base, "a/b"}, {base, "."}, {base, ".."}, {base, "bad\x00id"},
			{"", "w"}, {"relative", "w"}, {base + "/", "w"}, {base + "//x", "w"},
			{"/", "w"}, // a group needs a node of its own
		}
		for _, tc := range cases {
			_, err := membership.New(c, tc.path).Join(ctx, tc.id, nil)
			var ie *client.InputError
			if !errors.As(err, &ie) || !errors.Is(err, client.ErrInvalidInput) {
				t.Errorf("Join(%q, %q) = %v, want an *client.InputError", tc.path, tc.id, err)
			}
		}
		if _, err := membership.New(c, base).Join(ctx, "big", make([]byte, client.DefaultMaxBuffer)); !errors.Is(err, client.ErrInvalidInput) {
			t.Errorf("Join with oversized data = %v", err)
		}
		for _, p := range []string{"relative", "/"} {
			if _, err := membership.New(c, p).List(ctx); !errors.Is(err, client.ErrInvalidInput) {
				t.Errorf("List(%q) = %v", p, err)
			}
			feed := membership.New(c, p).Watch(ctx)
			for range feed.Values() {
				t.Errorf("a snapshot for the invalid path %q", p)
			}
			if !errors.Is(feed.Err(), client.ErrInvalidInput) {
				t.Errorf("Watch(%q) ended with %v", p, feed.Err())
			}
		}
		if ok, _, err := c.Exists(ctx, base); err != nil || ok {
			t.Fatalf("something was created under %s (exists=%v, err=%v)", base, ok, err)
		}
		m, err := membership.New(c, base).Join(ctx, "ok", nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Update(ctx, make([]byte, client.DefaultMaxBuffer)); !errors.Is(err, client.ErrInvalidInput) {
			t.Errorf("Update with oversized data = %v", err)
		}
		if !c.Session().Alive() || m.Err() != nil {
			t.Fatal("bad input cost the session or the membership")
		}
	})
}

// cuttable returns a client to watch with, a new group's path and a
// client whose link to the server the test can cut and heal (session
// timeout 6 s, scaled).
func cuttable(t *testing.T, b zktest.Backend) (admin *client.Client, path string, c *client.Client, cut, heal func()) {
	admin = b.Connect(t)
	path = groupPath(t, admin)
	opts, cut, heal := b.Blackhole(t)
	c = b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(6*time.Second)))...)
	return admin, path, c, cut, heal
}

// Another recipe's nodes on the group's path are no members: a lock's,
// read/write lock's or election's protected node and a persistent node (a
// semaphore's directories) are left out of List and Watch, while a member
// whose chosen id merely looks like a lock node is listed, and a member
// called "ready" (ephemeral: no configuration's) keeps no one from joining.
func TestGroupLeavesOutOtherRecipesNodes(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := groupPath(t, admin)
		g := membership.New(b.Connect(t), path)
		for _, id := range []string{"ready", "m1", "lock-0000000001"} {
			m, err := g.Join(ctx, id, []byte(id[:1]))
			if err != nil {
				t.Fatal(err)
			}
			defer m.Leave(ctx)
		}
		for _, marker := range []string{"lock-", "__WRIT__", "__READ__", "latch-"} {
			if _, err := admin.CreateProtected(ctx, path+"/"+marker, nil, client.EphemeralSequential); err != nil {
				t.Fatal(err)
			}
		}
		for _, dir := range []string{"locks", "leases"} {
			if _, err := admin.Create(ctx, path+"/"+dir, nil, client.Persistent); err != nil {
				t.Fatal(err)
			}
		}
		const want = "lock-0000000001=l,m1=m,ready=r"
		if got, err := g.List(ctx); err != nil || show(got) != want {
			t.Fatalf("List = %q, %v; want %q", show(got), err, want)
		}
		feed := g.Watch(ctx)
		select {
		case s := <-feed.Values():
			if show(s) != want {
				t.Fatalf("Watch's first snapshot = %q, want %q", show(s), want)
			}
		case <-time.After(zktest.Scale(30 * time.Second)):
			t.Fatalf("no snapshot: %v", feed.Err())
		}
	})
}
