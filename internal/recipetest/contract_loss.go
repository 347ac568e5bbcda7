package recipetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// holderExpiry: a holder in every mode, all on one session, each with an
// exclusive waiter behind it. The session expires: each holder's lease
// ends, its waiter holds with a higher token, and the old holder's fenced
// writes are refused both by its lease and by the server.
func (q *contract[R, L]) holderExpiry(t *testing.T, b zktest.Backend) {
	ctx := Context(t)
	old := b.Connect(t)
	admin := b.Connect(t)
	type turn struct {
		dir, target string
		held        L
		next        chan *L
	}
	var turns []turn
	for _, m := range q.Modes {
		tr := turn{dir: LockDir(t, admin), next: make(chan *L, 1)}
		tr.target = tr.dir + "-fenced"
		if _, err := admin.Create(ctx, tr.target, nil, client.Persistent); err != nil {
			t.Fatal(err)
		}
		// Tolerant of suspension, so that the cause is the expiry itself,
		// not the disconnection that comes with it.
		tr.held = q.acquire(t, ctx, m, old, tr.dir, time.Hour)
		p := q.participant(b.Connect(t), tr.dir, 0)
		go func() {
			l, err := q.exclusive[0].Acquire(p, ctx)
			if err != nil {
				t.Error(err)
				tr.next <- nil
				return
			}
			tr.next <- &l
		}()
		WaitChildren(t, admin, tr.dir, 2)
		turns = append(turns, tr)
	}
	b.ExpireSession(t, old.Session())
	for i, tr := range turns {
		m := q.Modes[i]
		Within(t, tr.held.Done(), m.Name+": the expired holder's Done")
		if err := tr.held.Err(); !errors.Is(err, recipes.ErrLost) || !errors.Is(err, client.ErrSessionLost) {
			t.Fatalf("%s: lease ended with %v, want session lost", m.Name, err)
		}
		next := <-tr.next
		if next == nil {
			t.FailNow()
		}
		if (*next).Token() <= tr.held.Token() {
			t.Fatalf("%s: next token %d not above the expired holder's %d", m.Name, (*next).Token(), tr.held.Token())
		}
		// The old holder's lease refuses its write...
		if _, err := tr.held.Multi(ctx, client.SetOp(tr.target, []byte("stale"), -1)); !errors.Is(err, recipes.ErrLost) {
			t.Fatalf("%s: fenced write of the expired holder: %v, want ErrLost", m.Name, err)
		}
		// ...and so does the server, had the write been sent anyway.
		_, err := admin.Multi(ctx, tr.held.Guard(), client.SetOp(tr.target, []byte("stale"), -1))
		var me *client.MultiError
		if !errors.As(err, &me) || me.Index != 0 {
			t.Fatalf("%s: a write guarded by the expired holder's node: %v, want its guard to fail", m.Name, err)
		}
		if _, err := (*next).Multi(ctx, client.SetOp(tr.target, []byte("next"), -1)); err != nil {
			t.Fatalf("%s: fenced write of the next holder: %v", m.Name, err)
		}
		if data, _, err := admin.Get(ctx, tr.target); err != nil || string(data) != "next" {
			t.Fatalf("%s: fenced target holds %q (%v), want the next holder's write", m.Name, data, err)
		}
		q.release(t, ctx, *next)
		if err := q.Release(tr.held, ctx); !errors.Is(err, recipes.ErrLost) {
			t.Fatalf("%s: release of an expired lease returned %v, want ErrLost", m.Name, err)
		}
		WaitChildren(t, admin, tr.dir, 0)
	}
}

// nodeChanged: someone else deleting a holder's node, or writing to it,
// ends the lease; a write fenced by it is then refused.
func (q *contract[R, L]) nodeChanged(t *testing.T, b zktest.Backend) {
	ctx := Context(t)
	c := b.Connect(t)
	other := b.Connect(t)
	for _, m := range q.Modes {
		for _, change := range []string{"delete", "write"} {
			dir := LockDir(t, c)
			l := q.acquire(t, ctx, m, c, dir, 0)
			var err error
			if change == "delete" {
				err = other.Delete(ctx, l.Node(), -1)
			} else {
				_, err = other.Set(ctx, l.Node(), []byte("x"), -1)
			}
			if err != nil {
				t.Fatal(err)
			}
			Within(t, l.Done(), m.Name+": Done after a "+change+" of the node")
			if !errors.Is(l.Err(), recipes.ErrNodeDeleted) {
				t.Fatalf("%s: lease ended with %v after a %s, want ErrNodeDeleted", m.Name, l.Err(), change)
			}
			if _, err := l.Multi(ctx, client.CreateOp(dir+"-x", nil, client.Persistent)); !errors.Is(err, recipes.ErrLost) {
				t.Fatalf("%s: fenced write after a %s: %v, want ErrLost", m.Name, change, err)
			}
			if ok, _, _ := c.Exists(ctx, dir+"-x"); ok {
				t.Fatalf("%s: fenced write applied after a %s", m.Name, change)
			}
			// A written node still exists: zkit deletes it.
			WaitChildren(t, c, dir, 0)
		}
	}
}

// waiterNodeDeleted: someone else deleting the node of an attempt that
// waits behind a holder ends the attempt with ErrNodeDeleted (whose text
// does not say "no longer held": it held nothing) while the holder still
// holds (within the second a Confirmed kind waits before it
// watches its own node), instead of letting it wait for a turn it has no
// node for.
func (q *contract[R, L]) waiterNodeDeleted(t *testing.T, b zktest.Backend) {
	ctx := Context(t)
	c := b.Connect(t)
	other := b.Connect(t)
	for _, m := range q.Modes {
		dir := LockDir(t, c)
		holder := q.acquire(t, ctx, q.exclusive[0], c, dir, 0)
		done := make(chan error, 1)
		p := q.participant(other, dir, 0)
		go func() {
			l, err := m.Acquire(p, ctx)
			if err == nil {
				q.Release(l, ctx)
			}
			done <- err
		}()
		WaitChildren(t, c, dir, 2)
		for _, n := range Children(t, c, dir) {
			if dir+"/"+n != holder.Node() {
				if err := c.Delete(ctx, dir+"/"+n, -1); err != nil {
					t.Fatal(err)
				}
			}
		}
		select {
		case err := <-done:
			if !errors.Is(err, recipes.ErrNodeDeleted) || !errors.Is(err, recipes.ErrLost) {
				t.Fatalf("%s: an attempt whose node was deleted while it waited returned %v, want ErrNodeDeleted", m.Name, err)
			}
			if strings.Contains(err.Error(), "no longer held") {
				t.Fatalf("%s: an attempt that held nothing says %q", m.Name, err)
			}
		case <-time.After(zktest.Scale(10 * time.Second)):
			t.Fatalf("%s: an attempt whose node was deleted while it waited still waits", m.Name)
		}
		if err := holder.Err(); err != nil {
			t.Fatalf("%s: the holder's lease ended: %v", m.Name, err)
		}
		q.release(t, ctx, holder)
		WaitChildren(t, c, dir, 0)
	}
}

// suspension: leases in every mode without tolerance, one with a short
// tolerance and one with a long one, all on one client, whose connection
// is then cut. The intolerant ones end at once with ErrSuspended, the
// briefly tolerant one once its tolerance has run out; the tolerant one
// lives on; after healing, the session is still there and the ended
// leases' nodes are deleted.
func (q *contract[R, L]) suspension(t *testing.T, b zktest.Backend) {
	ctx := Context(t)
	admin := b.Connect(t)
	opts, cut, heal := b.Blackhole(t)
	c := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(4*time.Second)))...)
	tolerant := q.acquire(t, ctx, q.exclusive[0], c, LockDir(t, admin), time.Hour)
	briefDir := LockDir(t, admin)
	brief := q.acquire(t, ctx, q.exclusive[0], c, briefDir, zktest.Scale(200*time.Millisecond))
	var dirs []string
	var leases []L
	for _, m := range q.Modes {
		dir := LockDir(t, admin)
		dirs = append(dirs, dir)
		leases = append(leases, q.acquire(t, ctx, m, c, dir, 0))
	}
	cut()
	for i, l := range leases {
		Within(t, l.Done(), q.Modes[i].Name+": Done after the connection was suspended")
		if !errors.Is(l.Err(), recipes.ErrSuspended) {
			t.Fatalf("%s: lease ended with %v, want ErrSuspended", q.Modes[i].Name, l.Err())
		}
	}
	Within(t, brief.Done(), "Done after the connection was suspended beyond the tolerance")
	if !errors.Is(brief.Err(), recipes.ErrSuspended) {
		t.Fatalf("the briefly tolerant lease ended with %v, want ErrSuspended", brief.Err())
	}
	if err := tolerant.Err(); err != nil {
		t.Fatalf("the tolerant lease ended too: %v", err)
	}
	heal()
	for _, dir := range append(dirs, briefDir) {
		WaitChildren(t, admin, dir, 0)
	}
	if err := tolerant.Err(); err != nil {
		t.Fatalf("the tolerant lease ended: %v", err)
	}
	q.release(t, ctx, tolerant)
}
