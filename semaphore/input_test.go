package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// Bad input is an *client.InputError from every call, before anything is
// sent: an invalid path, a maximum below 1, a number of leases below 1 or
// above the maximum.
func TestBadInput(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		proxy := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(proxy.Dialer()))
		base := zktest.UniquePath(t)
		var calls []call
		add := func(path string, max, n int) {
			s := semaphore.New(c, path, max)
			calls = append(calls,
				call{fmt.Sprintf("AcquireN(%d) on %q, max %d", n, path, max), func(ctx context.Context) error { _, err := s.AcquireN(ctx, n); return err }})
			if n == 1 {
				calls = append(calls,
					call{fmt.Sprintf("Acquire on %q, max %d", path, max), func(ctx context.Context) error { _, err := s.Acquire(ctx); return err }},
					call{fmt.Sprintf("TryAcquire on %q, max %d", path, max), func(ctx context.Context) error { _, err := s.TryAcquire(ctx); return err }})
			}
		}
		for _, path := range []string{"", "relative", "/", base + "//x", base + "/x/", base + "/./x", base + "/../x", base + "/bad\x00name"} {
			add(path, 2, 1)
		}
		add(base+"/sem", 0, 1)
		add(base+"/sem", -3, 1)
		add(base+"/sem", 2, 0)
		add(base+"/sem", 2, -1)
		add(base+"/sem", 2, 3)
		refusedBeforeSending(t, ctx, proxy, c, base, calls)
	})
}

// call is one call of a semaphore, named for the failure message.
type call struct {
	name string
	fn   func(context.Context) error
}

// refusedBeforeSending checks that every call returns an
// *client.InputError, that none sent a request through proxy, and that
// nothing exists at base.
func refusedBeforeSending(t *testing.T, ctx context.Context, proxy *zktest.Proxy, c *client.Client, base string, calls []call) {
	t.Helper()
	sent := proxy.Requests()
	for _, cl := range calls {
		err := cl.fn(ctx)
		var ie *client.InputError
		if !errors.As(err, &ie) || !errors.Is(err, client.ErrInvalidInput) {
			t.Errorf("%s: %v, want an *client.InputError", cl.name, err)
		}
	}
	if n := proxy.Requests() - sent; n != 0 {
		t.Errorf("refused input sent %d requests", n)
	}
	if ok, _, err := c.Exists(ctx, base); err != nil || ok {
		t.Fatalf("something was created at %s (exists=%v, err=%v)", base, ok, err)
	}
}

// Lease data over the server's limit is refused like any bad input, before
// anything is sent: not once the attempt has made the semaphore's
// directories and taken its mutex. That holds for one lease whose data is
// too large, and for AcquireN's leases that fit one by one but not
// together in the Multi that creates them.
func TestOversizeDataRefusedBeforeSending(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		proxy := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(proxy.Dialer()))
		base := zktest.UniquePath(t)
		over := make([]byte, client.DefaultMaxBuffer)
		half := make([]byte, client.DefaultMaxBuffer/2+1024) // one fits, two do not
		big := semaphore.New(c, base+"/big", 2, semaphore.WithData(over))
		pair := semaphore.New(c, base+"/pair", 2, semaphore.WithData(half))
		calls := []call{
			{"Acquire", func(ctx context.Context) error { _, err := big.Acquire(ctx); return err }},
			{"TryAcquire", func(ctx context.Context) error { _, err := big.TryAcquire(ctx); return err }},
			{"AcquireN(1)", func(ctx context.Context) error { _, err := big.AcquireN(ctx, 1); return err }},
			{"AcquireN(2) of leases that fit one by one", func(ctx context.Context) error { _, err := pair.AcquireN(ctx, 2); return err }},
		}
		refusedBeforeSending(t, ctx, proxy, c, base, calls)
		// What fits one by one is taken one by one.
		l, err := pair.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
