package barrier_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/testing/recipetest"
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

// logRecorder is a slog handler that keeps the records it is given.
type logRecorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

// ints returns the int attribute key of every record with message msg.
func (r *logRecorder) ints(msg, key string) []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int64
	for _, rec := range r.recs {
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
