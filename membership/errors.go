package membership

import "github.com/zkit-dev/zkit/recipes"

// The errors a member's calls and its Err return, re-exported from
// package recipes so that callers can match them (errors.Is, errors.As)
// without importing it.
var (
	// ErrLost is matched by every reason a presence ended without Leave:
	// the session was lost, the connection stayed suspended beyond the
	// tolerance, the node was deleted or claimed by another process.
	ErrLost = recipes.ErrLost
	// ErrSuspended: the connection stayed suspended beyond the tolerance.
	// It matches ErrLost.
	ErrSuspended = recipes.ErrSuspended
	// ErrNodeDeleted: someone else deleted the member's node. It matches
	// ErrLost.
	ErrNodeDeleted = recipes.ErrNodeDeleted
	// ErrReleased: the member left (Leave).
	ErrReleased = recipes.ErrReleased
	// ErrConflict is matched by every *ConflictError.
	ErrConflict = recipes.ErrConflict
)

// ConflictError reports an id that another process claims: its node is
// owned by another session, or another process wrote to it. It matches
// ErrConflict and ErrLost; see recipes.ConflictError.
type ConflictError = recipes.ConflictError
