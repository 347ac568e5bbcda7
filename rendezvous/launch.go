package rendezvous

import (
	"context"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Launch is the launcher's zr, from Create until Remove: the rendezvous
// of one launch. It is safe for concurrent use.
//
// It ends for good, closing Done, when zr may no longer exist:
//   - the session that owns zr is lost: expired on the server,
//     disconnected for longer than the session timeout (Err matches
//     ErrLost and client.ErrSessionLost), or the client closed (Err
//     matches client.ErrClosed);
//   - the connection stays suspended for longer than the tolerance
//     (WithSuspendTolerance, default 0: at once; Err ErrSuspended): zkit
//     then deletes zr as soon as it can, so that master and workers see
//     the launcher gone;
//   - someone else deletes zr (Err ErrNodeDeleted), or creates it anew
//     (Err matches ErrConflict);
//   - Remove is called (Err ErrReleased).
//
// zr is never created again: a new zr would be a new rendezvous, which the
// master has not filled. The master's writes to zr (Publish) do not end
// it.
type Launch struct {
	k *recipes.Kept
}

// Create creates zr, ephemeral and empty, for the launcher, and returns
// the launcher's hold on it. It returns an *client.InputError for an
// invalid path (nothing is sent), a *ConflictError when zr already exists
// (another launcher, or a master that owns it), an error matching
// client.ErrClosed when the client is closed, or ctx's error. Missing
// parents are created as persistent nodes.
func (r *Rendezvous) Create(ctx context.Context) (*Launch, error) {
	if err := checkPath("create", r.path); err != nil {
		return nil, err
	}
	opts := r.cfg.Keep()
	opts.Once = true   // a new zr would be a new rendezvous
	opts.Shared = true // the master fills it
	k, err := recipes.Keep(ctx, r.c, r.path, nil, opts)
	if err != nil {
		return nil, recipes.Wrap("create", r.path, err)
	}
	return &Launch{k: k}, nil
}

// Node is zr's path.
func (l *Launch) Node() string { return l.k.Node() }

// Session is the session that owns zr.
func (l *Launch) Session() *client.Session { return l.k.Presence().Session() }

// Token is zr's czxid: workers see it as Value.Stat.Czxid.
func (l *Launch) Token() int64 { return l.k.Presence().Token() }

// Done is closed when zr may no longer exist (see Launch).
func (l *Launch) Done() <-chan struct{} { return l.k.Done() }

// Context ends when Done is closed; context.Cause tells why.
func (l *Launch) Context() context.Context { return l.k.Context() }

// Err is nil while zr is held, then the reason it ended.
func (l *Launch) Err() error { return l.k.Err() }

// Guard returns an op that makes a client.Multi fail unless zr exists:
// put it in a Multi with the writes that must only happen while the
// launch lasts. See recipes.Presence.Guard.
func (l *Launch) Guard() client.Op { return l.k.Presence().Guard() }

// Multi applies ops atomically, and only while zr is held: it prepends
// Guard and returns the results of ops. Once the launch has ended, or
// when the guard fails on the server, nothing is applied and the error
// says why: it matches ErrLost, or ErrReleased after Remove.
func (l *Launch) Multi(ctx context.Context, ops ...client.Op) ([]client.OpResult, error) {
	res, err := l.k.Presence().Multi(ctx, ops...)
	return res, recipes.Wrap("multi", l.Node(), err)
}

// Remove deletes zr (the launcher is done): master and workers see it
// vanish. It waits for the delete while ctx allows, then leaves it to the
// background (for as long as the client lives) and returns ctx's error. If
// zr had already been lost, Remove returns why.
func (l *Launch) Remove(ctx context.Context) error {
	return recipes.Wrap("remove", l.Node(), l.k.Remove(ctx))
}
