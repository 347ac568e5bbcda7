package semaphore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// Every acquire's span ends, with an error status when the acquire
// failed: one that takes a lease (its span is the wait for the mutex and
// for room, which the lease's Multi ends by deleting the mutex node, not
// by a lock's Hold), one refused by TryAcquire, one whose context ends.
func TestAcquireSpansEnd(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		spans := tracetest.NewSpanRecorder()
		tp := trace.NewTracerProvider(trace.WithSpanProcessor(spans))
		ctx := recipetest.Context(t)
		c := b.Connect(t, client.WithTracerProvider(tp))
		s := semaphore.New(c, semPath(t, c), 1)

		l, err := s.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.TryAcquire(ctx); !errors.Is(err, semaphore.ErrNoLease) {
			t.Fatalf("TryAcquire on a full semaphore: %v", err)
		}
		short, cancel := context.WithTimeout(ctx, zktest.Scale(300*time.Millisecond))
		_, err = s.Acquire(short)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire on a full semaphore: %v", err)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}

		started, ended := len(spans.Started()), spans.Ended()
		if started != 3 || len(ended) != started {
			t.Fatalf("%d spans started, %d ended; want 3 and 3", started, len(ended))
		}
		failed := 0
		for _, sp := range ended {
			if sp.Status().Code == codes.Error {
				failed++
			}
		}
		if failed != 2 {
			t.Errorf("%d spans ended with an error, want 2 (the try and the timeout)", failed)
		}
	})
}
