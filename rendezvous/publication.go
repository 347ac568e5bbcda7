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
// use.
type Publication struct {
	k *recipes.Kept
}

// PublishEphemeral creates zr at path, ephemeral and filled with data, and
// keeps it published: zr is created again under each new session and after
// someone deleted it. It returns an *client.InputError for an invalid path
// or empty data (nothing is sent), a *ConflictError when another session
// owns zr, or ctx's error.
func PublishEphemeral(ctx context.Context, c *client.Client, path string, data []byte, opts ...Option) (*Publication, error) {
	if err := checkPublish(path, data); err != nil {
		return nil, err
	}
	cfg := newConfig(opts)
	k, err := recipes.Keep(ctx, c, path, data, recipes.KeepOptions{ACL: cfg.acl,
		SuspendTolerance: cfg.tolerance, Logger: cfg.log})
	if err != nil {
		return nil, err
	}
	return &Publication{k: k}, nil
}

// Node is zr's path.
func (p *Publication) Node() string { return p.k.Node() }

// Done is closed when zr may no longer be published: the current
// presence's Done (see package membership, "Present, and no stale self").
// Once zr is published again, Done returns the new presence's channel.
func (p *Publication) Done() <-chan struct{} { return p.k.Done() }

// Context is the current presence's context.
func (p *Publication) Context() context.Context { return p.k.Context() }

// Err is nil while zr is known to be published; otherwise why not.
func (p *Publication) Err() error { return p.k.Err() }

// Presence is the current presence, or the last one.
func (p *Publication) Presence() *Presence { return p.k.Presence() }

// Present waits until zr is known to be published again and returns that
// presence, or returns why publishing ended for good, or ctx's error.
func (p *Publication) Present(ctx context.Context) (*Presence, error) { return p.k.Present(ctx) }

// Update publishes new data in zr (a new address); see recipes.Kept.Update.
func (p *Publication) Update(ctx context.Context, data []byte) error {
	if err := checkPublish(p.k.Node(), data); err != nil {
		return err
	}
	return p.k.Update(ctx, data)
}

// Remove stops publishing and deletes zr; see recipes.Kept.Remove.
func (p *Publication) Remove(ctx context.Context) error { return p.k.Remove(ctx) }
