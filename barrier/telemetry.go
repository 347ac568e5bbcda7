package barrier

import (
	"context"
	"errors"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipekit"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Telemetry of the double barrier, under the client's providers (see
// recipekit.Instruments for the spans of Enter and Leave):
//
//	zkit.barrier.round.duration  histogram, s  from Enter to the end of Leave; zkit.outcome
//
// zkit.outcome is ok, member_lost (another member vanished instead of
// leaving), lost (this member's own session) or error.
type instruments struct {
	round metric.Float64Histogram
}

type instrumentsKey struct{}

// roundDone records a round that began at began and whose Leave returned err.
func roundDone(c *client.Client, began time.Time, err error) {
	in, ok := c.Local().Load(instrumentsKey{})
	if !ok {
		m := recipekit.InstrumentsOf(c).Meter()
		h, _ := m.Float64Histogram("zkit.barrier.round.duration", metric.WithUnit("s"),
			metric.WithDescription("Time from a member's Enter to the end of its Leave."))
		in, _ = c.Local().LoadOrStore(instrumentsKey{}, &instruments{round: h})
	}
	outcome := "ok"
	switch {
	case err == nil:
	case errors.Is(err, ErrMemberLost):
		outcome = "member_lost"
	case errors.Is(err, ErrLost):
		outcome = "lost"
	default:
		outcome = "error"
	}
	in.(*instruments).round.Record(context.Background(), time.Since(began).Seconds(),
		metric.WithAttributes(attribute.String("zkit.outcome", outcome)))
}

// endSpan ends the span of Enter or Leave, whose error is err: with an
// error status when the call failed, as every recipe's waiting call.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
