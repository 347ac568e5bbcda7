package recipetest

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Requests counts the requests a client with reader's meter provider sent,
// by operation and outcome ("create ok", "create error", ...), from its
// zkit.client.request.duration histogram.
func Requests(t testing.TB, reader *sdkmetric.ManualReader) map[string]uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok || m.Name != "zkit.client.request.duration" {
				continue
			}
			for _, dp := range h.DataPoints {
				op, _ := dp.Attributes.Value("zkit.op")
				outcome, _ := dp.Attributes.Value("zkit.outcome")
				got[op.AsString()+" "+outcome.AsString()] += dp.Count
			}
		}
	}
	return got
}
