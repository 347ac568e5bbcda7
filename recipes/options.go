package recipes

import (
	"log/slog"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipekit"
)

// Options are the settings every recipe shares. Each recipe package has
// an Option type of its own (lock.Option, election.Option, ...) whose
// WithACL, WithLogger and WithSuspendTolerance write into the Options
// embedded in its configuration, next to the settings only that recipe
// has (a lock node's data, a counter's encoding).
type Options struct {
	// ACL is the ACL of the nodes the recipe creates: its own nodes and
	// the directories it makes for them. Empty: the client's default ACL.
	ACL []client.ACL
	// Logger receives the recipe's log lines (holds lost, cleanups that
	// failed). Nil: nothing is logged.
	Logger *slog.Logger
	// SuspendTolerance is how long what the recipe holds (a lease, a
	// term, a membership) survives a suspended connection before it counts
	// as lost. Zero, the default, ends it as soon as the connection is
	// suspended: from then on the session may expire on the server at any
	// moment. Negative values count as zero.
	SuspendTolerance time.Duration
}

// CreateOptions returns what gives a created node the ACL, if one was set.
func (o Options) CreateOptions() []client.CreateOption {
	if len(o.ACL) == 0 {
		return nil
	}
	return []client.CreateOption{client.WithACL(o.ACL...)}
}

// Log returns the logger, never nil.
func (o Options) Log() *slog.Logger { return recipekit.Logger(o.Logger) }

// Tolerance returns the suspend tolerance, never negative.
func (o Options) Tolerance() time.Duration { return max(o.SuspendTolerance, 0) }

// Keep returns the options of a Kept node kept under o.
func (o Options) Keep() KeepOptions {
	return KeepOptions{ACL: o.ACL, SuspendTolerance: o.Tolerance(), Logger: o.Logger}
}

// Lease returns the options of a Lease held under o.
func (o Options) Lease() LeaseOptions {
	return LeaseOptions{SuspendTolerance: o.Tolerance(), Logger: o.Logger}
}

// Apply returns the configuration opts make of the zero one: what a
// recipe's New does with the options it is given.
func Apply[C any, O ~func(*C)](opts []O) C {
	var cfg C
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}
