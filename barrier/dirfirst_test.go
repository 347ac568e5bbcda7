package barrier_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
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

// metered connects a client whose requests reader counts.
func metered(t *testing.T, b zktest.Backend) (*client.Client, *sdkmetric.ManualReader) {
	reader := sdkmetric.NewManualReader()
	return b.Connect(t, client.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))), reader
}

// A member on a client that has not seen the barrier's directory creates
// it before its own node (two creates, none failing), where a create that
// fails for the missing directory would cost three; a member on a client
// that has seen it creates its node only.
func TestDirectoryFirstOnANewPath(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c, reader := metered(t, b)
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
		recipetest.Eventually(t, "the client to know the directory", func() bool { return barrier.DirKnown(c, path) })
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

// A round on a path that an earlier round used sends what the first round
// sent: the directory then holds the last member's outcome (JSON), and
// making sure that data is a barrier's, not another recipe's, must not
// cost every member of every round a read of it.
func TestReusedPathSendsNoExtraRead(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c, reader := metered(t, b)
		path := barrierPath(t, b.Connect(t))
		round := func() map[string]uint64 {
			before := recipetest.Requests(t, reader)
			d := barrier.NewDouble(c, path, 1)
			if err := d.Enter(ctx); err != nil {
				t.Fatal(err)
			}
			after := recipetest.Requests(t, reader)
			if err := d.Leave(ctx); err != nil {
				t.Fatal(err)
			}
			for k, n := range before {
				after[k] -= n
				if after[k] == 0 {
					delete(after, k)
				}
			}
			return after
		}
		round() // creates the directory
		second := round()
		for i := 0; i < 3; i++ {
			if got := round(); !maps.Equal(got, second) {
				t.Fatalf("Enter on a reused path, round %d: requests %v, want %v as in the second round", i+3, got, second)
			}
		}
		if n := second["get ok"]; n != 0 {
			t.Fatalf("Enter on a reused path read the directory %d times: %v", n, second)
		}
	})
}
