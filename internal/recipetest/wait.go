package recipetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// Context is a context for one test: generous, scaled, cancelled when the
// test ends.
func Context(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
	t.Cleanup(cancel)
	return ctx
}

// LockDir returns a fresh lock path for the test, and makes sure its parent
// exists.
func LockDir(t *testing.T, c *client.Client) string {
	t.Helper()
	p := zktest.UniquePath(t)
	if err := c.EnsurePath(Context(t), p); err != nil {
		t.Fatal(err)
	}
	return p + "/lock"
}

// Children lists dir's children (none if dir is missing).
func Children(t *testing.T, c *client.Client, dir string) []string {
	t.Helper()
	ch, _, err := c.Children(Context(t), dir)
	if err != nil && !errors.Is(err, client.ErrNoNode) {
		t.Fatalf("children %s: %v", dir, err)
	}
	return ch
}

// Eventually waits until cond holds, polling, or fails the test at the
// deadline with what.
func Eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	eventually(t, cond, func() string { return what })
}

// eventually is Eventually with the end of its failure message, what, made
// at the deadline: it can tell what was found instead.
func eventually(t *testing.T, cond func() bool, what func() string) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(20 * time.Second))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// answered makes call until it fails with no retryable error (none while
// the client reconnects), within Eventually's deadline, and returns its
// error.
func answered(t *testing.T, what string, call func() error) error {
	t.Helper()
	var err error
	Eventually(t, what+" is answered", func() bool {
		err = call()
		return !client.IsRetryable(err)
	})
	return err
}

// WaitChildren waits until dir has n children (none while it is missing),
// waiting out a reconnecting client.
func WaitChildren(t *testing.T, c *client.Client, dir string, n int) {
	t.Helper()
	ctx := Context(t)
	var seen []string
	eventually(t, func() bool {
		ch, _, err := c.Children(ctx, dir)
		switch {
		case errors.Is(err, client.ErrNoNode):
			seen = nil
		case client.IsRetryable(err):
			return false
		case err != nil:
			t.Fatalf("children %s: %v", dir, err)
		default:
			seen = ch
		}
		return len(seen) == n
	}, func() string { return fmt.Sprintf("%s has %d nodes; it has %q", dir, n, seen) })
}

// waitGone waits until path no longer exists, waiting out a reconnecting
// client.
func waitGone(t *testing.T, ctx context.Context, c *client.Client, path string) {
	t.Helper()
	eventually(t, func() bool { return !exists(t, ctx, c, path) }, func() string {
		ch, _, err := c.Children(ctx, path)
		return fmt.Sprintf("%s is deleted; it has the children %q (%v)", path, ch, err)
	})
}

// exists reports whether path exists, waiting out a reconnecting client.
func exists(t *testing.T, ctx context.Context, c *client.Client, path string) bool {
	t.Helper()
	var ok bool
	err := answered(t, "exists "+path, func() (err error) {
		ok, _, err = c.Exists(ctx, path)
		return err
	})
	if err != nil {
		t.Fatalf("exists %s: %v", path, err)
	}
	return ok
}

// Within waits for ch or fails the test after a scaled timeout.
func Within(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// WaitEventFor waits up to d for an event matching match on sub, and
// reports whether one came.
func WaitEventFor(t *testing.T, sub *client.Subscription, d time.Duration, match func(client.Event) bool) bool {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				t.Fatalf("subscription ended: %v", sub.Err())
			}
			if match(ev) {
				return true
			}
		case <-deadline:
			return false
		}
	}
}

// WaitWatched waits until the session watches path on the server (the
// four-letter word wchc), so that a test knows a waiter has read the node
// and set its watch before it changes the node under it.
func WaitWatched(t *testing.T, b zktest.Backend, sess *client.Session, path string) {
	t.Helper()
	WaitWatching(t, b.Addr(), path, sess.ID())
}

// FeedEnds drains feed until its values are closed, within 5 s (scaled),
// and fails t unless its Err then matches want.
func FeedEnds[T any](t *testing.T, feed *recipes.Feed[T], want error, what string) {
	t.Helper()
	deadline := time.After(zktest.Scale(5 * time.Second))
	for {
		select {
		case _, open := <-feed.Values():
			if open {
				continue
			}
			if !errors.Is(feed.Err(), want) {
				t.Fatalf("%s: Err = %v, want %v", what, feed.Err(), want)
			}
			return
		case <-deadline:
			t.Fatalf("%s did not end", what)
		}
	}
}
