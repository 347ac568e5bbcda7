package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
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
	t.Parallel()
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

	m := collect(t, reader)
	requests, states := m.requests, m.states
	lost, suspensions := m.lost, int64(m.suspensions)
	require.GreaterOrEqual(t, requests[[2]string{"exists", "ok"}], uint64(10), "%v", requests)
	require.Equal(t, uint64(1), requests[[2]string{"get", "error"}], "%v", requests)
	require.Equal(t, uint64(1), requests[[2]string{"create", "not_sent"}], "%v", requests)
	require.GreaterOrEqual(t, states["Suspended"], int64(1), "%v", states)
	require.GreaterOrEqual(t, states["Reconnected"], int64(1), "%v", states)
	require.Equal(t, int64(1), states["Closed"], "%v", states)
	require.GreaterOrEqual(t, suspensions, int64(1))
	require.Equal(t, int64(1), lost)
}

// clientMetrics is what the client's instruments recorded.
type clientMetrics struct {
	requests    map[[2]string]uint64 // calls by zkit.op and zkit.outcome
	states      map[string]int64     // state changes by zkit.state
	lost        int64                // sessions lost
	suspensions uint64               // suspensions recorded
	suspended   float64              // their total duration, s
}

// collect reads the client's instruments from reader.
func collect(t *testing.T, reader *sdkmetric.ManualReader) clientMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	m := clientMetrics{requests: map[[2]string]uint64{}, states: map[string]int64{}}
	for _, sm := range rm.ScopeMetrics {
		for _, metric := range sm.Metrics {
			switch data := metric.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, dp := range data.DataPoints {
					switch metric.Name {
					case "zkit.client.request.duration":
						m.requests[[2]string{attr(dp.Attributes, "zkit.op"), attr(dp.Attributes, "zkit.outcome")}] += dp.Count
					case "zkit.client.suspension.duration":
						m.suspensions += dp.Count
						m.suspended += dp.Sum
					}
				}
			case metricdata.Sum[int64]:
				for _, dp := range data.DataPoints {
					switch metric.Name {
					case "zkit.client.connection.state":
						m.states[attr(dp.Attributes, "zkit.state")] += dp.Value
					case "zkit.client.session.lost":
						m.lost += dp.Value
					}
				}
			}
		}
	}
	return m
}

func attr(set attribute.Set, key string) string {
	v, _ := set.Value(attribute.Key(key))
	return v.AsString()
}

// Every suspension is recorded once, however it ends: here one that the
// server's expiry of the session ends (the client learns of it when it
// reconnects), and one that Close ends. Neither came back, and neither
// ran into the client's own loss timer.
func TestEverySuspensionIsRecorded(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		proxy := zktest.NewProxy(t, b.Addr())
		ctx := testCtx(t)
		c, err := client.Connect(ctx, []string{proxy.Addr()}, client.WithMeterProvider(mp),
			client.WithSessionTimeout(zktest.Scale(20*time.Second)))
		require.NoError(t, err)
		defer c.Close()
		sub := c.Subscribe()
		defer sub.Close()
		partition := func() {
			proxy.Blackhole()
			proxy.ResetAll()
			require.Equal(t, client.StateSuspended, nextState(t, sub, 10*time.Second).State)
		}

		sess := c.Session()
		partition()
		b.ExpireSession(t, sess)
		proxy.Heal()
		require.Equal(t, client.StateLost, nextState(t, sub, 20*time.Second).State)
		require.ErrorIs(t, sess.Err(), client.ErrSessionExpired)
		require.Equal(t, client.StateConnected, nextState(t, sub, 20*time.Second).State)

		partition()
		c.Close()
		suspended, _ := c.Suspended()
		assert.False(t, suspended, "Suspended after Close: the session ended with the client")

		m := collect(t, reader)
		assert.Equal(t, int64(2), m.states["Suspended"], "%v", m.states)
		assert.Equal(t, uint64(2), m.suspensions, "suspensions recorded")
		assert.Greater(t, m.suspended, 0.0)
		assert.Equal(t, int64(1), m.lost)
	})
}

// A call cut off is recorded by what it was: a read whose connection or
// context ended before its reply came is retryable, a write unknown; the
// server answered neither, so neither is an error.
func TestOutcomeOfCallsCutOff(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		proxy := zktest.NewProxy(t, b.Addr())
		ctx := testCtx(t)
		c := connect(t, []string{proxy.Addr()}, client.WithMeterProvider(mp),
			client.WithSessionTimeout(zktest.Scale(20*time.Second)))
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		before := collect(t, reader).requests

		// The context ends while the requests are on the silent network.
		proxy.Blackhole()
		short, cancel := context.WithTimeout(ctx, zktest.Scale(200*time.Millisecond))
		_, _, err := c.Get(short, base)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
		short, cancel = context.WithTimeout(ctx, zktest.Scale(200*time.Millisecond))
		_, err = c.Create(short, base+"/a", nil, client.Persistent)
		cancel()
		require.True(t, client.IsOutcomeUnknown(err), "%v", err)

		// The connection ends under them.
		errs := make(chan error, 2)
		sent := proxy.Requests()
		go func() { _, _, err := c.Get(ctx, base); errs <- err }()
		go func() { _, err := c.Create(ctx, base+"/b", nil, client.Persistent); errs <- err }()
		eventually(t, 10*time.Second, "both calls sent", func() bool { return proxy.Requests() >= sent+2 })
		proxy.ResetAll()
		for range 2 {
			err := <-errs
			require.True(t, client.IsRetryable(err) || client.IsOutcomeUnknown(err), "%v", err)
		}

		after := collect(t, reader).requests
		for key, want := range map[[2]string]uint64{
			{"get", "retryable"}:  2,
			{"create", "unknown"}: 2,
			{"get", "error"}:      0,
			{"create", "error"}:   0,
		} {
			assert.Equal(t, want, after[key]-before[key], "%v (all: %v)", key, after)
		}
	})
}
