package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The client's instruments count what a known workload did: every call by
// operation and outcome, the state changes, a suspension and a lost
// session.
func TestTelemetry(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	srv := zktest.NewServer(t)
	ctx := testCtx(t)
	proxy := zktest.NewProxy(t, srv.Addr())
	c := connect(t, []string{proxy.Addr()}, client.WithMeterProvider(mp), client.WithSessionTimeout(zktest.Scale(10*time.Second)))
	for range 10 {
		_, _, err := c.Exists(ctx, "/")
		require.NoError(t, err)
	}
	_, _, err := c.Get(ctx, "/missing")
	require.ErrorIs(t, err, client.ErrNoNode)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.Create(cancelled, "/x", nil, client.Persistent)
	require.ErrorIs(t, err, context.Canceled)

	sub := c.Subscribe()
	defer sub.Close()
	proxy.ResetAll()
	for ev := nextState(t, sub, 10*time.Second); ev.State != client.StateReconnected; ev = nextState(t, sub, 10*time.Second) {
	}
	old := c.Session()
	srv.ExpireSession(old.ID())
	select {
	case <-old.Done():
	case <-time.After(zktest.Scale(10 * time.Second)):
		t.Fatal("the expired session was not lost")
	}
	c.Close()

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	requests := map[[2]string]uint64{}
	states := map[string]int64{}
	var lost, suspensions int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, dp := range data.DataPoints {
					switch m.Name {
					case "zkit.client.request.duration":
						requests[[2]string{attr(dp.Attributes, "zkit.op"), attr(dp.Attributes, "zkit.outcome")}] += dp.Count
					case "zkit.client.suspension.duration":
						suspensions += int64(dp.Count)
					}
				}
			case metricdata.Sum[int64]:
				for _, dp := range data.DataPoints {
					switch m.Name {
					case "zkit.client.connection.state":
						states[attr(dp.Attributes, "zkit.state")] += dp.Value
					case "zkit.client.session.lost":
						lost += dp.Value
					}
				}
			}
		}
	}
	require.GreaterOrEqual(t, requests[[2]string{"exists", "ok"}], uint64(10), "%v", requests)
	require.Equal(t, uint64(1), requests[[2]string{"get", "error"}], "%v", requests)
	require.Equal(t, uint64(1), requests[[2]string{"create", "not_sent"}], "%v", requests)
	require.GreaterOrEqual(t, states["Suspended"], int64(1), "%v", states)
	require.GreaterOrEqual(t, states["Reconnected"], int64(1), "%v", states)
	require.Equal(t, int64(1), states["Closed"], "%v", states)
	require.GreaterOrEqual(t, suspensions, int64(1))
	require.Equal(t, int64(1), lost)
}

func attr(set attribute.Set, key string) string {
	v, _ := set.Value(attribute.Key(key))
	return v.AsString()
}
