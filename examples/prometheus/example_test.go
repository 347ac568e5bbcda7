// Package prometheus shows zkit's OpenTelemetry instruments exported to
// Prometheus. It is a module of its own so that zkit itself depends on the
// OpenTelemetry API only, never on an SDK or an exporter.
package prometheus_test

import (
	"context"
	"fmt"
	"strings"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
	"go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

func Example() {
	srv, err := zktest.StartServer("127.0.0.1:0") // the bundled reference server
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()

	// An OpenTelemetry meter provider that Prometheus scrapes (serve the
	// registry with promhttp.HandlerFor in a real service).
	registry := prom.NewRegistry()
	exporter, err := prometheus.New(prometheus.WithRegisterer(registry))
	if err != nil {
		fmt.Println(err)
		return
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter))
	defer mp.Shutdown(context.Background())

	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers(), client.WithMeterProvider(mp))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	for range 3 {
		lease, err := lock.New(c, "/app/locks/report").Lock(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		lease.Unlock(ctx)
	}

	families, err := registry.Gather()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "zkit_recipe_acquired") || strings.HasPrefix(f.GetName(), "zkit_recipe_held_duration") {
			for _, m := range f.GetMetric() {
				n := m.GetCounter().GetValue()
				if h := m.GetHistogram(); h != nil {
					n = float64(h.GetSampleCount())
				}
				fmt.Println(f.GetName(), labels(m.GetLabel()), n)
			}
		}
	}
	// Output:
	// zkit_recipe_acquired_total zkit_recipe=lock 3
	// zkit_recipe_held_duration_seconds zkit_end=released zkit_recipe=lock 3
}

type label interface {
	GetName() string
	GetValue() string
}

// labels prints the zkit labels of a metric, sorted as Prometheus sorts them.
func labels[L label](ls []L) string {
	var out []string
	for _, l := range ls {
		if strings.HasPrefix(l.GetName(), "zkit_") {
			out = append(out, l.GetName()+"="+l.GetValue())
		}
	}
	return strings.Join(out, " ")
}
