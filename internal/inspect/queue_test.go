package inspect_test

import (
	"context"
	"path"
	"slices"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/inspect"
	"github.com/zkit-dev/zkit/internal/testing/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// A lock shows its holder (session, node, token) and its waiters in the
// order they queued.
func TestLock(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c1, c2, c3 := b.Connect(t), b.Connect(t), b.Connect(t)
		p := recipePath(t, c1)
		held, err := lock.New(c1, p).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range []*client.Client{c2, c3} {
			background(t, func(ctx context.Context) { lock.New(c, p).Lock(ctx) })
			recipetest.WaitChildren(t, c1, p, i+2)
		}

		r, err := inspect.Inspect(ctx, c1, p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind != inspect.Lock || r.Origin != "" {
			t.Fatalf("kind %q origin %q, want lock from zkit", r.Kind, r.Origin)
		}
		h := r.Held()
		if len(h) != 1 || h[0].Session != sessionOf(c1) || h[0].Token != held.Token() || h[0].Name != path.Base(held.Node()) {
			t.Fatalf("holders %+v, want c1's node %s with token %d", h, held.Node(), held.Token())
		}
		if got, want := sessions(r.Queued()), []int64{sessionOf(c2), sessionOf(c3)}; !slices.Equal(got, want) {
			t.Fatalf("waiters' sessions %x, want %x", got, want)
		}
		if r.Sessions() != 3 {
			t.Fatalf("%d sessions, want 3", r.Sessions())
		}

		// The holder leaves: the first waiter holds.
		held.Unlock(ctx)
		inspectUntil(t, c1, p, "c2 holds", func(r *inspect.Report) bool {
			h := r.Held()
			return len(h) == 1 && h[0].Session == sessionOf(c2) && len(r.Queued()) == 1
		})
	})
}

// Readers hold together; a writer waits for them, and a reader behind the
// writer waits for the writer.
func TestRWLock(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c1, c2, c3, c4 := b.Connect(t), b.Connect(t), b.Connect(t), b.Connect(t)
		p := recipePath(t, c1)
		for _, c := range []*client.Client{c1, c2} {
			if _, err := rwlock.New(c, p).RLock(ctx); err != nil {
				t.Fatal(err)
			}
		}
		background(t, func(ctx context.Context) { rwlock.New(c3, p).Lock(ctx) })
		recipetest.WaitChildren(t, c1, p, 3)
		background(t, func(ctx context.Context) { rwlock.New(c4, p).RLock(ctx) })
		recipetest.WaitChildren(t, c1, p, 4)

		r, err := inspect.Inspect(ctx, c1, p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind != inspect.RWLock {
			t.Fatalf("kind %q, want rwlock", r.Kind)
		}
		if got, want := modes(r.Held()), []string{"read", "read"}; !slices.Equal(got, want) {
			t.Fatalf("holders' modes %v, want %v", got, want)
		}
		if got, want := sessions(r.Held()), []int64{sessionOf(c1), sessionOf(c2)}; !slices.Equal(got, want) {
			t.Fatalf("holders' sessions %x, want %x", got, want)
		}
		if got, want := modes(r.Queued()), []string{"write", "read"}; !slices.Equal(got, want) {
			t.Fatalf("waiters' modes %v, want %v", got, want)
		}
		if got, want := sessions(r.Queued()), []int64{sessionOf(c3), sessionOf(c4)}; !slices.Equal(got, want) {
			t.Fatalf("waiters' sessions %x, want %x", got, want)
		}
	})
}

func modes(nodes []inspect.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.Mode
	}
	return out
}

// A semaphore's leases hold; the attempts queued at its lock wait.
func TestSemaphore(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c1, c2, c3, c4 := b.Connect(t), b.Connect(t), b.Connect(t), b.Connect(t)
		p := recipePath(t, c1)
		var tokens []int64
		for _, c := range []*client.Client{c1, c2} {
			l, err := semaphore.New(c, p, 2).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			tokens = append(tokens, l.Token())
		}
		background(t, func(ctx context.Context) { semaphore.New(c3, p, 2).Acquire(ctx) })
		recipetest.WaitChildren(t, c1, p+"/locks", 1)
		background(t, func(ctx context.Context) { semaphore.New(c4, p, 2).Acquire(ctx) })
		recipetest.WaitChildren(t, c1, p+"/locks", 2)

		r, err := inspect.Inspect(ctx, c1, p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind != inspect.Semaphore {
			t.Fatalf("kind %q, want semaphore", r.Kind)
		}
		h := r.Held()
		if got, want := sessions(h), []int64{sessionOf(c1), sessionOf(c2)}; !slices.Equal(got, want) {
			t.Fatalf("holders' sessions %x, want %x", got, want)
		}
		if h[0].Token != tokens[0] || h[1].Token != tokens[1] {
			t.Fatalf("holders' tokens %d %d, want %v", h[0].Token, h[1].Token, tokens)
		}
		if got, want := sessions(r.Queued()), []int64{sessionOf(c3), sessionOf(c4)}; !slices.Equal(got, want) {
			t.Fatalf("waiters' sessions %x, want %x", got, want)
		}
	})
}

// An election shows its leader and the candidates in order, with ids.
func TestElection(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c1, c2, c3 := b.Connect(t), b.Connect(t), b.Connect(t)
		p := recipePath(t, c1)
		term, err := election.New(c1, p, "alpha").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i, cand := range []struct {
			c  *client.Client
			id string
		}{{c2, "beta"}, {c3, "gamma"}} {
			background(t, func(ctx context.Context) { election.New(cand.c, p, cand.id).Campaign(ctx) })
			recipetest.WaitChildren(t, c1, p, i+2)
		}

		r, err := inspect.Inspect(ctx, c1, p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Kind != inspect.Election {
			t.Fatalf("kind %q, want election", r.Kind)
		}
		l := r.With(inspect.Leader)
		if len(l) != 1 || l[0].ID != "alpha" || l[0].Token != term.Token() || l[0].Session != sessionOf(c1) {
			t.Fatalf("leader %+v, want alpha with token %d", l, term.Token())
		}
		cands := r.With(inspect.Candidate)
		if len(cands) != 2 || cands[0].ID != "beta" || cands[1].ID != "gamma" {
			t.Fatalf("candidates %+v, want beta then gamma", cands)
		}
	})
}
