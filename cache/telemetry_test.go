package cache_test

import (
	"context"
	"testing"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The client's caches report the nodes they hold and how far behind the
// client they are; a closed cache counts no more.
func TestTelemetry(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	b := zktest.ReferenceBackend(t)
	c := b.Connect(t, client.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	ctx := recipetest.Context(t)
	root := dir(t, c)
	zxid := mustCreate(t, c, root+"/a", root+"/b", root+"/a/c")
	tree, err := cache.OpenTree(ctx, c, root)
	if err != nil {
		t.Fatal(err)
	}
	node, err := cache.OpenNode(ctx, c, root+"/b")
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, tree, zxid)
	waitFor(t, node, zxid)
	gauges := func() map[string]int64 {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch g := m.Data.(type) {
				case metricdata.Gauge[int64]:
					for _, dp := range g.DataPoints {
						got[m.Name] = dp.Value
					}
				case metricdata.Gauge[float64]:
					for _, dp := range g.DataPoints {
						got[m.Name] = int64(dp.Value)
					}
				}
			}
		}
		return got
	}
	waitFor(t, tree, c.LastZxid())
	waitFor(t, node, c.LastZxid())
	if g := gauges(); g["zkit.cache.nodes"] != 4+1 || g["zkit.cache.lag"] != 0 || g["zkit.cache.stale"] != 0 {
		t.Fatalf("gauges %v, want 5 nodes (4 in the tree, 1 in the node cache), no lag, not stale", g)
	}
	node.Close()
	tree.Close()
	recipetest.Eventually(t, "closed caches count no more", func() bool { return gauges()["zkit.cache.nodes"] == 0 })
}

// A closed client reports its caches no more: two clients share a meter
// provider, and the one closed (whose callback ran last) must not replace
// the live one's figures with its zeros.
func TestClosedClientReportsNoMore(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		reader := sdkmetric.NewManualReader()
		mp := client.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
		live := b.Connect(t, mp)
		ctx := recipetest.Context(t)
		root := dir(t, live)
		zxid := mustCreate(t, live, root+"/a", root+"/b")
		tree, err := cache.OpenTree(ctx, live, root)
		if err != nil {
			t.Fatal(err)
		}
		defer tree.Close()
		waitFor(t, tree, zxid)

		gone := b.Connect(t, mp)
		other, err := cache.OpenNode(ctx, gone, root)
		if err != nil {
			t.Fatal(err)
		}
		other.Close()
		gone.Close()

		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		var nodes []int64
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if g, ok := m.Data.(metricdata.Gauge[int64]); ok && m.Name == "zkit.cache.nodes" {
					for _, dp := range g.DataPoints {
						nodes = append(nodes, dp.Value)
					}
				}
			}
		}
		if len(nodes) != 1 || nodes[0] != 3 {
			t.Fatalf("zkit.cache.nodes %v, want [3]: the live client's tree (the root and 2 children)", nodes)
		}
	})
}
