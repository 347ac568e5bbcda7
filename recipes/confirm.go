package recipes

import (
	"context"

	"github.com/zkit-dev/zkit/client"
)

// Confirm checks on the server that the ticket's turn has really come,
// for recipes that must not act on a deduction alone (leader election:
// a term is only ever returned for a confirmed leader). It lists the queue
// once and reports true when the ticket's node is still there, owned by
// the ticket's session, which is still the client's session, and no lower
// node blocks it.
//
// Wait's conclusion rests on events: a lower node's deletion and no event
// on the ticket's own node. Events of different watches may reach the
// caller in any order, so an own node deleted just before its last
// predecessor (an administrator's delete, or a session that expired
// meanwhile) would go unnoticed until the lease sees it. Confirm closes
// that gap for the price of one round trip.
//
// When Confirm returns false, lower nodes are left (someone wrote to the
// node Wait watched, which Wait took for a release signal): call Wait
// again. Errors are Wait's: ctx's error, or one matching ErrLost when the
// session is lost or the ticket's node is gone.
func (t *Ticket) Confirm(ctx context.Context) (bool, error) {
	if err := t.relist(ctx); err != nil {
		return false, err
	}
	if !t.sess.Alive() {
		return false, lostSession(t.sess.Err())
	}
	if t.q.c.Session() != t.sess {
		return false, lostSession(client.ErrSessionLost)
	}
	return !t.Blocked(), nil
}
