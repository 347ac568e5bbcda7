package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/zkit-dev/zkit/election"
)

// Election is W5_failover on zkit's election: candidates loop Campaign,
// step down at once (Resign) and rejoin at the back. One operation is one
// term; its latency runs from the previous leader's step-down to the
// moment Campaign returns the next term.
func Election() Spec {
	return Spec{Workload: "W5_failover", Impl: "zkit.Election", Setup: func(ctx context.Context, p Point) (*Instance, error) {
		cs, path, closeAll, err := connectAt(ctx, p, "failover")
		if err != nil {
			return nil, err
		}
		es := make([]*election.Election, p.Clients)
		for i := range es {
			es[i] = election.New(cs[i%len(cs)], path, fmt.Sprintf("cand-%d", i))
		}
		var terms terms
		return &Instance{
			Op: func(ctx context.Context, i int) (time.Duration, error) {
				term, err := es[i].Campaign(ctx)
				if err != nil {
					return 0, err
				}
				lat := terms.begin()
				terms.end()
				return lat, term.Resign(ctx)
			},
			Check: func(context.Context) []string { return []string{terms.note()} },
			Close: closeAll,
		}, nil
	}}
}
