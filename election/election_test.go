package election_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// Resigning hands over to the next candidate in queue order, and Observe
// reports every change in order; after a burst of churn it ends on the
// true leader.
func TestResignHandsOver(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const n = 4
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		observer := election.New(b.Connect(t), path, "")
		feed := observer.Observe(ctx)
		if l := next(t, feed); l != election.NoLeader {
			t.Fatalf("empty election observed as %v", l)
		}
		var pending []*candidacy
		es := make([]*election.Election, n)
		for i := range n {
			es[i] = election.New(b.Connect(t), path, fmt.Sprintf("c%d", i))
			pending = append(pending, campaign(ctx, es[i]))
			recipetest.WaitChildren(t, admin, path, i+1) // join in order
		}
		var led ledger
		term := elected(t, pending[0])
		for i := range n {
			led.begin(term)
			if l := next(t, feed); !same(term, l) {
				t.Fatalf("observed %v, want the term of %s (%s)", l, term.ID(), term.Node())
			}
			if l, err := observer.Leader(ctx); err != nil || !same(term, l) {
				t.Fatalf("Leader() = %v, %v; want %s", l, err, term.ID())
			}
			for _, p := range pending[i+1:] {
				notElected(t, p)
			}
			if err := term.Resign(ctx); err != nil {
				t.Fatal(err)
			}
			if !errors.Is(term.Err(), recipes.ErrReleased) {
				t.Fatalf("resigned term ended with %v", term.Err())
			}
			if i+1 < n {
				term = elected(t, pending[i+1])
			}
		}
		if l := next(t, feed); l != election.NoLeader {
			t.Fatalf("after the last resignation: observed %v, want no leader", l)
		}

		// Churn: every candidate leads, resigns and joins again at the back,
		// as fast as it can. The observer may skip leaders, but what it
		// reports comes in term order, and it ends on the true leader.
		const rounds = 5
		var wg sync.WaitGroup
		for _, e := range es {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range rounds {
					term, err := e.Campaign(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					led.begin(term)
					term.Resign(ctx)
				}
			}()
		}
		wg.Wait()
		last, err := election.New(b.Connect(t), path, "last").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		led.begin(last)
		var seen election.Leader
		for !same(last, seen) {
			l := next(t, feed)
			if l != election.NoLeader && l.Token <= seen.Token {
				t.Fatalf("observed %v after %v: out of term order", l, seen)
			}
			if l != election.NoLeader {
				seen = l
			}
		}
		led.check(t)
		if len(led.terms) != n+n*rounds+1 {
			t.Fatalf("%d terms, want %d", len(led.terms), n+n*rounds+1)
		}
		last.Resign(ctx)
		if l := next(t, feed); l != election.NoLeader {
			t.Fatalf("after the last resignation: observed %v, want no leader", l)
		}
	})
}

// A candidate must never lead on a deduction that the server contradicts:
// not when its own node was deleted while it waited, and not when someone
// wrote to the leader's node (which a lock waiter takes for a release).
func TestNoFalseLeadership(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		leader, err := election.New(b.Connect(t), path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}

		// Own node deleted while waiting: Campaign fails, no term.
		done := make(chan error, 1)
		go func() {
			_, err := election.New(b.Connect(t), path, "b").Campaign(ctx)
			done <- err
		}()
		recipetest.WaitChildren(t, admin, path, 2)
		for _, name := range recipetest.Children(t, admin, path) {
			if path+"/"+name != leader.Node() {
				if err := admin.Delete(ctx, path+"/"+name, -1); err != nil {
					t.Fatal(err)
				}
			}
		}
		select {
		case err := <-done:
			if !errors.Is(err, recipes.ErrNodeDeleted) {
				t.Fatalf("Campaign whose node was deleted: %v, want ErrNodeDeleted", err)
			}
		case <-time.After(zktest.Scale(20 * time.Second)):
			t.Fatal("Campaign went on after its node was deleted")
		}

		// A write to the leader's node deposes it (its term ends and its
		// node is deleted), but the next candidate leads only once that
		// node is gone.
		pending := campaign(ctx, election.New(b.Connect(t), path, "c"))
		recipetest.WaitChildren(t, admin, path, 2)
		if _, err := admin.Set(ctx, leader.Node(), []byte("not a"), -1); err != nil {
			t.Fatal(err)
		}
		term := elected(t, pending)
		if leader.Err() == nil {
			t.Fatal("c leads while a's term lasts")
		}
		if ok, _, err := admin.Exists(ctx, leader.Node()); err != nil || ok {
			t.Fatalf("c leads while a's node exists (%v)", err)
		}
		term.Resign(ctx)
		recipetest.WaitChildren(t, admin, path, 0)
	})
}

// A write to the node a candidate waits for, made while that node's owner
// does not react to it (a Curator candidate, whose LeaderLatch ignores
// data changes), is no release: the candidate, which a lock waiter's
// deduction would make leader at once, sees on the server that the node
// is still there and goes on waiting for it.
func TestNoLeadershipOnAWriteToTheNodeBefore(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin, foreign := b.Connect(t), b.Connect(t)
		path := electionPath(t, admin)
		if err := admin.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		first, err := foreign.CreateProtected(ctx, path+"/latch-", []byte("curator"), client.EphemeralSequential)
		if err != nil {
			t.Fatal(err)
		}
		cc := b.Connect(t)
		pending := campaign(ctx, election.New(cc, path, "c"))
		recipetest.WaitChildren(t, admin, path, 2)
		recipetest.WaitWatching(t, b.Addr(), first, cc.Session().ID())
		if _, err := admin.Set(ctx, first, []byte("written"), -1); err != nil {
			t.Fatal(err)
		}
		// The watch fired; the candidate watches the node again once a
		// listing has shown it still there.
		recipetest.WaitWatching(t, b.Addr(), first, cc.Session().ID())
		notElected(t, pending)
		if err := foreign.Delete(ctx, first, -1); err != nil {
			t.Fatal(err)
		}
		term := elected(t, pending)
		if err := term.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		recipetest.WaitChildren(t, admin, path, 0)
	})
}

// Leader ignores children of other shapes, with and without a leader.
func TestLeaderIgnoresForeignNodes(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := electionPath(t, c)
		if err := c.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"readme", "latch-", "latch-12x", "_c_junk-other-0000000001"} {
			if _, err := c.Create(ctx, path+"/"+name, nil, client.Persistent); err != nil {
				t.Fatal(err)
			}
		}
		e := election.New(c, path, "a")
		if l, err := e.Leader(ctx); err != nil || l != election.NoLeader {
			t.Fatalf("Leader among foreign nodes = %v, %v; want no leader", l, err)
		}
		term, err := e.Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if l, err := e.Leader(ctx); err != nil || !same(term, l) {
			t.Fatalf("Leader = %v, %v; want a", l, err)
		}
		term.Resign(ctx)
	})
}

// A term's Token is recipes.TokenOf its node's czxid, as its doc says, and
// the one Leader reports for it.
func TestTokenIsTokenOfCzxid(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		e := election.New(c, electionPath(t, c), "a")
		term, err := e.Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer term.Resign(ctx)
		_, st, err := c.Exists(ctx, term.Node())
		if err != nil {
			t.Fatal(err)
		}
		if want := recipes.TokenOf(st.Czxid); term.Token() != want || want == st.Czxid {
			t.Fatalf("Token() = %d, want TokenOf(czxid %d) = %d", term.Token(), st.Czxid, want)
		}
		if l, err := e.Leader(ctx); err != nil || l.Token != term.Token() {
			t.Fatalf("Leader() = %v (token %d), %v; want token %d", l, l.Token, err, term.Token())
		}
	})
}
