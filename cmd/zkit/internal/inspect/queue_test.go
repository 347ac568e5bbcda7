package inspect_test

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/inspect"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// A lock shows its holder (session, node, token) and its waiters in the
// order they queued.
func TestLock(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c1, c2, c3 := b.Connect(t), b.Connect(t), b.Connect(t)
		p := recipePath(t, c1)
		held, err := lock.New(c1, p).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range []*client.Client{c2, c3} {
			id := []byte(fmt.Sprintf("worker-%d", i+2)) // who waits, as zkit lock --id writes it
			background(t, func(ctx context.Context) { lock.New(c, p, lock.WithData(id)).Lock(ctx) })
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
		if q := r.Queued(); h[0].ID != "" || q[0].ID != "worker-2" || q[1].ID != "worker-3" {
			t.Fatalf("ids %q, %q, %q: want none for the holder, then the waiters' data", h[0].ID, q[0].ID, q[1].ID)
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

// Nodes of another recipe beside a queue's (a lock's beside an election's,
// a semaphore's directories or a barrier member beside a lock's, a name
// whose sequence number does not parse) are not shown as the queue's, and
// a note names them: the report does not pass over them silently.
func TestQueueNamesOtherNodes(t *testing.T) {
	t.Parallel()
	b := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
	c := b.Connect(t)
	create := func(node string, mode client.CreateMode) string {
		t.Helper()
		made, err := c.Create(ctx, node, nil, mode)
		if err != nil {
			t.Fatal(err)
		}
		return path.Base(made)
	}
	protected := func(dir, marker string) string {
		return client.JoinPath(dir, client.ProtectedName(client.NewProtectedID(), marker))
	}
	noted := func(r *inspect.Report, names ...string) bool {
		for _, n := range r.Notes {
			all := true
			for _, name := range names {
				all = all && strings.Contains(n, strconv.Quote(name))
			}
			if all {
				return true
			}
		}
		return false
	}

	// An election and a lock on one path.
	p := recipePath(t, c)
	create(p, client.Persistent)
	latch := create(protected(p, "latch-"), client.EphemeralSequential)
	lockNode := create(protected(p, "lock-"), client.EphemeralSequential)
	r, err := inspect.Inspect(ctx, c, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != inspect.Election || len(r.Nodes) != 1 || r.Nodes[0].Name != latch || !noted(r, lockNode) {
		t.Fatalf("election beside a lock: kind %q nodes %+v notes %q, want the election and a note naming %s", r.Kind, r.Nodes, r.Notes, lockNode)
	}

	// A lock with a semaphore's directories and a barrier member beside
	// it, and a node of a wrapped sequence number, which comes after the
	// lock's own (creation order, recipes.Node.Before).
	p = recipePath(t, c)
	create(p, client.Persistent)
	lockNode = create(protected(p, "lock-"), client.EphemeralSequential)
	create(p+"/leases", client.Persistent)
	member := create(p+"/"+"0c8a3f52-1d2e-4b5a-9c7d-2e4f6a8b0c1d", client.Ephemeral)
	wrapped := create(p+"/_c_0c8a3f52-1d2e-4b5a-9c7d-2e4f6a8b0c1d-lock--2147483648", client.Ephemeral)
	r, err = inspect.Inspect(ctx, c, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != inspect.Lock || len(r.Nodes) != 2 || r.Nodes[0].Name != lockNode || r.Nodes[1].Name != wrapped || !noted(r, "leases", member) {
		t.Fatalf("lock among others: kind %q nodes %+v notes %q, want %s then %s, and a note naming leases, %s", r.Kind, r.Nodes, r.Notes, lockNode, wrapped, member)
	}

	// A semaphore whose leases directory holds a node that is no lease
	// (Curator's waiters count it as one).
	p = recipePath(t, c)
	if _, err := semaphore.New(c, p, 2).Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	foreign := create(p+"/leases/stray", client.Ephemeral)
	r, err = inspect.Inspect(ctx, c, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != inspect.Semaphore || len(r.Held()) != 1 || !noted(r, foreign) {
		t.Fatalf("semaphore with a stray lease node: kind %q holders %+v notes %q, want 1 lease and a note naming %s", r.Kind, r.Held(), r.Notes, foreign)
	}
}
