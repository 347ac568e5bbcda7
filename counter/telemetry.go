package counter

import (
	"context"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipekit"
	"go.opentelemetry.io/otel/metric"
)

// Telemetry of the counter, under the client's providers (see
// recipekit.Instruments for the rest):
//
//	zkit.counter.batch.size  histogram  calls combined into one conditional write
//	zkit.counter.conflicts   histogram  writes lost to another writer before a batch's write went through
//
// Conflicts per batch divided by the batch size is the retries per
// increment.
//
// Each call's span ("zkit counter add", "... get", ...) ends with an
// "applied" event once the call succeeded: zkit.counter.combined (calls
// in its write), zkit.counter.retries (writes lost before it went
// through), zkit.counter.value (what the call returned), and, where
// known, zkit.counter.zxid and zkit.counter.version: the transaction that
// applied it and the node's version after it (for a call that changed
// nothing, the state of the node that answered it). A delta applied by
// another writer (see delegate.go) names the zxid but not the version; a
// create names neither. Two calls that returned one value can be told
// apart with them.
type instruments struct {
	batch     metric.Int64Histogram
	conflicts metric.Int64Histogram
}

type instrumentsKey struct{}

func instrumentsOf(c *client.Client) *instruments {
	if in, ok := c.Local().Load(instrumentsKey{}); ok {
		return in.(*instruments)
	}
	m := recipekit.InstrumentsOf(c).Meter()
	in := &instruments{}
	in.batch, _ = m.Int64Histogram("zkit.counter.batch.size",
		metric.WithDescription("Calls of one client combined into one conditional write."))
	in.conflicts, _ = m.Int64Histogram("zkit.counter.conflicts",
		metric.WithDescription("Writes of a batch lost to another writer before one went through."))
	actual, _ := c.Local().LoadOrStore(instrumentsKey{}, in)
	return actual.(*instruments)
}

// applied records one batch of n calls that met conflicts conflicts.
func (in *instruments) applied(n, conflicts int) {
	in.batch.Record(context.Background(), int64(n))
	in.conflicts.Record(context.Background(), int64(conflicts))
}
