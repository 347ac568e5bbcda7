package rendezvous

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// ErrGone is returned by Wait and Publish when zr does not exist (any
// more): the launcher has ended, or has not created it.
var ErrGone = errors.New("zkit: rendezvous node gone")

// ConflictError reports a zr that another process owns; see
// recipes.ConflictError.
type ConflictError = recipes.ConflictError

// ErrConflict is matched by every *ConflictError.
var ErrConflict = recipes.ErrConflict

// Rendezvous is the launcher's zr, from Create until Remove. It is safe for
// concurrent use.
type Rendezvous struct {
	k *recipes.Kept
}

// Create creates zr at path, ephemeral and empty, for the launcher. It
// returns an *client.InputError for an invalid path (nothing is sent), a
// *ConflictError when zr already exists (another launcher, or a master
// that owns it), or ctx's error. Missing parents are created as persistent
// nodes.
func Create(ctx context.Context, c *client.Client, path string, opts ...Option) (*Rendezvous, error) {
	cfg := newConfig(opts)
	k, err := recipes.Keep(ctx, c, path, nil, recipes.KeepOptions{ACL: cfg.acl,
		SuspendTolerance: cfg.tolerance, Logger: cfg.log, Once: true, Shared: true})
	if err != nil {
		return nil, err
	}
	return &Rendezvous{k: k}, nil
}

// Node is zr's path.
func (r *Rendezvous) Node() string { return r.k.Node() }

// Done is closed when zr may no longer exist: the session was lost, the
// connection stayed suspended beyond the tolerance (zkit then deletes zr
// as soon as it can, so that master and workers see the launcher gone),
// someone else deleted it, or Remove was called. zr is never created again.
func (r *Rendezvous) Done() <-chan struct{} { return r.k.Done() }

// Context ends when Done is closed; context.Cause tells why.
func (r *Rendezvous) Context() context.Context { return r.k.Context() }

// Err is nil while zr is held, then the reason it ended.
func (r *Rendezvous) Err() error { return r.k.Err() }

// Session is the session that owns zr.
func (r *Rendezvous) Session() *client.Session { return r.k.Presence().Session() }

// Token is zr's czxid: workers see it as Value.Stat.Czxid.
func (r *Rendezvous) Token() int64 { return r.k.Presence().Token() }

// Remove deletes zr (the launcher is done): master and workers see it
// vanish. It waits for the delete while ctx allows, then leaves it to the
// background (for as long as the client lives) and returns ctx's error. If
// zr had already been lost, Remove returns why.
func (r *Rendezvous) Remove(ctx context.Context) error { return r.k.Remove(ctx) }

// Publish fills zr at path with data, for the master. zr must exist:
// otherwise Publish returns an error matching ErrGone. Empty data (which
// reads as "not filled") and invalid paths are *client.InputError, before
// anything is sent. A write whose reply is lost is resolved by reading zr
// back; if that is not possible, the error matches
// client.ErrOutcomeUnknown.
func Publish(ctx context.Context, c *client.Client, path string, data []byte) error {
	if err := checkPublish(path, data); err != nil {
		return err
	}
	var b client.Backoff
	for {
		_, err := c.Set(ctx, path, data, -1)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, client.ErrNoNode):
			return fmt.Errorf("zkit: publish %s: %w (%w)", path, ErrGone, err)
		case client.IsOutcomeUnknown(err) && ctx.Err() == nil:
			if got, rerr := readBack(ctx, c, path, &b); rerr == nil && string(got) == string(data) {
				return nil
			}
			return err
		case !client.IsRetryable(err):
			return err
		}
		if err := b.Wait(ctx); err != nil {
			return err
		}
	}
}

// readBack reads path after a sync, retrying while the connection is down.
func readBack(ctx context.Context, c *client.Client, path string, b *client.Backoff) ([]byte, error) {
	for {
		err := c.Sync(ctx, path)
		if err == nil {
			var data []byte
			data, _, err = c.Get(ctx, path)
			if err == nil {
				return data, nil
			}
		}
		if !client.IsRetryable(err) {
			return nil, err
		}
		if err := b.Wait(ctx); err != nil {
			return nil, err
		}
	}
}

func checkPublish(path string, data []byte) error {
	if reason := client.ValidatePath(path, false); reason != "" {
		return &client.InputError{Op: "publish", Path: path, Reason: reason}
	}
	if path == "/" {
		return &client.InputError{Op: "publish", Path: path, Reason: "the root cannot be a rendezvous node"}
	}
	if len(data) == 0 {
		return &client.InputError{Op: "publish", Path: path, Reason: "empty data (an empty rendezvous node means not filled yet)"}
	}
	if max := client.MaxData(path); len(data) > max {
		return &client.InputError{Op: "publish", Path: path, Reason: fmt.Sprintf("data of %d bytes is over the %d-byte limit", len(data), max)}
	}
	return nil
}

// Option configures Create and PublishEphemeral.
type Option func(*config)

type config struct {
	tolerance time.Duration
	acl       []client.ACL
	log       *slog.Logger
}

func newConfig(opts []Option) config {
	cfg := config{}
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// WithSuspendTolerance keeps zr held across a suspended connection for up
// to d. The default, 0, ends it as soon as the connection is suspended.
func WithSuspendTolerance(d time.Duration) Option {
	return func(c *config) { c.tolerance = max(d, 0) }
}

// WithACL gives zr acl instead of the client's default ACL. The master
// needs write permission on zr to Publish into the launcher's node.
func WithACL(acl ...client.ACL) Option {
	return func(c *config) { c.acl = acl }
}

// WithLogger routes log lines (zr lost, re-published) to l. By default
// nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.log = l }
}
