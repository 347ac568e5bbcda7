package rendezvous

import (
	"errors"

	"github.com/zkit-dev/zkit/recipes"
)

// ErrGone is returned by Wait and Publish when zr does not exist (any
// more): the launcher has ended, or has not created it.
var ErrGone = errors.New("zkit: rendezvous node gone")

// The errors the calls on zr and the Err of a Launch or a Publication
// return, re-exported from package recipes so that callers can match them
// (errors.Is, errors.As) without importing it.
var (
	// ErrLost is matched by every reason a Launch or a Publication ended
	// without Remove: the session was lost, the connection stayed
	// suspended beyond the tolerance, zr was deleted or claimed by another
	// process.
	ErrLost = recipes.ErrLost
	// ErrSuspended: the connection stayed suspended beyond the tolerance.
	// It matches ErrLost.
	ErrSuspended = recipes.ErrSuspended
	// ErrNodeDeleted: someone else deleted zr. It matches ErrLost.
	ErrNodeDeleted = recipes.ErrNodeDeleted
	// ErrReleased: zr was removed by its owner (Remove).
	ErrReleased = recipes.ErrReleased
	// ErrConflict is matched by every *ConflictError.
	ErrConflict = recipes.ErrConflict
)

// ConflictError reports a zr that another process owns: it exists under
// another session, or, for a Publication, another process wrote to it.
// It matches ErrConflict and ErrLost; see recipes.ConflictError.
type ConflictError = recipes.ConflictError
