package barrier_test

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/logtest"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// barrierPath returns a fresh barrier path whose parent exists.
func barrierPath(t *testing.T, c *client.Client) string {
	t.Helper()
	p := zktest.UniquePath(t)
	if err := c.EnsurePath(recipetest.Context(t), p); err != nil {
		t.Fatal(err)
	}
	return p + "/barrier"
}

// members lists the member nodes (UUID names) under dir, sorted.
func members(t *testing.T, c *client.Client, dir string) []string {
	t.Helper()
	var out []string
	for _, n := range recipetest.Children(t, c, dir) {
		if len(n) == 36 && strings.Count(n, "-") == 4 {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// waitMembers waits until dir holds exactly n member nodes.
func waitMembers(t *testing.T, c *client.Client, dir string, n int) {
	t.Helper()
	recipetest.Eventually(t, "the barrier has the expected number of members", func() bool { return len(members(t, c, dir)) == n })
}

// quiet checks that nothing arrives on ch for a moment.
func quiet[T any](t *testing.T, ch <-chan T, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s: got %v", what, v)
	case <-time.After(zktest.Scale(200 * time.Millisecond)):
	}
}

// recv receives from ch within a scaled deadline.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(zktest.Scale(30 * time.Second)):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

func isInputError(err error) bool {
	var ie *client.InputError
	return errors.As(err, &ie) && errors.Is(err, client.ErrInvalidInput)
}

// ints returns the int attribute key of every record with message msg.
func ints(r *logtest.Recorder, msg, key string) []int64 {
	var out []int64
	for _, rec := range r.Records() {
		if rec.Message != msg {
			continue
		}
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key == key {
				out = append(out, a.Value.Int64())
			}
			return true
		})
	}
	return out
}
