package rendezvous

import (
	"context"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Presence is one stretch of time during which a Publication's zr is known
// to exist; see recipes.Presence.
type Presence = recipes.Presence

// Publication is zr owned by the master itself (the variant without a
// launcher), from PublishEphemeral until Remove. It is safe for concurrent
// use. It works like a group member (see package membership).
//
// zr is not always known to be published. Its current presence ends,
// closing Done, when:
//   - the session that owns zr is lost: expired on the server,
//     disconnected for longer than the session timeout (Err matches
//     ErrLost and client.ErrSessionLost), or the client closed (Err
//     matches client.ErrClosed);
//   - the connection stays suspended for longer than the tolerance
//     (WithSuspendTolerance, default 0: at once; Err ErrSuspended): zr may
//     still be there, but nothing proves it;
//   - someone else deletes zr (Err ErrNodeDeleted);
//   - another process claims zr by writing to it (Err matches
//     ErrConflict);
//   - Remove is called (Err ErrReleased).
//
// After a session loss, a suspension or a deletion zkit publishes zr
// again (a new session, a reconnect, a new node): a new Presence, with a
// new Done channel and, after a new node, a new Token. After a conflict,
// Remove or the client's Close publishing has ended for good.
type Publication struct {
	k *recipes.Kept
}

// PublishEphemeral creates zr, ephemeral and filled with data, for a
// master that owns it, and keeps it published: zr is created again under
// each new session and after someone deleted it. It returns an
// *client.InputError for an invalid path or empty data (nothing is sent),
// a *ConflictError when another session owns zr, an error matching
// client.ErrClosed when the client is closed, or ctx's error. Missing
// parents are created as persistent nodes.
func (r *Rendezvous) PublishEphemeral(ctx context.Context, data []byte) (*Publication, error) {
	if err := checkPublish(r.c, "publish", r.path, data); err != nil {
		return nil, err
	}
	k, err := recipes.Keep(ctx, r.c, r.path, data, r.cfg.Keep())
	if err != nil {
		return nil, recipes.Wrap("publish", r.path, err)
	}
	return &Publication{k: k}, nil
}

// Node is zr's path.
func (p *Publication) Node() string { return p.k.Node() }

// Session is the session that owns zr in the current (or last) presence.
func (p *Publication) Session() *client.Session { return p.k.Presence().Session() }

// Token is zr's czxid in the current (or last) presence: workers see it
// as Value.Stat.Czxid. It grows each time zr is created again.
func (p *Publication) Token() int64 { return p.k.Presence().Token() }

// Done is closed when zr may no longer be published (see Publication).
// It is the channel of the presence current at the call; once zr is
// published again, Done returns the new presence's channel.
func (p *Publication) Done() <-chan struct{} { return p.k.Done() }

// Context is the current presence's context: it ends when Done is closed;
// context.Cause tells why.
func (p *Publication) Context() context.Context { return p.k.Context() }

// Err is nil while zr is known to be published. Otherwise it is why
// publishing ended for good (ErrReleased after Remove, a *ConflictError,
// client.ErrClosed, ...), or, while zkit is publishing zr again, why the
// last presence ended.
func (p *Publication) Err() error { return p.k.Err() }

// Guard returns an op that makes a client.Multi fail unless zr exists:
// put it in a Multi with the writes that must only happen while zr is
// published. See recipes.Presence.Guard.
func (p *Publication) Guard() client.Op { return p.k.Presence().Guard() }

// Multi applies ops atomically, and only while zr is known to be
// published: it prepends Guard and returns the results of ops. While it
// is not, or when the guard fails on the server, nothing is applied and
// the error says why: it matches ErrLost (the session lost, the
// connection suspended beyond the tolerance, zr deleted or claimed), or
// ErrReleased after Remove.
func (p *Publication) Multi(ctx context.Context, ops ...client.Op) ([]client.OpResult, error) {
	res, err := p.k.Presence().Multi(ctx, ops...)
	return res, recipes.Wrap("multi", p.Node(), err)
}

// Presence is the current presence, or the last one while zr is not known
// to be published (its Done is closed then).
func (p *Publication) Presence() *Presence { return p.k.Presence() }

// Present waits until zr is known to be published and returns that
// presence, or returns why publishing ended for good, or ctx's error.
func (p *Publication) Present(ctx context.Context) (*Presence, error) {
	pr, err := p.k.Present(ctx)
	return pr, recipes.Wrap("present", p.Node(), err)
}

// Update publishes new data in zr (a new address): at once while zr is
// published, otherwise when it is created again. Empty data is an
// *client.InputError; a *ConflictError means another process wrote zr,
// and publishing ends.
func (p *Publication) Update(ctx context.Context, data []byte) error {
	// The node's path is valid, and Kept.Update checks the data's size.
	if err := checkFilled("update", p.k.Node(), data); err != nil {
		return err
	}
	return recipes.Wrap("update", p.Node(), p.k.Update(ctx, data))
}

// Remove stops publishing and deletes zr: the current presence ends with
// ErrReleased at once. It waits for the delete while ctx allows, then
// leaves it to the background (for as long as the client lives) and
// returns ctx's error. If publishing had already ended (a conflict, the
// client closed), Remove returns why.
func (p *Publication) Remove(ctx context.Context) error {
	return recipes.Wrap("remove", p.Node(), p.k.Remove(ctx))
}
