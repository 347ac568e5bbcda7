package cache_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/internal/recipetest"
)

// follower reads a cache's events into a tree of its own.
type follower struct {
	mu    sync.Mutex
	nodes map[string][]byte
	last  int64
	inits int
	errs  []error
}

func follow(t *testing.T, c *cache.Cache) *follower {
	f := &follower{nodes: map[string][]byte{}}
	go func() {
		for ev := range c.Events() {
			f.mu.Lock()
			switch {
			case ev.Zxid == 0 && ev.Type != cache.Deleted:
				f.errs = append(f.errs, fmt.Errorf("event %v %s without a zxid", ev.Type, ev.Path))
			case ev.Zxid != 0 && ev.Zxid < f.last: // 0: a delete whose zxid the server did not say
				f.errs = append(f.errs, fmt.Errorf("event %v %s at %#x after %#x", ev.Type, ev.Path, ev.Zxid, f.last))
			}
			f.last = max(f.last, ev.Zxid)
			switch ev.Type {
			case cache.Created:
				if _, ok := f.nodes[ev.Path]; ok {
					f.errs = append(f.errs, fmt.Errorf("created %s, which exists", ev.Path))
				}
				f.nodes[ev.Path] = ev.Data
			case cache.Changed:
				if _, ok := f.nodes[ev.Path]; !ok {
					f.errs = append(f.errs, fmt.Errorf("changed %s, which does not exist", ev.Path))
				}
				f.nodes[ev.Path] = ev.Data
			case cache.Deleted:
				if _, ok := f.nodes[ev.Path]; !ok {
					f.errs = append(f.errs, fmt.Errorf("deleted %s, which does not exist", ev.Path))
				}
				delete(f.nodes, ev.Path)
			case cache.Initialized:
				f.inits++
			}
			f.mu.Unlock()
		}
	}()
	return f
}

// converges waits until the events add up to s, and checks that they were
// sound.
func (f *follower) converges(t *testing.T, s *cache.Snapshot) {
	t.Helper()
	recipetest.Eventually(t, "the events add up to the last snapshot", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		// Initialized comes after the first load's events: an empty tree
		// matches before it has come.
		if f.inits == 0 || len(f.nodes) != s.Len() {
			return false
		}
		for p, d := range f.nodes {
			n, ok := s.Get(p)
			if !ok || !bytes.Equal(n.Data, d) {
				return false
			}
		}
		return true
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inits != 1 {
		t.Errorf("%d initialized events, want 1", f.inits)
	}
	for _, err := range f.errs {
		t.Error(err)
	}
}
