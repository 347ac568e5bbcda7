package membership

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Presence is one stretch of time during which a member is known to be
// present; see recipes.Presence.
type Presence = recipes.Presence

// ConflictError reports an id that another process claims; see
// recipes.ConflictError.
type ConflictError = recipes.ConflictError

// ErrConflict is matched by every *ConflictError.
var ErrConflict = recipes.ErrConflict

// Member is this process's membership of a group, from Join until Leave.
// It is safe for concurrent use.
type Member struct {
	id string
	k  *recipes.Kept
}

// Join makes this process a member of the group at path under id, with
// data as its payload, and keeps it a member until Leave (see the package
// documentation). It returns once the member's node is present, or with an
// error: an *client.InputError for an empty or invalid id or path, or data
// over the limit (nothing is sent); a *ConflictError when another session
// owns the id; ctx's error.
//
// The group's node and its parents are created (as persistent nodes) when
// missing.
func Join(ctx context.Context, c *client.Client, path, id string, data []byte, opts ...Option) (*Member, error) {
	if err := CheckID(path, id); err != nil {
		return nil, err
	}
	cfg := config{}
	for _, o := range opts {
		o(&cfg)
	}
	k, err := recipes.Keep(ctx, c, client.JoinPath(path, id), data, recipes.KeepOptions{
		ACL: cfg.acl, SuspendTolerance: cfg.tolerance, Logger: cfg.log})
	if err != nil {
		return nil, err
	}
	return &Member{id: id, k: k}, nil
}

// CheckID returns an *client.InputError when path is not a valid group
// path or id not a valid member id: a single non-empty node name, not "."
// or "..", without "/".
func CheckID(path, id string) error {
	if reason := client.ValidatePath(path, false); reason != "" {
		return &client.InputError{Op: "join", Path: path, Reason: reason}
	}
	var reason string
	switch {
	case id == "":
		reason = "empty member id"
	case strings.Contains(id, "/"):
		reason = fmt.Sprintf("member id %q contains /", id)
	default:
		if r := client.ValidatePath(client.JoinPath(path, id), false); r != "" {
			reason = fmt.Sprintf("member id %q: %s", id, r)
		}
	}
	if reason != "" {
		return &client.InputError{Op: "join", Path: path, Reason: reason}
	}
	return nil
}

// ID is the member's id.
func (m *Member) ID() string { return m.id }

// Node is the member's node: "<path>/<id>".
func (m *Member) Node() string { return m.k.Node() }

// Done is closed when the member may no longer be present: see Presence.
// It is the channel of the presence current at the call; once the member
// is present again, Done returns the new presence's channel.
func (m *Member) Done() <-chan struct{} { return m.k.Done() }

// Context is the current presence's context: it ends when Done is closed.
func (m *Member) Context() context.Context { return m.k.Context() }

// Err is nil while the member is known to be present. Otherwise it is why
// the membership ended for good (recipes.ErrReleased after Leave, a
// *ConflictError, the client closed, ...), or, while zkit is making the
// member present again, why the last presence ended.
func (m *Member) Err() error { return m.k.Err() }

// Presence is the current presence, or the last one while the member is
// not known to be present (its Done is closed then).
func (m *Member) Presence() *Presence { return m.k.Presence() }

// Present waits until the member is known to be present and returns that
// presence, or returns why the membership ended for good, or ctx's error.
func (m *Member) Present(ctx context.Context) (*Presence, error) { return m.k.Present(ctx) }

// Update replaces the member's payload: at once while the member is
// present, otherwise when its node is created again. A *ConflictError
// means another process wrote the node; the membership then ends.
func (m *Member) Update(ctx context.Context, data []byte) error { return m.k.Update(ctx, data) }

// Leave ends the membership and deletes the member's node: the current
// presence ends with recipes.ErrReleased at once. It waits for the delete
// while ctx allows, and otherwise leaves it to the background (for as long
// as the client lives) and returns ctx's error. If the membership had
// already ended (a conflict, the client closed), Leave returns why.
func (m *Member) Leave(ctx context.Context) error { return m.k.Remove(ctx) }

// Option configures Join.
type Option func(*config)

type config struct {
	tolerance time.Duration
	acl       []client.ACL
	log       *slog.Logger
}

// WithSuspendTolerance lets a member stay present across a suspended
// connection for up to d. The default, 0, ends the presence as soon as the
// connection is suspended: from then on the session may expire at any
// moment and the node vanish. Either way the member is present again
// (a new Presence) as soon as zkit has checked its node after the
// reconnect.
func WithSuspendTolerance(d time.Duration) Option {
	return func(c *config) { c.tolerance = max(d, 0) }
}

// WithACL gives the member's node acl instead of the client's default ACL.
func WithACL(acl ...client.ACL) Option {
	return func(c *config) { c.acl = acl }
}

// WithLogger routes the member's log lines (presences ending and coming
// back, conflicts) to l. By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.log = l }
}
