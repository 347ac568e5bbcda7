package recipes

import (
	"bytes"
	"context"

	"github.com/zkit-dev/zkit/client"
)

// Presence is one stretch of time during which a [Kept] node is known to be
// present: created or adopted under one session, and watched since. It ends
// for good; when the node is present again (a new session, a reconnect
// after a suspension beyond the tolerance, a re-creation after someone
// deleted it) that is a new Presence.
//
// Done is closed, and Context ends, when the node may no longer be present:
//   - its session was lost (cause matches ErrLost and client.ErrSessionLost,
//     or client.ErrClosed);
//   - the connection stayed suspended for longer than the tolerance (cause
//     ErrSuspended): the node may still be there, but nothing proves it;
//   - someone else deleted the node (cause ErrNodeDeleted);
//   - another process claimed the node by writing to it (cause matches
//     ErrConflict);
//   - its owner removed it (cause ErrReleased).
type Presence struct {
	c      *client.Client
	path   string
	sess   *client.Session
	token  int64
	ctx    context.Context
	cancel context.CancelCauseFunc

	// Guarded by the Kept's writeMu: the node's data version as this
	// process last wrote it, and the data of a write whose outcome is
	// unknown (nil when there is none).
	version int32
	pending []byte
}

// pendingApplied reports whether the node's data and Stat show p's write
// whose outcome is unknown applied: the next version, with that data.
// Called with the Kept's writeMu held.
func (p *Presence) pendingApplied(data []byte, st *client.Stat) bool {
	return p.pending != nil && st.Version == p.version+1 && bytes.Equal(data, p.pending)
}

// unsettled is data as a write whose outcome is unknown: never nil, since
// a nil pending means no write pending, and an empty write can be pending
// too.
func unsettled(data []byte) []byte {
	if data == nil {
		return []byte{}
	}
	return data
}

func newPresence(c *client.Client, path string, sess *client.Session, st *client.Stat) *Presence {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &Presence{c: c, path: path, sess: sess, token: st.Czxid, version: st.Version, ctx: ctx, cancel: cancel}
}

// Node is the node's full path.
func (p *Presence) Node() string { return p.path }

// Session is the session that owns the node during this presence.
func (p *Presence) Session() *client.Session { return p.sess }

// Token is the czxid of the node: it differs between two creations of the
// node, and increases from one to the next.
func (p *Presence) Token() int64 { return p.token }

// Done is closed when the presence ends; Context tells why.
func (p *Presence) Done() <-chan struct{} { return p.ctx.Done() }

// Context ends when the presence ends; context.Cause gives the reason.
func (p *Presence) Context() context.Context { return p.ctx }

// Err is nil while the presence lasts, then the reason it ended.
func (p *Presence) Err() error { return context.Cause(p.ctx) }

// Guard returns an op that makes a client.Multi fail unless the node still
// exists: put it in a Multi with the writes that must only happen while
// the node is present. The node's name is fixed, so a node of the same
// name that another session created after this one's was deleted passes
// the guard too; this process reports such a node as a conflict (Err), and
// Multi checks that first. Writes outside ZooKeeper carry Token instead.
func (p *Presence) Guard() client.Op { return client.CheckOp(p.path, -1) }

// Multi applies ops atomically, and only while the presence lasts: it
// prepends Guard and returns the results of ops. When the presence has
// ended, or the guard fails on the server, nothing is applied and the
// error matches ErrLost.
func (p *Presence) Multi(ctx context.Context, ops ...client.Op) ([]client.OpResult, error) {
	return guarded(ctx, p.c, p.path, p.ctx, p.Guard(), ops)
}

// end ends the presence with cause, unless it has already ended.
func (p *Presence) end(cause error) { p.cancel(cause) }
