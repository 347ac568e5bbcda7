package membership

import (
	"log/slog"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Option configures a Group: every Join on it.
type Option func(*config)

type config struct {
	recipes.Options
}

// WithSuspendTolerance lets a member stay present across a suspended
// connection for up to d. The default, 0, ends the presence as soon as the
// connection is suspended: from then on the session may expire at any
// moment and the node vanish. Either way the member is present again
// (a new Presence) as soon as zkit has checked its node after the
// reconnect.
func WithSuspendTolerance(d time.Duration) Option {
	return func(c *config) { c.SuspendTolerance = d }
}

// WithACL gives the member nodes the Group creates acl instead of the
// client's default ACL. The group's node and its parents, when Join
// creates them, get the client's default ACL.
func WithACL(acl ...client.ACL) Option {
	return func(c *config) { c.ACL = acl }
}

// WithLogger routes the members' log lines (presences ending and coming
// back, conflicts) to l. By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.Logger = l }
}
