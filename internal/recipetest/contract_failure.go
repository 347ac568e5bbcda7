package recipetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// lostCreateReply: in every mode, the create of the participant's node is
// applied but its reply lost. Exactly one node results, and it holds.
func (q *contract[R, L]) lostCreateReply(t *testing.T, b zktest.Backend) {
	ctx := Context(t)
	admin := b.Connect(t)
	for _, m := range q.Modes {
		dir := LockDir(t, admin)
		// The directory exists, so that the cut create is the node's.
		if err := admin.EnsurePath(ctx, dir); err != nil {
			t.Fatal(err)
		}
		c := b.Connect(t, b.CutNextCreate(t, dir)...)
		l := q.acquire(t, ctx, m, c, dir, 0)
		if got := Children(t, admin, dir); len(got) != 1 || dir+"/"+got[0] != l.Node() {
			t.Fatalf("%s: after a lost create reply: nodes %v, lease %s", m.Name, got, l.Node())
		}
		q.release(t, ctx, l)
		WaitChildren(t, admin, dir, 0)
	}
}

// cancelAndTimeout: in every mode, an acquire waiting behind an exclusive
// holder is cancelled, or times out, and its node is deleted.
func (q *contract[R, L]) cancelAndTimeout(t *testing.T, b zktest.Backend) {
	ctx := Context(t)
	c := b.Connect(t)
	dir := LockDir(t, c)
	holder := q.acquire(t, ctx, q.exclusive[0], c, dir, 0)
	for _, m := range q.Modes {
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		p := q.participant(b.Connect(t), dir, 0)
		go func() {
			_, err := m.Acquire(p, wctx)
			done <- err
		}()
		WaitChildren(t, c, dir, 2)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: cancelled acquire returned %v, want context.Canceled", m.Name, err)
		}
		WaitChildren(t, c, dir, 1)

		tctx, cancelT := context.WithTimeout(ctx, zktest.Scale(200*time.Millisecond))
		_, err := m.Acquire(q.participant(b.Connect(t), dir, 0), tctx)
		cancelT()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: acquire past its deadline returned %v, want context.DeadlineExceeded", m.Name, err)
		}
		WaitChildren(t, c, dir, 1)
	}
	q.release(t, ctx, holder)
	WaitChildren(t, c, dir, 0)
}

// try: in every mode that has one, a try holds on a free queue; it fails
// with ErrWouldBlock, leaving no node, behind an exclusive holder; and an
// exclusive try fails behind it.
func (q *contract[R, L]) try(t *testing.T, b zktest.Backend) {
	if !slices.ContainsFunc(q.Modes, func(m Mode[R, L]) bool { return m.Try != nil }) {
		t.Skip("the recipe has no try")
	}
	ctx := Context(t)
	c := b.Connect(t)
	other := b.Connect(t)
	for _, m := range q.Modes {
		if m.Try == nil {
			continue
		}
		dir := LockDir(t, c)
		l, err := m.Try(q.participant(c, dir, 0), ctx)
		if err != nil {
			t.Fatalf("%s: try on a free queue: %v", m.Name, err)
		}
		checkNode(t, dir, m.Marker, l.Node())
		for _, x := range q.exclusive {
			if x.Try == nil {
				continue
			}
			if _, err := x.Try(q.participant(other, dir, 0), ctx); !errors.Is(err, recipes.ErrWouldBlock) {
				t.Fatalf("%s try while %s holds: %v, want ErrWouldBlock", x.Name, m.Name, err)
			}
			if got := Children(t, c, dir); len(got) != 1 {
				t.Fatalf("%s: a failed try left nodes: %v", x.Name, got)
			}
		}
		q.release(t, ctx, l)

		h := q.acquire(t, ctx, q.exclusive[0], other, dir, 0)
		if _, err := m.Try(q.participant(c, dir, 0), ctx); !errors.Is(err, recipes.ErrWouldBlock) {
			t.Fatalf("%s try while %s holds: %v, want ErrWouldBlock", m.Name, q.exclusive[0].Name, err)
		}
		if got := Children(t, c, dir); len(got) != 1 {
			t.Fatalf("%s: a failed try left nodes: %v", m.Name, got)
		}
		q.release(t, ctx, h)
		WaitChildren(t, c, dir, 0)
	}
}

// badInput: invalid paths, and the root (a recipe needs a node of its
// own), give an *client.InputError from every call, naming that call (the
// mode's Name), and nothing is sent: no request reaches the server,
// nothing is created, the session lives on.
func (q *contract[R, L]) badInput(t *testing.T, b zktest.Backend) {
	ctx := Context(t)
	proxy := zktest.NewProxy(t, b.Addr())
	c := b.Connect(t, client.WithDialer(proxy.Dialer()))
	base := zktest.UniquePath(t)
	sent := proxy.Requests()
	for _, path := range []string{"", "relative", "/", base + "//x", base + "/x/", base + "/./x", base + "/../x", base + "/bad\x00name"} {
		for _, m := range q.Modes {
			calls := map[string]func(R, context.Context) (L, error){m.Name: m.Acquire}
			if m.Try != nil {
				calls["try "+m.Name] = m.Try
			}
			for name, call := range calls {
				_, err := call(q.participant(c, path, 0), ctx)
				var ie *client.InputError
				switch {
				case !errors.As(err, &ie) || !errors.Is(err, client.ErrInvalidInput):
					t.Errorf("%s on %q: %v, want an *client.InputError", name, path, err)
				case ie.Op != name:
					t.Errorf("%s on %q: %v, names %q, want the call %q", name, path, err, ie.Op, name)
				}
			}
		}
	}
	if n := proxy.Requests() - sent; n != 0 {
		t.Errorf("bad input sent %d requests", n)
	}
	if ok, _, err := c.Exists(ctx, base); err != nil || ok {
		t.Fatalf("something was created at %s (exists=%v, err=%v)", base, ok, err)
	}
	if !c.Session().Alive() {
		t.Fatal("bad input cost the session")
	}
}

// foreignNodes: children that are not the recipe's nodes (other names,
// a marker without digits or with junk after them, a sequence number past
// int64) neither block nor crash a participant, in any mode.
func (q *contract[R, L]) foreignNodes(t *testing.T, b zktest.Backend) {
	ctx := Context(t)
	c := b.Connect(t)
	dir := LockDir(t, c)
	if err := c.EnsurePath(ctx, dir); err != nil {
		t.Fatal(err)
	}
	names := []string{"readme", "_c_junk-other-0000000001"}
	for _, m := range q.Modes {
		names = append(names, m.Marker, m.Marker+"12x", "_c_junk-"+m.Marker+"99999999999999999999")
	}
	for _, name := range names {
		if _, err := c.Create(ctx, dir+"/"+name, nil, client.Persistent); err != nil && !errors.Is(err, client.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	for _, m := range q.Modes {
		acquire := m.Try
		if acquire == nil {
			acquire = m.Acquire // a short deadline then tells the same
		}
		actx, cancel := context.WithTimeout(ctx, zktest.Scale(10*time.Second))
		l, err := acquire(q.participant(c, dir, 0), actx)
		cancel()
		if err != nil {
			t.Fatalf("%s with foreign nodes around: %v", m.Name, err)
		}
		q.release(t, ctx, l)
	}
	WaitChildren(t, c, dir, len(names))
}
