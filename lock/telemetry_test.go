package lock_test

import (
	"context"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/testing/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// The recipes' instruments count a known workload: 100 handoffs between
// two clients, then a lease lost to a deleted node.
func TestTelemetry(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := trace.NewTracerProvider(trace.WithSpanProcessor(spans))
	b := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
	opts := []client.Option{client.WithMeterProvider(mp), client.WithTracerProvider(tp)}
	a, c := b.Connect(t, opts...), b.Connect(t, opts...)
	path := recipetest.LockDir(t, a)
	for i := range 100 {
		cl := a
		if i%2 == 1 {
			cl = c
		}
		l, err := lock.New(cl, path).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	l, err := lock.New(a, path).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, l.Node(), -1); err != nil {
		t.Fatal(err)
	}
	<-l.Done()

	// The lease records its end just after Done is closed.
	var got map[string]int64
	recipetest.Eventually(t, "the lost lease recorded", func() bool {
		got = collect(t, reader)
		return got["zkit.recipe.lost lock deleted"] > 0
	})
	for key, want := range map[string]int64{
		"zkit.recipe.acquired lock ":              101,
		"zkit.recipe.wait.duration lock ":         101,
		"zkit.recipe.held.duration lock released": 100,
		"zkit.recipe.held.duration lock deleted":  1,
		"zkit.recipe.lost lock deleted":           1,
	} {
		if got[key] != want {
			t.Errorf("%s = %d, want %d (all: %v)", key, got[key], want, got)
		}
	}
	waits := 0
	for _, s := range spans.Ended() {
		if s.Name() == "zkit lock acquire" {
			waits++
		}
	}
	if waits != 101 {
		t.Errorf("%d acquire spans, want 101", waits)
	}
}

func value(set attribute.Set, key string) string {
	v, _ := set.Value(attribute.Key(key))
	return v.AsString()
}

// collect reads the metrics, by name and the recipe and end attributes.
func collect(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, dp := range data.DataPoints {
					got[m.Name+" "+value(dp.Attributes, "zkit.recipe")+" "+value(dp.Attributes, "zkit.end")] += int64(dp.Count)
				}
			case metricdata.Sum[int64]:
				for _, dp := range data.DataPoints {
					got[m.Name+" "+value(dp.Attributes, "zkit.recipe")+" "+value(dp.Attributes, "zkit.end")] += dp.Value
				}
			}
		}
	}
	return got
}
