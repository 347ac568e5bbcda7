package barrier_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// The spans of Enter and Leave end with an error status when the call
// failed, as every recipe's waiting call, and without one when it did
// not: here an Enter whose context ends before the others come, then a
// round of one member.
func TestEnterAndLeaveSpans(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		spans := tracetest.NewSpanRecorder()
		tp := trace.NewTracerProvider(trace.WithSpanProcessor(spans))
		ctx := recipetest.Context(t)
		c := b.Connect(t, client.WithTracerProvider(tp))

		short, cancel := context.WithTimeout(ctx, zktest.Scale(300*time.Millisecond))
		err := barrier.NewDouble(c, barrierPath(t, c), 2).Enter(short)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Enter alone into a barrier of 2: %v", err)
		}
		alone := barrier.NewDouble(c, barrierPath(t, c), 1)
		if err := alone.Enter(ctx); err != nil {
			t.Fatal(err)
		}
		if err := alone.Leave(ctx); err != nil {
			t.Fatal(err)
		}

		want := []codes.Code{codes.Error, codes.Unset, codes.Unset}
		ended := spans.Ended()
		if len(ended) != len(want) {
			t.Fatalf("%d spans ended, want %d", len(ended), len(want))
		}
		for i, sp := range ended {
			if sp.Status().Code != want[i] {
				t.Errorf("span %d (%s): status %v, want %v", i, sp.Name(), sp.Status(), want[i])
			}
		}
	})
}
