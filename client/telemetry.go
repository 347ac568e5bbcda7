package client

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Telemetry.
//
// The client reports through the OpenTelemetry API only: a
// WithMeterProvider and a WithTracerProvider, or the global providers
// (otel.GetMeterProvider, otel.GetTracerProvider) by default, which do
// nothing until the application installs an SDK. zkit pulls in no SDK
// and no exporter.
//
// Instruments of the client (the recipes add their own, see Telemetry):
//
//	zkit.client.request.duration  histogram, s   every call; zkit.op, zkit.outcome
//	zkit.client.connection.state  counter        connection and session changes; zkit.state
//	zkit.client.suspension.duration histogram, s  how long each suspension lasted, until
//	                                              reconnected, the session lost or the client closed
//	zkit.client.session.lost      counter        sessions lost; zkit.cause
//	zkit.client.watch.overflows   counter        watch feeds ended because their reader fell behind
//
// zkit.op is the call ("get", "create", "multi", ...), zkit.outcome one of
// ok, error (the server's answer, such as no node), retryable (not
// connected, or a read cut off by its connection or its context), unknown
// (a write cut off: its outcome is unknown), not_sent (the context ended
// before it left, or the connection broke while it was written) and closed
// (cut off by Close). A call refused on its
// input is not recorded, nor most calls made after Close. Paths are never
// attributes of the client's instruments: their number is not bounded.

// instrumentation is the name of the meter and the tracer.
const instrumentation = "github.com/zkit-dev/zkit"

// WithMeterProvider reports the client's metrics, and those of every
// recipe on it, to mp instead of the global meter provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.meters = mp }
}

// WithTracerProvider reports the spans of the recipes' waiting calls to tp
// instead of the global tracer provider.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tracers = tp }
}

// Telemetry is the client's meter and tracer, for the recipes built on it
// (and recipes of your own) to report under the same providers.
type Telemetry struct {
	Meter  metric.Meter
	Tracer trace.Tracer

	requests   metric.Float64Histogram
	states     metric.Int64Counter
	suspension metric.Float64Histogram
	lost       metric.Int64Counter
	overflows  metric.Int64Counter
}

// Telemetry returns the client's meter and tracer.
func (c *Client) Telemetry() *Telemetry { return c.tel }

func newTelemetry(cfg config) *Telemetry {
	mp, tp := cfg.meters, cfg.tracers
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	t := &Telemetry{Meter: mp.Meter(instrumentation), Tracer: tp.Tracer(instrumentation)}
	// Instrument creation fails only on invalid names; the no-op
	// instruments it returns then are fine.
	t.requests, _ = t.Meter.Float64Histogram("zkit.client.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of ZooKeeper requests, by operation and outcome."))
	t.states, _ = t.Meter.Int64Counter("zkit.client.connection.state",
		metric.WithDescription("Changes of the client's connection and session state."))
	t.suspension, _ = t.Meter.Float64Histogram("zkit.client.suspension.duration", metric.WithUnit("s"),
		metric.WithDescription("How long the connection stayed suspended before it came back or the session was lost."))
	t.lost, _ = t.Meter.Int64Counter("zkit.client.session.lost",
		metric.WithDescription("Sessions lost, by cause."))
	t.overflows, _ = t.Meter.Int64Counter("zkit.client.watch.overflows",
		metric.WithDescription("Watch feeds ended because their reader fell further behind than their buffer."))
	return t
}

// outcome names what became of a call, for zkit.outcome: raw is the wire
// client's error, err zkit's.
func outcome(raw, err error) string {
	var ns notSent
	switch {
	case err == nil:
		return "ok"
	case errors.As(raw, &ns):
		return "not_sent"
	case IsOutcomeUnknown(err):
		return "unknown"
	case errors.Is(err, ErrClosed):
		return "closed"
	case IsRetryable(err), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// A read cut off by its connection or its context: the server
		// did not answer it (a write cut off is unknown, above).
		return "retryable"
	}
	return "error"
}

// request records one call.
func (t *Telemetry) request(op string, start time.Time, outcome string) {
	t.requests.Record(context.Background(), time.Since(start).Seconds(), requestAttributes(op, outcome))
}

// requestAttributes returns the attribute set of a call, made once per op
// and outcome (a bounded number): building a set sorts and allocates,
// which every call would otherwise pay even with a no-op provider.
func requestAttributes(op, outcome string) metric.MeasurementOption {
	k := [2]string{op, outcome}
	if o, ok := requestSets.Load(k); ok {
		return o.(metric.MeasurementOption)
	}
	o, _ := requestSets.LoadOrStore(k, metric.WithAttributeSet(attribute.NewSet(
		attribute.String("zkit.op", op), attribute.String("zkit.outcome", outcome))))
	return o.(metric.MeasurementOption)
}

var requestSets sync.Map // [op, outcome] -> metric.MeasurementOption

// state records a change of state.
func (t *Telemetry) state(s State) {
	t.states.Add(context.Background(), 1, metric.WithAttributes(attribute.String("zkit.state", s.String())))
}

// resumed records the end of a suspension that began at since.
func (t *Telemetry) resumed(since time.Time) {
	t.suspension.Record(context.Background(), time.Since(since).Seconds())
}

// sessionLost records a lost session.
func (t *Telemetry) sessionLost(cause string) {
	t.lost.Add(context.Background(), 1, metric.WithAttributes(attribute.String("zkit.cause", cause)))
}

// watchOverflowed records a watch feed ended by its reader's falling
// behind.
func (t *Telemetry) watchOverflowed() {
	t.overflows.Add(context.Background(), 1)
}
