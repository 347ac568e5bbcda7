package client

import (
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// What the client's telemetry costs per call, beside a call's own cost (a
// round trip to a server: 100 µs on loopback, a millisecond or more on a
// network). go test -run NONE -bench RequestTelemetry -benchmem ./client
func BenchmarkRequestTelemetry(b *testing.B) {
	for _, p := range []struct {
		name string
		cfg  config
	}{
		{"noop", config{meters: noop.NewMeterProvider()}},
		{"sdk", config{meters: sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))}},
	} {
		b.Run(p.name, func(b *testing.B) {
			t := newTelemetry(p.cfg)
			start := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				t.request("get", start, "ok")
			}
		})
	}
}
