package lock_test

import (
	"context"
	"slices"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// The recipes' instruments count a known workload: 100 handoffs between
// two clients, then a lease lost to a deleted node.
func TestTelemetry(t *testing.T) {
	reader, spans, opts := instrumented()
	b := zktest.ReferenceBackend(t)
	ctx := recipetest.Context(t)
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

	// The lease records its end just after Done is closed, in two
	// instruments that one collection does not read at one instant.
	var got map[string]int64
	recipetest.Eventually(t, "the lost lease recorded", func() bool {
		got = collect(t, reader)
		return got["zkit.recipe.lost lock deleted"] > 0 && got["zkit.recipe.held.duration lock deleted"] > 0
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

// instrumented returns the options of a client whose metrics reader
// collects and whose spans spans records.
func instrumented() (reader *sdkmetric.ManualReader, spans *tracetest.SpanRecorder, opts []client.Option) {
	reader = sdkmetric.NewManualReader()
	spans = tracetest.NewSpanRecorder()
	opts = []client.Option{
		client.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))),
		client.WithTracerProvider(trace.NewTracerProvider(trace.WithSpanProcessor(spans))),
	}
	return reader, spans, opts
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

// A waiter whose session is lost while it waits queues again: its one
// acquire span records the requeue (a "requeued" event, then a second
// "joined") and ends with the hold, zkit.recipe.requeued counts it, and
// nothing counts as abandoned.
func TestTelemetryRequeue(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		reader, spans, opts := instrumented()
		ctx := recipetest.Context(t)
		a := b.Connect(t)
		c := b.Connect(t, opts...)
		path := recipetest.LockDir(t, a)
		held, err := lock.New(a, path).Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		waited := make(chan error, 1)
		go func() {
			l, err := lock.New(c, path).Lock(ctx)
			if err == nil {
				err = l.Unlock(ctx)
			}
			waited <- err
		}()
		recipetest.WaitChildren(t, a, path, 2)
		recipetest.WaitWatched(t, b, c.Session(), held.Node()) // waiting, not joining
		b.ExpireSession(t, c.Session())
		recipetest.Eventually(t, "the waiter queued again", func() bool {
			select {
			case err := <-waited:
				t.Fatalf("the waiter returned %v", err)
			default:
			}
			return collect(t, reader)["zkit.recipe.requeued lock "] == 1
		})
		if err := held.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-waited; err != nil {
			t.Fatalf("the waiter whose session was lost: %v", err)
		}
		got := collect(t, reader)
		for key, want := range map[string]int64{
			"zkit.recipe.requeued lock ":  1,
			"zkit.recipe.acquired lock ":  1,
			"zkit.recipe.abandoned lock ": 0,
		} {
			if got[key] != want {
				t.Errorf("%s = %d, want %d (all: %v)", key, got[key], want, got)
			}
		}
		var waits []trace.ReadOnlySpan
		for _, s := range spans.Ended() {
			if s.Name() == "zkit lock acquire" {
				waits = append(waits, s)
			}
		}
		if len(waits) != 1 {
			t.Fatalf("%d acquire spans, want 1", len(waits))
		}
		var events []string
		for _, ev := range waits[0].Events() {
			if ev.Name == "joined" || ev.Name == "requeued" {
				events = append(events, ev.Name)
			}
		}
		if !slices.Equal(events, []string{"joined", "requeued", "joined"}) || waits[0].Status().Code == codes.Error {
			t.Fatalf("the acquire span has the events %v and status %v, want joined, requeued, joined and no error", events, waits[0].Status())
		}
	})
}
