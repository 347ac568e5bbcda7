package discovery

import (
	"context"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
	"github.com/zkit-dev/zkit/recipes"
)

// Discovery is the service registry at a base path, in the layout of
// Curator's ServiceDiscovery: "<base>/<service>/<instance id>". It is safe
// for concurrent use and holds nothing itself: each Register makes a
// Registration of its own, each Watch and Provider follows on its own.
type Discovery struct {
	c    *client.Client
	base string
	cfg  config
}

// New returns the registry at base. It does no I/O: base is checked by
// each call, before anything is sent. The options apply to every call on
// it.
func New(c *client.Client, base string, opts ...Option) *Discovery {
	cfg := recipes.Apply(opts)
	return &Discovery{c: c, base: base, cfg: cfg}
}

// Base is the registry's base path.
func (d *Discovery) Base() string { return d.base }

// Register registers inst and keeps it registered until Unregister (see
// Registration): it creates the ephemeral node "<base>/<inst.Name>/<inst.ID>"
// holding inst's JSON, and makes it again under each new session, after
// someone deleted it, and adopts it again after a reconnect. A zero
// inst.Registered is set to the current time.
//
// It returns once the node is present, or with an error: an
// *client.InputError for input CheckInstance refuses (nothing is sent); a
// *ConflictError when another session owns the id (a live Java or Go
// instance, or a crashed predecessor whose session has not expired yet:
// retry after the session timeout), or a persistent node holds it; an
// error matching recipes.ErrOtherRecipe, with nothing written, when the
// service's node is a configuration's or an open double barrier's (its
// flag shows it: layout.Discovery), whose readers would refuse the path
// once the instance's ephemeral node is there; an
// error matching client.ErrClosed when the client is closed; ctx's error.
// Called while the client replaces a lost session, it waits for the next
// one within ctx.
//
// The service's node is created when missing as a container node where the
// server has them (as Curator does: the server deletes it once its last
// instance is gone), here and whenever the instance is registered again,
// the base and its parents as persistent nodes.
func (d *Discovery) Register(ctx context.Context, inst Instance) (*Registration, error) {
	inst = normalize(inst, Instance{})
	data, err := encode("register", d.base, inst, d.c.MaxData)
	if err != nil {
		return nil, err
	}
	service := client.JoinPath(d.base, inst.Name)
	node := client.JoinPath(service, inst.ID)
	inst.Path = node
	if err := layout.Discovery.CheckFlag(ctx, d.c, service); err != nil {
		return nil, recipes.Wrap("register", node, err)
	}
	if err := recipes.CreateDir(ctx, d.c, service, d.cfg.CreateOptions()...); err != nil {
		return nil, recipes.Wrap("register", node, err)
	}
	opts := d.cfg.Keep()
	opts.ParentContainer = true // also when registering again after the server deleted it
	k, err := recipes.Keep(ctx, d.c, node, data, opts)
	if err != nil {
		return nil, recipes.Wrap("register", node, err)
	}
	return &Registration{c: d.c, base: d.base, k: k, inst: inst}, nil
}

// normalize fills in what Register and Update leave to zkit: the type,
// the registration time (that of prev when it has one, else now), and
// clears what is only read.
func normalize(inst, prev Instance) Instance {
	if inst.Type == "" {
		inst.Type = Dynamic
	}
	if inst.Registered.IsZero() {
		inst.Registered = prev.Registered
	}
	if inst.Registered.IsZero() {
		inst.Registered = time.Now()
	}
	inst.Registered = time.UnixMilli(inst.Registered.UnixMilli()).UTC()
	inst.Path, inst.Stat = "", nil
	return inst
}
