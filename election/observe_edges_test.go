package election_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// An observer started before the election's path exists follows it as it
// is created, emptied, deleted and created again.
func TestObserveEdgeMissingAndRecreatedPath(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		feed := election.New(b.Connect(t), path, "").Observe(ctx)
		if l := next(t, feed); l != election.NoLeader {
			t.Fatalf("observed %v on a missing path", l)
		}
		for round := range 3 {
			term, err := election.New(b.Connect(t), path, "a").Campaign(ctx)
			if err != nil {
				t.Fatal(err)
			}
			awaitLeader(t, feed, "a", func(l election.Leader) bool { return same(term, l) })
			if err := term.Resign(ctx); err != nil {
				t.Fatal(err)
			}
			awaitLeader(t, feed, "no leader", func(l election.Leader) bool { return l == election.NoLeader })
			// Delete the directory (if the server did not already).
			if err := admin.Delete(ctx, path, -1); err != nil && !errors.Is(err, client.ErrNoNode) {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	})
}

// The observer's own session expires while leaders change; the last value
// is the current leader.
func TestObserveEdgeOwnSessionExpires(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		oc := b.Connect(t)
		first, err := election.New(b.Connect(t), path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		feed := election.New(oc, path, "").Observe(ctx)
		awaitLeader(t, feed, "a", func(l election.Leader) bool { return same(first, l) })
		sess := oc.Session()
		b.ExpireSession(t, sess)
		pending := campaign(ctx, election.New(b.Connect(t), path, "b"))
		recipetest.WaitChildren(t, admin, path, 2)
		first.Resign(ctx)
		second := elected(t, pending)
		awaitLeader(t, feed, "b", func(l election.Leader) bool { return same(second, l) })
		second.Resign(ctx)
		awaitLeader(t, feed, "no leader", func(l election.Leader) bool { return l == election.NoLeader })
	})
}

// Closing the client ends Observe promptly with ErrClosed, even when the
// connection no longer answers.
func TestObserveEdgeClientClosed(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		opts, cut, heal := b.Blackhole(t)
		defer heal()
		oc := b.Connect(t, opts...)
		feed := election.New(oc, path, "").Observe(context.WithoutCancel(ctx))
		if l := next(t, feed); l != election.NoLeader {
			t.Fatalf("observed %v", l)
		}
		cut()
		oc.Close()
		recipetest.FeedEnds(t, feed, client.ErrClosed, "Observe after Close")
	})
}
