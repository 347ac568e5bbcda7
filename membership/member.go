package membership

import (
	"context"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Presence is one stretch of time during which a member is known to be
// present; see recipes.Presence.
type Presence = recipes.Presence

// Member is this process's membership of a group, from Join until Leave.
// It is safe for concurrent use.
//
// A member is not always present. Its current presence ends, closing
// Done, when:
//   - the session that owns its node is lost: expired on the server,
//     disconnected for longer than the session timeout (Err matches
//     ErrLost and client.ErrSessionLost), or the client closed (Err
//     matches client.ErrClosed);
//   - the connection stays suspended for longer than the tolerance
//     (WithSuspendTolerance, default 0: at once; Err ErrSuspended): the
//     node may still be there, but nothing proves it;
//   - someone else deletes its node (Err ErrNodeDeleted);
//   - another process claims its id by writing to its node (Err matches
//     ErrConflict);
//   - Leave is called (Err ErrReleased).
//
// After a session loss, a suspension or a deletion zkit makes the member
// present again (a new session, a reconnect, a new node): a new Presence,
// with a new Done channel and, after a new node, a new Token. After a
// conflict, Leave or the client's Close the membership has ended for good.
type Member struct {
	id string
	k  *recipes.Kept
}

// ID is the member's id.
func (m *Member) ID() string { return m.id }

// Node is the member's node: "<path>/<id>".
func (m *Member) Node() string { return m.k.Node() }

// Session is the session that owns the member's node in the current (or
// last) presence.
func (m *Member) Session() *client.Session { return m.k.Presence().Session() }

// Token is the czxid of the member's node in the current (or last)
// presence: it grows each time the node is created again.
func (m *Member) Token() int64 { return m.k.Presence().Token() }

// Done is closed when the member may no longer be present (see Member).
// It is the channel of the presence current at the call; once the member
// is present again, Done returns the new presence's channel.
func (m *Member) Done() <-chan struct{} { return m.k.Done() }

// Context is the current presence's context: it ends when Done is closed;
// context.Cause tells why.
func (m *Member) Context() context.Context { return m.k.Context() }

// Err is nil while the member is known to be present. Otherwise it is why
// the membership ended for good (ErrReleased after Leave, a
// *ConflictError, client.ErrClosed, ...), or, while zkit is making the
// member present again, why the last presence ended.
func (m *Member) Err() error { return m.k.Err() }

// Guard returns an op that makes a client.Multi fail unless the member's
// node exists: put it in a Multi with the writes that must only happen
// while the member is present. See recipes.Presence.Guard.
func (m *Member) Guard() client.Op { return m.k.Presence().Guard() }

// Multi applies ops atomically, and only while the member is present: it
// prepends Guard and returns the results of ops. While the member is not
// known to be present, or when the guard fails on the server, nothing is
// applied and the error says why: it matches ErrLost (the session lost,
// the connection suspended beyond the tolerance, the node deleted or
// claimed), or ErrReleased after Leave.
func (m *Member) Multi(ctx context.Context, ops ...client.Op) ([]client.OpResult, error) {
	res, err := m.k.Presence().Multi(ctx, ops...)
	return res, recipes.Wrap("multi", m.Node(), err)
}

// Presence is the current presence, or the last one while the member is
// not known to be present (its Done is closed then).
func (m *Member) Presence() *Presence { return m.k.Presence() }

// Present waits until the member is known to be present and returns that
// presence, or returns why the membership ended for good, or ctx's error.
func (m *Member) Present(ctx context.Context) (*Presence, error) {
	p, err := m.k.Present(ctx)
	return p, recipes.Wrap("present", m.Node(), err)
}

// Update replaces the member's payload: at once while the member is
// present, otherwise when its node is created again. A *ConflictError
// means another process wrote the node; the membership then ends. Data
// over the limit is an *client.InputError.
func (m *Member) Update(ctx context.Context, data []byte) error {
	return recipes.Wrap("update", m.Node(), m.k.Update(ctx, data))
}

// Leave ends the membership and deletes the member's node: the current
// presence ends with ErrReleased at once. It waits for the delete while
// ctx allows, and otherwise leaves it to the background (for as long as
// the client lives) and returns ctx's error. If the membership had
// already ended (a conflict, the client closed), Leave returns why.
func (m *Member) Leave(ctx context.Context) error {
	return recipes.Wrap("leave", m.Node(), m.k.Remove(ctx))
}
