package discovery

import (
	"context"
	"sync"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Presence is one stretch of time during which a registered instance is
// known to be present; see recipes.Presence.
type Presence = recipes.Presence

// Registration is this process's registration of one instance, from
// Register until Unregister. It is safe for concurrent use.
//
// An instance is not always present. Its current presence ends, closing
// Done, when:
//   - the session that owns its node is lost: expired on the server,
//     disconnected for longer than the session timeout (Err matches
//     ErrLost and client.ErrSessionLost), or the client closed (Err
//     matches client.ErrClosed);
//   - the connection stays suspended for longer than the tolerance
//     (WithSuspendTolerance, default 0: at once; Err ErrSuspended): the
//     node may still be there, and others may still find it, but nothing
//     proves it;
//   - someone else deletes its node (Err ErrNodeDeleted);
//   - another process claims its id by writing to its node, or by
//     creating it again after deleting it (Err matches ErrConflict), as
//     Curator's registerService of the same id may;
//   - Unregister is called (Err ErrReleased).
//
// After a session loss, a suspension or a deletion zkit registers the
// instance again (a new session, a reconnect, a new node): a new Presence,
// with a new Done channel and, after a new node, a new Token; after a
// session loss or a deletion others see the instance gone meanwhile, then
// back. After a conflict, Unregister or the client's Close the
// registration has ended for good.
type Registration struct {
	c    *client.Client
	base string
	k    *recipes.Kept

	updating sync.Mutex // serializes Updates
	mu       sync.Mutex
	inst     Instance
}

// Instance is the instance as last given to Register or Update (an Update
// that failed included, once its input was accepted: zkit writes it when
// it creates the node again), with Path set to its node.
func (r *Registration) Instance() Instance {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.inst
}

// Node is the instance's node: "<base>/<name>/<id>".
func (r *Registration) Node() string { return r.k.Node() }

// Session is the session that owns the instance's node in the current (or
// last) presence.
func (r *Registration) Session() *client.Session { return r.k.Presence().Session() }

// Token is the czxid of the instance's node in the current (or last)
// presence: it grows each time the node is created again.
func (r *Registration) Token() int64 { return r.k.Presence().Token() }

// Done is closed when the instance may no longer be present (see
// Registration). It is the channel of the presence current at the call;
// once the instance is present again, Done returns the new presence's.
func (r *Registration) Done() <-chan struct{} { return r.k.Done() }

// Context is the current presence's context: it ends when Done is closed;
// context.Cause tells why.
func (r *Registration) Context() context.Context { return r.k.Context() }

// Err is nil while the instance is known to be present. Otherwise it is
// why the registration ended for good (ErrReleased after Unregister, a
// *ConflictError, client.ErrClosed, ...), or, while zkit is registering
// the instance again, why the last presence ended.
func (r *Registration) Err() error { return r.k.Err() }

// Guard returns an op that makes a client.Multi fail unless the
// instance's node exists: put it in a Multi with the writes that must only
// happen while the instance is registered. See recipes.Presence.Guard.
func (r *Registration) Guard() client.Op { return r.k.Presence().Guard() }

// Multi applies ops atomically, and only while the instance is present: it
// prepends Guard and returns the results of ops. While the instance is not
// known to be present, or when the guard fails on the server, nothing is
// applied and the error says why: it matches ErrLost (the session lost,
// the connection suspended beyond the tolerance, the node deleted or
// claimed), or ErrReleased after Unregister.
func (r *Registration) Multi(ctx context.Context, ops ...client.Op) ([]client.OpResult, error) {
	res, err := r.k.Presence().Multi(ctx, ops...)
	return res, recipes.Wrap("multi", r.Node(), err)
}

// Presence is the current presence, or the last one while the instance is
// not known to be present (its Done is closed then).
func (r *Registration) Presence() *Presence { return r.k.Presence() }

// Present waits until the instance is known to be present and returns
// that presence, or returns why the registration ended for good, or ctx's
// error.
func (r *Registration) Present(ctx context.Context) (*Presence, error) {
	p, err := r.k.Present(ctx)
	return p, recipes.Wrap("present", r.Node(), err)
}

// Update replaces the instance's data with inst (Curator's
// updateService): at once while the instance is present (waiting within
// ctx while the connection is down), otherwise when its node is created
// again. inst must have the registered Name and ID; a
// zero Registered keeps the registration time. Input that CheckInstance
// refuses, or another name or id, is an *client.InputError (nothing is
// sent). A *ConflictError means another process wrote the node; the
// registration then ends. A write whose reply is lost is read back; if
// ctx ends first, the error matches client.ErrOutcomeUnknown.
func (r *Registration) Update(ctx context.Context, inst Instance) error {
	r.updating.Lock()
	defer r.updating.Unlock()
	prev := r.Instance()
	inst = normalize(inst, prev)
	if inst.Name != prev.Name || inst.ID != prev.ID {
		return &client.InputError{Op: "update", Path: r.Node(),
			Reason: "an update must keep the instance's name and id (register the new one, unregister this one)"}
	}
	data, err := encode("update", r.base, inst, r.c.MaxData)
	if err != nil {
		return err
	}
	inst.Path = r.Node()
	r.mu.Lock()
	r.inst = inst
	r.mu.Unlock()
	return recipes.Wrap("update", r.Node(), r.k.Update(ctx, data))
}

// Unregister ends the registration and deletes the instance's node
// (Curator's unregisterService): the current presence ends with
// ErrReleased at once. It waits for the delete while ctx allows, and
// otherwise leaves it to the background (for as long as the client lives)
// and returns ctx's error. If the registration had already ended (a
// conflict, the client closed), Unregister returns why. Calling it again
// returns the same.
func (r *Registration) Unregister(ctx context.Context) error {
	return recipes.Wrap("unregister", r.Node(), r.k.Remove(ctx))
}
