package discovery

import (
	"errors"

	"github.com/zkit-dev/zkit/recipes"
)

// The errors a registration's calls and its Err return, re-exported from
// package recipes so that callers can match them (errors.Is, errors.As)
// without importing it, and those of the queries and providers.
var (
	// ErrLost is matched by every reason a registration's presence ended
	// without Unregister: the session was lost, the connection stayed
	// suspended beyond the tolerance, the node was deleted or claimed by
	// another process.
	ErrLost = recipes.ErrLost
	// ErrSuspended: the connection stayed suspended beyond the tolerance.
	// It matches ErrLost.
	ErrSuspended = recipes.ErrSuspended
	// ErrNodeDeleted: someone else deleted the instance's node. It
	// matches ErrLost.
	ErrNodeDeleted = recipes.ErrNodeDeleted
	// ErrReleased: the instance was unregistered (Unregister).
	ErrReleased = recipes.ErrReleased
	// ErrConflict is matched by every *ConflictError.
	ErrConflict = recipes.ErrConflict
	// ErrNoInstance: no such instance (Instance), or none to pick
	// (Provider.Pick): the service has no instance that is enabled, passes
	// the provider's filters and is not noted down.
	ErrNoInstance = errors.New("zkit: no instance")
	// ErrMalformed: an instance node whose data is not a ServiceInstance
	// in JSON. Instance returns it; Instances, Watch and providers leave
	// such nodes out (and log them).
	ErrMalformed = errors.New("zkit: not a service instance")
)

// ConflictError reports an instance id that another process claims: its
// node is owned by another session (or is persistent), or another process
// wrote to it. It matches ErrConflict and ErrLost; see
// recipes.ConflictError.
type ConflictError = recipes.ConflictError
