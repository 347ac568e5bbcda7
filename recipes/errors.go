package recipes

import (
	"errors"
	"fmt"
)

var (
	// ErrLost is matched (errors.Is) by every reason a held thing ended
	// without being released: its session was lost, its connection stayed
	// suspended beyond the tolerance, or its node was deleted.
	ErrLost = errors.New("zkit: no longer held")
	// ErrSuspended: the connection stayed suspended for longer than the
	// holder's tolerance. The node may still exist; zkit deletes it once it
	// can. It matches ErrLost.
	ErrSuspended = fmt.Errorf("%w: connection suspended beyond the tolerance", ErrLost)
	// ErrNodeDeleted: someone else deleted (or wrote to) the node. It
	// matches ErrLost.
	ErrNodeDeleted = fmt.Errorf("%w: node deleted by someone else", ErrLost)
	// ErrReleased is the cause of a held thing's Context after its owner
	// released it.
	ErrReleased = errors.New("zkit: released")
	// ErrWouldBlock is returned by a try-acquire that would have to wait.
	ErrWouldBlock = errors.New("zkit: held by another")
)

// lostSession is the cause when the session that owned a node is gone.
func lostSession(cause error) error {
	return fmt.Errorf("%w: %w", ErrLost, cause)
}
