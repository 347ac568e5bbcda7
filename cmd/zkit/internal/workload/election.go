package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/zkit-dev/zkit/election"
)

// Election is W5_failover on zkit's election: candidates loop Campaign,
// step down at once and rejoin at the back, with Term.Requeue (the delete
// of the leader's node and its next candidacy's create in one
// transaction, as Election.Run does). One operation is one term: the
// candidate's step-down from its last term, if it holds one, then the
// wait for the next; its latency runs from the previous leader's step-down
// to the moment the next term is returned.
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
		held := make([]*election.Term, p.Clients) // each candidate's term, if it leads
		return &Instance{
			Op: func(ctx context.Context, i int) (time.Duration, error) {
				var (
					term *election.Term
					err  error
				)
				if prev := held[i]; prev != nil {
					held[i] = nil
					terms.end()
					term, err = prev.Requeue(ctx)
				} else {
					term, err = es[i].Campaign(ctx)
				}
				if err != nil {
					return 0, err
				}
				held[i] = term
				return terms.begin(), nil
			},
			Finish: func(ctx context.Context, i int) {
				if term := held[i]; term != nil {
					held[i] = nil
					terms.end()
					term.Resign(ctx)
				}
			},
			Check: func(context.Context) []string { return []string{terms.note()} },
			Close: closeAll,
		}, nil
	}}
}
