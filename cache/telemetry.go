package cache

import (
	"context"
	"sync"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipekit"
	"go.opentelemetry.io/otel/metric"
)

// Telemetry of the caches of one client, under the client's providers (see
// recipekit.Instruments for the rest), observed when the meter is read:
//
//	zkit.cache.nodes  gauge     nodes held by the client's open caches, in all
//	zkit.cache.lag    gauge     the most any of them is behind the client: zxids
//	                            between the client's last zxid and the cache's snapshot
//	zkit.cache.stale  gauge, s  the longest any of them has been stale (0 when none is)
//
// No path is an attribute: a service may cache any number of paths, and
// no client either: clients that share a meter provider while they are
// open report the same gauges, and the reading shows one of them. Give
// each client that caches a provider of its own to read them all. A
// closed client reports nothing more.
type caches struct {
	mu   sync.Mutex
	open map[*Cache]struct{}
}

type cachesKey struct{}

// tracked adds c to its client's caches, registering the instruments'
// callback with the client's first cache, and returns the function that
// takes it out when it stops.
func (c *Cache) tracked() (untrack func()) {
	v, loaded := c.cl.Local().LoadOrStore(cachesKey{}, &caches{open: map[*Cache]struct{}{}})
	cs := v.(*caches)
	if !loaded {
		cs.register(c.cl)
	}
	cs.mu.Lock()
	cs.open[c] = struct{}{}
	cs.mu.Unlock()
	return func() {
		cs.mu.Lock()
		delete(cs.open, c)
		cs.mu.Unlock()
	}
}

func (cs *caches) register(cl *client.Client) {
	m := recipekit.InstrumentsOf(cl).Meter()
	nodes, _ := m.Int64ObservableGauge("zkit.cache.nodes",
		metric.WithDescription("Nodes held by the client's open caches, in all."))
	lag, _ := m.Int64ObservableGauge("zkit.cache.lag",
		metric.WithDescription("The most any of the client's caches is behind the client, in zxids."))
	stale, _ := m.Float64ObservableGauge("zkit.cache.stale", metric.WithUnit("s"),
		metric.WithDescription("The longest any of the client's caches has been stale; 0 when none is."))
	reg, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		var n, behind int64
		var longest time.Duration
		last := cl.LastZxid()
		cs.mu.Lock()
		for c := range cs.open {
			if s := c.current(); s != nil {
				n += int64(s.Len())
				behind = max(behind, last-s.Zxid())
			}
			if st, since := c.Stale(); st {
				longest = max(longest, time.Since(since))
			}
		}
		cs.mu.Unlock()
		o.ObserveInt64(nodes, n)
		o.ObserveInt64(lag, max(behind, 0))
		o.ObserveFloat64(stale, longest.Seconds())
		return nil
	}, nodes, lag, stale)
	if err == nil {
		// A closed client reports nothing more: its zeros would replace
		// the figures of another client on the same provider, and the
		// provider would keep the client.
		context.AfterFunc(cl.Context(), func() { _ = reg.Unregister() })
	}
}
