package cache_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// A cache closed by its Close, its client still open, stops with an error
// that matches client.ErrClosed as well as ErrClosed: one check covers a
// closed cache and a closed client.
func TestErrClosedMatchesClientErrClosed(t *testing.T) {
	if !errors.Is(cache.ErrClosed, client.ErrClosed) {
		t.Fatalf("errors.Is(cache.ErrClosed, client.ErrClosed) is false")
	}
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := zktest.UniquePath(t)
		if err := c.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		cc, err := cache.OpenTree(ctx, c, path)
		if err != nil {
			t.Fatal(err)
		}
		cc.Close()
		if !errors.Is(cc.Err(), cache.ErrClosed) || !errors.Is(cc.Err(), client.ErrClosed) {
			t.Fatalf("Err after Close: %v, want cache.ErrClosed and client.ErrClosed", cc.Err())
		}
		if _, err := cc.WaitFor(context.Background(), 1<<62); !errors.Is(err, client.ErrClosed) {
			t.Fatalf("WaitFor after Close: %v, want client.ErrClosed", err)
		}
		if c.Context().Err() != nil {
			t.Fatal("the cache's Close closed its client")
		}
	})
}
