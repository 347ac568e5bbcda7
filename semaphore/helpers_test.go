package semaphore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// semPath returns a fresh semaphore path for the test, and makes sure its
// parent exists.
func semPath(t *testing.T, c *client.Client) string {
	t.Helper()
	p := zktest.UniquePath(t)
	if err := c.EnsurePath(recipetest.Context(t), p); err != nil {
		t.Fatal(err)
	}
	return p + "/sem"
}

// holders is what a semaphore protects, in tests: it counts the leases
// held at once and records every moment there were more than max.
type holders struct {
	mu         sync.Mutex
	max        int
	inside     int
	most       int
	violations []string
}

func (h *holders) enter(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.inside += n
	h.most = max(h.most, h.inside)
	if h.inside > h.max {
		h.violations = append(h.violations, fmt.Sprintf("%d holders at once, max %d", h.inside, h.max))
	}
}

func (h *holders) leave(n int) {
	h.mu.Lock()
	h.inside -= n
	h.mu.Unlock()
}

func (h *holders) check(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.violations) > 0 {
		t.Fatalf("%d violations: %v", len(h.violations), h.violations[:min(5, len(h.violations))])
	}
}

// acquired is the outcome of an acquire run in the background.
type acquired struct {
	leases []*semaphore.Lease
	err    error
}

// acquireN starts AcquireN in the background.
func acquireN(ctx context.Context, s *semaphore.Semaphore, n int) <-chan acquired {
	ch := make(chan acquired, 1)
	go func() {
		l, err := s.AcquireN(ctx, n)
		ch <- acquired{l, err}
	}()
	return ch
}

// got waits for a background acquire and fails the test on its error.
func got(t *testing.T, ch <-chan acquired) []*semaphore.Lease {
	t.Helper()
	select {
	case a := <-ch:
		if a.err != nil {
			t.Fatal(a.err)
		}
		return a.leases
	case <-recipetest.Context(t).Done():
		t.Fatal("timed out waiting for an acquire")
	}
	return nil
}

// pending checks that a background acquire is still waiting.
func pending(t *testing.T, ch <-chan acquired, what string) {
	t.Helper()
	select {
	case a := <-ch:
		t.Fatalf("%s returned (%d leases, %v) while it should wait", what, len(a.leases), a.err)
	default:
	}
}

// unlock releases every lease, failing the test on error.
func unlock(t *testing.T, leases ...*semaphore.Lease) {
	t.Helper()
	for _, l := range leases {
		if err := l.Unlock(recipetest.Context(t)); err != nil {
			t.Fatal(err)
		}
	}
}

// waitNodes waits until the semaphore's leases and locks directories hold
// these many nodes.
func waitNodes(t *testing.T, c *client.Client, path string, leases, locks int) {
	t.Helper()
	recipetest.Eventually(t, fmt.Sprintf("%d lease and %d mutex nodes", leases, locks), func() bool {
		return len(recipetest.Children(t, c, path+"/leases")) == leases &&
			len(recipetest.Children(t, c, path+"/locks")) == locks
	})
}
