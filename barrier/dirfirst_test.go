package barrier_test

import (
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/testing/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// creates counts the client's create requests by outcome.
func creates(t *testing.T, reader *sdkmetric.ManualReader) map[string]uint64 {
	got := map[string]uint64{}
	for k, n := range recipetest.Requests(t, reader) {
		if outcome, ok := strings.CutPrefix(k, "create "); ok {
			got[outcome] = n
		}
	}
	return got
}

// A member on a client that has not seen the barrier's directory creates
// it before its own node (two creates, none failing), where a create that
// fails for the missing directory would cost three; a member on a client
// that has seen it creates its node only.
func TestDirectoryFirstOnANewPath(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		reader := sdkmetric.NewManualReader()
		c := b.Connect(t, client.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
		path := barrierPath(t, b.Connect(t))

		first := barrier.NewDouble(c, path, 2)
		entered := make(chan error, 1)
		go func() { entered <- first.Enter(ctx) }()
		recipetest.Eventually(t, "the first member's node", func() bool {
			return creates(t, reader)["ok"] >= 2
		})
		if got := creates(t, reader); got["ok"] != 2 || len(got) != 1 {
			t.Fatalf("creates of the first member on a new path, by outcome: %v, want 2 ok (directory, node)", got)
		}
		// The client records the directory once the first member's create
		// has returned, a moment after the request was counted.
		recipetest.Eventually(t, "the client to know the directory", func() bool { return recipes.DirKnown(c, path) })
		second := barrier.NewDouble(c, path, 2)
		if err := second.Enter(ctx); err != nil {
			t.Fatal(err)
		}
		if err := recv(t, entered, "the first member's Enter"); err != nil {
			t.Fatal(err)
		}
		if got := creates(t, reader); got["ok"] != 3 || len(got) != 1 {
			t.Fatalf("creates after a second member on the same client, by outcome: %v, want 3 ok", got)
		}
		leaveAll(t, ctx, []member{{c, first}, {c, second}})
	})
}
