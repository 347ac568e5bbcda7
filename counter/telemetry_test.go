package counter_test

import (
	"context"
	"sync"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// The batch-size histogram accounts for every call: 64 Adds from 32
// goroutines of one client, combined into fewer writes.
func TestTelemetry(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	b := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
	c := b.Connect(t, client.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))),
		client.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))))
	k := counter.New(c, counterPath(t))
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2 {
				if _, err := k.Add(ctx, 1); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var calls, batches int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[int64]); ok && m.Name == "zkit.counter.batch.size" {
				for _, dp := range h.DataPoints {
					calls += dp.Sum
					batches += int64(dp.Count)
				}
			}
		}
	}
	if calls != 64 || batches < 1 || batches >= 64 {
		t.Fatalf("batches %d of %d calls in all, want 64 calls in fewer batches", batches, calls)
	}
	t.Logf("64 Adds in %d batches", batches)

	// One span per Add, each saying how many calls its write combined,
	// the value it returned and which write that was: the values are
	// 1..64, and every write but the node's create names its zxid and the
	// node's version after it, one version per write.
	combined := 0
	values := map[int64]bool{}
	versionOf := map[int64]int64{} // zxid -> version
	for _, sp := range spans.Ended() {
		if sp.Name() != "zkit counter add" {
			continue
		}
		for _, ev := range sp.Events() {
			if ev.Name != "applied" {
				continue
			}
			attrs := map[string]int64{}
			for _, kv := range ev.Attributes {
				attrs[string(kv.Key)] = kv.Value.AsInt64()
			}
			if attrs["zkit.counter.combined"] < 1 {
				t.Fatalf("an Add's span says its write combined %d calls", attrs["zkit.counter.combined"])
			}
			combined++
			values[attrs["zkit.counter.value"]] = true
			zxid, ok := attrs["zkit.counter.zxid"]
			if !ok {
				continue // the create
			}
			version, ok := attrs["zkit.counter.version"]
			if v, seen := versionOf[zxid]; !ok || (seen && v != version) {
				t.Fatalf("write %#x: version %d (known: %v), and %d before", zxid, version, ok, v)
			}
			versionOf[zxid] = version
		}
	}
	if combined != 64 || len(values) != 64 || !values[1] || !values[64] {
		t.Fatalf("%d Add spans with an applied event and %d values, want 64 and 1..64", combined, len(values))
	}
	versions := map[int64]bool{}
	for _, v := range versionOf {
		versions[v] = true
	}
	if len(versionOf) == 0 || len(versions) != len(versionOf) {
		t.Fatalf("%d writes named, with %d versions: want one version per write", len(versionOf), len(versions))
	}
}
