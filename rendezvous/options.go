package rendezvous

import (
	"log/slog"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// Option configures a Rendezvous: its Create and PublishEphemeral, the
// calls that create zr.
type Option func(*config)

type config struct {
	recipes.Options
}

// WithSuspendTolerance keeps zr held across a suspended connection for up
// to d: the launcher's Launch, the master's Publication. The default, 0,
// ends it as soon as the connection is suspended: from then on the
// session may expire at any moment and zr vanish.
func WithSuspendTolerance(d time.Duration) Option {
	return func(c *config) { c.SuspendTolerance = d }
}

// WithACL gives zr acl instead of the client's default ACL. The master
// needs write permission on zr to Publish into the launcher's node. zr's
// parents, when they are created, get the client's default ACL.
func WithACL(acl ...client.ACL) Option {
	return func(c *config) { c.ACL = acl }
}

// WithLogger routes the log lines of zr's owner (zr lost, published
// again) to l. By default nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.Logger = l }
}
