package election_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// A term whose node and election directory were deleted by someone else
// before its lease noticed: Requeue's transaction fails on the create
// (the directory is missing), and Requeue must go on as Join does, creating
// the directory, not refuse with an error about its own transaction.
func TestRequeueDirectoryGone(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		proxy := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(proxy.Dialer()))
		first, err := election.New(c, path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// From now on the leader hears of the deletes only after a while:
		// its lease is still held when Requeue starts.
		proxy.SetLatency(zktest.Scale(2 * time.Second))
		if err := admin.Delete(ctx, first.Node(), -1); err != nil {
			t.Fatal(err)
		}
		if err := admin.Delete(ctx, path, -1); err != nil {
			t.Fatal(err)
		}
		type result struct {
			term *election.Term
			err  error
		}
		done := make(chan result, 1)
		go func() {
			term, err := first.Requeue(ctx)
			done <- result{term, err}
		}()
		recipetest.Within(t, first.Done(), "the term's end at Requeue")
		if !errors.Is(first.Err(), recipes.ErrReleased) {
			t.Skipf("the lease noticed the delete before Requeue (%v): nothing to check", first.Err())
		}
		proxy.SetLatency(0)
		var r result
		select {
		case r = <-done:
		case <-time.After(zktest.Scale(30 * time.Second)):
			t.Fatal("Requeue did not return")
		}
		if r.err != nil {
			t.Fatalf("Requeue after the election's directory was deleted: %v", r.err)
		}
		onlyNode(t, admin, path, r.term, "after Requeue")
		if err := r.term.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A term whose session expired: Requeue cleans up, campaigns under the
// next session and leads again; the old term tells how it ended and
// nothing of the old session is left.
func TestRequeueAfterSessionExpired(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		c := b.Connect(t)
		first, err := election.New(c, path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b.ExpireSession(t, first.Session())
		recipetest.Within(t, first.Done(), "the term's end after its session expired")
		next, err := first.Requeue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(first.Err(), election.ErrLost) {
			t.Errorf("the expired term's Err = %v, want ErrLost", first.Err())
		}
		if next.Session() == first.Session() {
			t.Error("the next term is on the expired session")
		}
		onlyNode(t, admin, path, next, "after Requeue")
		if err := first.Resign(ctx); !errors.Is(err, election.ErrLost) {
			t.Errorf("Resign after Requeue = %v, want the loss again", err)
		}
		if err := next.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// Requeue in a namespace: the transaction's delete and create are the
// namespace's, the node paths the caller's.
func TestRequeueInNamespace(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		ns := zktest.UniquePath(t) + "/app"
		c := b.Connect(t, client.WithNamespace(ns))
		outside := b.Connect(t)
		e := election.New(c, "/election", "a")
		first, err := e.Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pb := campaign(ctx, election.New(b.Connect(t, client.WithNamespace(ns)), "/election", "b"))
		recipetest.WaitChildren(t, outside, ns+"/election", 2)
		requeued := campaignWith(func() (*election.Term, error) { return first.Requeue(ctx) }, "a")
		tb := elected(t, pb)
		if err := tb.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		second := elected(t, requeued)
		if got, _ := client.SplitPath(second.Node()); got != "/election" {
			t.Errorf("the requeued term's node %q is not the namespace's", second.Node())
		}
		onlyNode(t, outside, ns+"/election", second, "after Requeue")
		if err := second.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// Requeue and Resign of one term at once: whichever comes first ends the
// term, Resign reports it held, and the participant is left with exactly
// the one candidacy Requeue returns.
func TestRequeueConcurrentResign(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		e := election.New(b.Connect(t), path, "a")
		for range 5 {
			first, err := e.Campaign(ctx)
			if err != nil {
				t.Fatal(err)
			}
			requeued := campaignWith(func() (*election.Term, error) { return first.Requeue(ctx) }, "a")
			if err := first.Resign(ctx); err != nil {
				t.Errorf("Resign alongside Requeue = %v", err)
			}
			next := elected(t, requeued)
			if !errors.Is(first.Err(), recipes.ErrReleased) {
				t.Errorf("the term ended with %v", first.Err())
			}
			onlyNode(t, admin, path, next, "after Requeue and Resign")
			if err := next.Resign(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// A Requeue whose ctx ends while it waits behind the next leader leaves
// nothing of the participant's: the old node went with the transaction,
// the new one is abandoned.
func TestRequeueTimeoutWhileWaiting(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		first, err := election.New(b.Connect(t), path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pb := campaign(ctx, election.New(b.Connect(t), path, "b"))
		recipetest.WaitChildren(t, admin, path, 2)
		short, cancel := context.WithTimeout(ctx, zktest.Scale(500*time.Millisecond))
		defer cancel()
		if _, err := first.Requeue(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Requeue behind b with a short deadline = %v", err)
		}
		tb := elected(t, pb)
		recipetest.Eventually(t, "only b's node left", func() bool {
			names := recipetest.Children(t, admin, path)
			return len(names) == 1 && names[0] == nodeName(tb.Node())
		})
		if err := tb.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
