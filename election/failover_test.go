package election_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
)

// An election whose directory and parents do not exist yet, with the
// ensemble's leader killed while the first candidates create them and
// their nodes: Campaign, Requeue and Resign succeed or report a loss, one
// term at a time with growing tokens, no node is left behind while the
// sessions live, and the emptied directory, a container, goes while its
// parents stay, all with the election's ACL.
func TestFailoverWhileCreatingDirectory(t *testing.T) {
	recipetest.EachFault(t, recipetest.LeaderKills, func(t *testing.T, e *recipetest.Ensemble, f recipetest.Fault) {
		clients := e.Clients(t, 4)
		dir, parents := recipetest.UnderMissingParents(t, "election")
		var l ledger
		e.Run(t, f, len(clients), func(ctx context.Context, i int) {
			el := election.New(clients[i], dir, fmt.Sprint("candidate-", i), election.WithACL(recipetest.NoAdminACL...))
			term, err := el.Campaign(ctx)
			if !recipetest.LostAtMost(t, "Campaign", err) {
				return
			}
			l.begin(term)
			next, err := term.Requeue(ctx)
			if !recipetest.LostAtMost(t, "Requeue", err) {
				return
			}
			l.begin(next)
			recipetest.LostAtMost(t, "Resign", next.Resign(ctx))
		})
		l.check(t)
		recipetest.Layout{
			Containers: []string{dir},
			Persistent: parents,
			ACL:        recipetest.NoAdminACL,
		}.Require(t, clients[0])
	})
}
