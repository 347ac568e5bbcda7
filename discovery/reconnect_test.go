package discovery_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// A watch of a service that lives through many reconnects holds no more
// goroutines after them than before (none per instance and reconnect),
// and still sees every change.
func TestWatchAcrossReconnects(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		d := discovery.New(admin, base)
		regs := make([]*discovery.Registration, 5)
		for i := range regs {
			r, err := d.Register(ctx, instance(fmt.Sprintf("i%d", i), i))
			if err != nil {
				t.Fatal(err)
			}
			regs[i] = r
		}
		proxy := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(proxy.Dialer()))
		feed := discovery.New(c, base).Watch(ctx, "api")
		all := "i0@10.0.0.0:8000,i1@10.0.0.1:8001,i2@10.0.0.2:8002,i3@10.0.0.3:8003,i4@10.0.0.4:8004"
		awaitSnapshot(t, feed, all)
		baseline := runtime.NumGoroutine()
		for range 10 {
			before := c.Session()
			changed := c.Changed()
			proxy.ResetAll()
			<-changed
			recipetest.Eventually(t, "reconnected", func() bool { s, _ := c.Suspended(); return !s })
			if c.Session() != before {
				t.Fatal("the session changed")
			}
		}
		// The watch reads everything again after each reconnect: let it.
		upd := regs[4].Instance()
		upd.Port = 9004
		if err := regs[4].Update(ctx, upd); err != nil {
			t.Fatal(err)
		}
		awaitSnapshot(t, feed, "i0@10.0.0.0:8000,i1@10.0.0.1:8001,i2@10.0.0.2:8002,i3@10.0.0.3:8003,i4@10.0.0.4:9004")
		recipetest.WaitGoroutines(t, baseline+3)
		if err := regs[0].Unregister(ctx); err != nil {
			t.Fatal(err)
		}
		awaitSnapshot(t, feed, "i1@10.0.0.1:8001,i2@10.0.0.2:8002,i3@10.0.0.3:8003,i4@10.0.0.4:9004")
	})
}
