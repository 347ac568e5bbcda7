package inspect_test

import (
	"context"
	"sync"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/inspect"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// recipePath returns a fresh path for the test's recipe, its parent made.
func recipePath(t *testing.T, c *client.Client) string {
	t.Helper()
	p := zktest.UniquePath(t)
	if err := c.EnsurePath(recipetest.Context(t), p); err != nil {
		t.Fatal(err)
	}
	return p + "/r"
}

// background runs fn (a participant that waits) until the test ends: its
// context is cancelled then, and the test waits for it to return.
func background(t *testing.T, fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		fn(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// inspectUntil inspects path until cond holds, and returns that report.
func inspectUntil(t *testing.T, c *client.Client, path, what string, cond func(r *inspect.Report) bool) *inspect.Report {
	t.Helper()
	var last *inspect.Report
	recipetest.Eventually(t, what, func() bool {
		r, err := inspect.Inspect(recipetest.Context(t), c, path)
		if err != nil {
			t.Fatalf("inspect %s: %v", path, err)
		}
		last = r
		return cond(r)
	})
	return last
}

// sessions returns the session ids of nodes, in order.
func sessions(nodes []inspect.Node) []int64 {
	out := make([]int64, len(nodes))
	for i, n := range nodes {
		out[i] = n.Session
	}
	return out
}

func sessionOf(c *client.Client) int64 { return c.Session().ID() }
