package counter_test

import (
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// Add called after the session expired on the server, before the client
// noticed: its write is cut off on the dead session, read back under the
// next one, found not applied, and applied once.
func TestAddAfterUnnoticedExpiry(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := recipetest.LockDir(t, admin) + "-counter"
		opts, cut, heal := b.Blackhole(t)
		c := b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(4*time.Second)))...)
		k := counter.New(c, path)
		if _, err := k.Add(ctx, 5); err != nil {
			t.Fatal(err)
		}
		old := c.Session()
		cut()
		b.ExpireSession(t, old)
		type res struct {
			v   int64
			err error
		}
		out := make(chan res, 1)
		go func() {
			v, err := k.Add(ctx, 1)
			out <- res{v, err}
		}()
		recipetest.Eventually(t, "the client is suspended", func() bool { s, _ := c.Suspended(); return s })
		heal()
		r := <-out
		if r.err != nil || r.v != 6 {
			t.Fatalf("Add after an unnoticed expiry: %d, %v; want 6", r.v, r.err)
		}
		if v, err := counter.New(admin, path).Get(ctx); err != nil || v != 6 {
			t.Fatalf("Get: %d, %v", v, err)
		}
	})
}
