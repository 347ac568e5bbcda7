package recipes

import "context"

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
// When Confirm returns false, the turn has not come: lower nodes are left
// (someone wrote to the node Wait watched, which Wait took for a release
// signal), or the ticket's session was lost, and the ticket has joined the
// queue again under the next one (see Rejoin). Call Wait again. Errors are
// Wait's: ctx's error, client.ErrClosed, or one matching ErrNodeDeleted
// when the ticket's node is gone.
func (t *Ticket) Confirm(ctx context.Context) (bool, error) {
	if !t.listed {
		if err := t.relist(ctx); err != nil {
			return false, t.Rejoin(ctx, err)
		}
	}
	if !t.sess.Alive() || t.q.c.Session() != t.sess {
		return false, t.Rejoin(ctx, LostSession(t.q.c, nil))
	}
	return !t.Blocked(), nil
}
