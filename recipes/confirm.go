package recipes

import (
	"context"

	"github.com/zkit-dev/zkit/client"
)

// Confirm checks on the server that the ticket's turn has really come,
// for recipes that must not act on a deduction alone (leader election:
// a term is only ever returned for a confirmed leader). It reports true
// when a listing of the queue shows the ticket's node and no lower node
// that blocks it, and the ticket's session, which owns the node, is still
// the client's live session.
//
// Wait may conclude from events alone: the deletion of the last lower node
// it knew of, or a release signal, and no event on the ticket's own node.
// Events of different watches may reach the caller in any order, so an own
// node deleted just before its last predecessor (an administrator's
// delete, or a session that expired meanwhile) would go unnoticed until
// the lease sees it. Confirm then lists the queue once. When Wait's
// conclusion already rests on a listing, that listing is the confirmation
// and Confirm sends nothing: either way the turn costs one round trip
// after the event that gave it.
//
// When Confirm returns false, lower nodes are left (someone wrote to the
// node Wait watched, which Wait took for a release signal): call Wait
// again. Errors are Wait's: ctx's error, or one matching ErrLost when the
// session is lost or the ticket's node is gone.
func (t *Ticket) Confirm(ctx context.Context) (bool, error) {
	if !t.listed {
		if err := t.relist(ctx); err != nil {
			return false, err
		}
	}
	if !t.sess.Alive() {
		return false, lostSession(t.sess.Err())
	}
	if t.q.c.Session() != t.sess {
		return false, lostSession(client.ErrSessionLost)
	}
	return !t.Blocked(), nil
}
