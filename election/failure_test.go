package election_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// A lost create reply leaves exactly one node, which leads.
func TestLostCreateReply(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := electionPath(t, admin)
		if err := admin.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		c := b.Connect(t, b.CutNextCreate(t, path)...)
		term, err := election.New(c, path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := recipetest.Children(t, admin, path); len(got) != 1 || path+"/"+got[0] != term.Node() {
			t.Fatalf("after a lost create reply: nodes %v, term %s", got, term.Node())
		}
		if err := term.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		recipetest.WaitChildren(t, admin, path, 0)
	})
}

// Cancelling or timing out a Campaign deletes its node.
func TestCancelWhileWaiting(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := electionPath(t, c)
		leader, err := election.New(c, path, "a").Campaign(ctx)
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := election.New(b.Connect(t), path, "b").Campaign(wctx)
			done <- err
		}()
		recipetest.WaitChildren(t, c, path, 2)
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Campaign returned %v, want context.Canceled", err)
		}
		recipetest.WaitChildren(t, c, path, 1)
		tctx, cancelT := context.WithTimeout(ctx, zktest.Scale(200*time.Millisecond))
		defer cancelT()
		if _, err := election.New(b.Connect(t), path, "c").Campaign(tctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Campaign returned %v, want context.DeadlineExceeded", err)
		}
		recipetest.WaitChildren(t, c, path, 1)
		if err := leader.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// Invalid ids and paths get an *client.InputError before anything is sent.
func TestBadInput(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		base := zktest.UniquePath(t)
		isInput := func(err error) bool {
			var ie *client.InputError
			return errors.As(err, &ie) && errors.Is(err, client.ErrInvalidInput)
		}
		for _, id := range []string{"", "\xff\xfe", "two\nlines", "nul\x00", "bell\a"} {
			if _, err := election.New(c, base+"/e", id).Campaign(ctx); !isInput(err) {
				t.Errorf("Campaign with id %q = %v, want an *client.InputError", id, err)
			}
		}
		if _, err := election.New(c, base+"/e", strings.Repeat("x", 2<<20)).Campaign(ctx); !isInput(err) {
			t.Errorf("Campaign with a 2 MB id = %v, want an *client.InputError", err)
		}
		for _, p := range []string{"", "relative", base + "//x", base + "/x/", base + "/./x", base + "/bad\x00name"} {
			e := election.New(c, p, "a")
			if _, err := e.Campaign(ctx); !isInput(err) {
				t.Errorf("Campaign at %q = %v, want an *client.InputError", p, err)
			}
			if _, err := e.Leader(ctx); !isInput(err) {
				t.Errorf("Leader at %q = %v, want an *client.InputError", p, err)
			}
			feed := e.Observe(ctx)
			for range feed.Values() {
				t.Errorf("Observe at %q delivered a value", p)
			}
			if !isInput(feed.Err()) {
				t.Errorf("Observe at %q ended with %v, want an *client.InputError", p, feed.Err())
			}
		}
		if ok, _, err := c.Exists(ctx, base); err != nil || ok {
			t.Fatalf("something was created under %s (exists=%v, err=%v)", base, ok, err)
		}
		if !c.Session().Alive() {
			t.Fatal("bad input cost the session")
		}
	})
}
