package recipekit

import (
	"context"
	"sync"
	"time"

	"github.com/zkit-dev/zkit/client"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Instruments are the instruments of zkit's recipes on one client, under
// the client's providers (client.WithMeterProvider,
// client.WithTracerProvider):
//
//	zkit.recipe.wait.duration    histogram, s  from joining a queue to holding; zkit.recipe
//	zkit.recipe.acquired         counter       holds taken (lock handoffs, terms, ...); zkit.recipe
//	zkit.recipe.abandoned        counter       queue attempts given up (cancelled, timed out, try, error); zkit.recipe
//	zkit.recipe.requeued         counter       waits that lost their session and queued again under the next; zkit.recipe
//	zkit.recipe.handoff.duration histogram, s  from the event that ended a wait to holding
//	                                           (for an election: the failover time); zkit.recipe
//	zkit.recipe.held.duration    histogram, s  from holding to the end; zkit.recipe, zkit.end
//	zkit.recipe.lost             counter       holds ended without release; zkit.recipe, zkit.end
//
// zkit.recipe is the recipe ("lock", "rwlock", "election", ...) and
// zkit.end why a hold ended: released, suspended (beyond the tolerance),
// session (its session lost), deleted (its node deleted by someone else)
// or closed (the client closed). The recipe's path is never a metric
// attribute, since a service may use any number of paths; it is an
// attribute of the spans (sampled), named zkit.path. A span covers each
// call that waits (acquire, campaign), with events for what it waited for
// ("queued", the node ahead; "woke", the event; "relisted") and for a
// session lost meanwhile ("requeued", the node given up; then "joined",
// the new one).
type Instruments struct {
	tracer    trace.Tracer
	meter     metric.Meter
	wait      metric.Float64Histogram
	acquired  metric.Int64Counter
	abandoned metric.Int64Counter
	requeued  metric.Int64Counter
	handoff   metric.Float64Histogram
	held      metric.Float64Histogram
	lost      metric.Int64Counter
}

type instrumentsKey struct{}

// InstrumentsOf returns the recipes' instruments on c, made on first use.
func InstrumentsOf(c *client.Client) *Instruments {
	if in, ok := c.Local().Load(instrumentsKey{}); ok {
		return in.(*Instruments)
	}
	t := c.Telemetry()
	in := &Instruments{tracer: t.Tracer, meter: t.Meter}
	in.wait, _ = t.Meter.Float64Histogram("zkit.recipe.wait.duration", metric.WithUnit("s"),
		metric.WithDescription("Time from joining a recipe's queue to holding."))
	in.acquired, _ = t.Meter.Int64Counter("zkit.recipe.acquired",
		metric.WithDescription("Holds taken: lock handoffs, terms, leases."))
	in.abandoned, _ = t.Meter.Int64Counter("zkit.recipe.abandoned",
		metric.WithDescription("Attempts given up before holding."))
	in.requeued, _ = t.Meter.Int64Counter("zkit.recipe.requeued",
		metric.WithDescription("Waits whose session was lost and that queued again under the next one."))
	in.handoff, _ = t.Meter.Float64Histogram("zkit.recipe.handoff.duration", metric.WithUnit("s"),
		metric.WithDescription("Time from the event that ended a wait (a release, a leader gone) to holding."))
	in.held, _ = t.Meter.Float64Histogram("zkit.recipe.held.duration", metric.WithUnit("s"),
		metric.WithDescription("Time from holding to the end of the hold, by why it ended."))
	in.lost, _ = t.Meter.Int64Counter("zkit.recipe.lost",
		metric.WithDescription("Holds that ended without being released, by why."))
	actual, _ := c.Local().LoadOrStore(instrumentsKey{}, in)
	return actual.(*Instruments)
}

// Meter is the client's meter, for a recipe's own instruments.
func (in *Instruments) Meter() metric.Meter { return in.meter }

// Start starts the span of a waiting call of recipe on path.
func (in *Instruments) Start(ctx context.Context, recipe, op, path string) (context.Context, trace.Span) {
	return in.tracer.Start(ctx, "zkit "+recipe+" "+op, trace.WithAttributes(
		attribute.String("zkit.recipe", recipe), attribute.String("zkit.path", path)))
}

// Acquired records a hold taken after waiting since joined; woke is when
// the event that ended the wait came (zero: the turn came at once).
func (in *Instruments) Acquired(recipe string, joined, woke time.Time) {
	set := cachedSet(recipe, "")
	in.wait.Record(context.Background(), time.Since(joined).Seconds(), set)
	in.acquired.Add(context.Background(), 1, set)
	if !woke.IsZero() {
		in.handoff.Record(context.Background(), time.Since(woke).Seconds(), set)
	}
}

// Abandoned records an attempt given up.
func (in *Instruments) Abandoned(recipe string) {
	in.abandoned.Add(context.Background(), 1, cachedSet(recipe, ""))
}

// Requeued records a wait that lost its session and queued again under
// the next one.
func (in *Instruments) Requeued(recipe string) {
	in.requeued.Add(context.Background(), 1, cachedSet(recipe, ""))
}

// Ended records the end of a hold taken at since; end is why it ended,
// the value of zkit.end.
func (in *Instruments) Ended(recipe string, since time.Time, end string) {
	set := cachedSet(recipe, end)
	in.held.Record(context.Background(), time.Since(since).Seconds(), set)
	if end != "released" {
		in.lost.Add(context.Background(), 1, set)
	}
}

// cachedSet returns the attributes zkit.recipe=recipe (and zkit.end=end
// unless end is ""), made once per distinct pair: building a set sorts and
// allocates, which every hold would otherwise pay even with a no-op
// provider. Recipes and ends are few, so the cache stays small.
func cachedSet(recipe, end string) metric.MeasurementOption {
	k := [2]string{recipe, end}
	if o, ok := attributeSets.Load(k); ok {
		return o.(metric.MeasurementOption)
	}
	attrs := []attribute.KeyValue{attribute.String("zkit.recipe", recipe)}
	if end != "" {
		attrs = append(attrs, attribute.String("zkit.end", end))
	}
	o, _ := attributeSets.LoadOrStore(k, metric.WithAttributeSet(attribute.NewSet(attrs...)))
	return o.(metric.MeasurementOption)
}

var attributeSets sync.Map // [recipe, end] -> metric.MeasurementOption
