package barrier

import (
	"errors"
	"fmt"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

var (
	// ErrMemberLost is returned by Leave when a member that entered the
	// round did not leave through Leave: its session ended (expiry, crash,
	// client closed), it gave up (its Leave was cancelled while the others
	// waited for it), or its node was deleted by someone else. The call
	// still returns only once every member's node is gone.
	ErrMemberLost = errors.New("zkit: a barrier member was lost")
	// ErrEntered is returned by Enter on a Double that is already inside
	// the barrier: Leave first.
	ErrEntered = errors.New("zkit: barrier already entered")
	// ErrNotEntered is returned by Leave on a Double that is not inside the
	// barrier: Enter did not succeed, or Leave was already called.
	ErrNotEntered = errors.New("zkit: barrier not entered")
	// ErrLost is matched by the error of a member whose own session was
	// lost while it entered, was inside or left (the error also matches
	// client.ErrSessionLost, or client.ErrClosed after the client's
	// Close), and by ErrNodeDeleted.
	ErrLost = recipes.ErrLost
	// ErrNodeDeleted: someone else deleted the member's own node. It
	// matches ErrLost.
	ErrNodeDeleted = recipes.ErrNodeDeleted
)

// lost is the error for a member whose own session is gone: it matches
// ErrLost and client.ErrSessionLost, or client.ErrClosed once c is closing
// (recipes.LostSession).
func lost(c *client.Client, dir string, sess *client.Session) error {
	return recipes.Wrap("barrier", dir, recipes.LostSession(c, sess.Err()))
}

// membersLost is the error Leave returns when n members (0: an unknown
// number) vanished instead of leaving.
func membersLost(dir string, n int) error {
	if n <= 0 {
		return fmt.Errorf("zkit: barrier %s: %w", dir, ErrMemberLost)
	}
	return fmt.Errorf("zkit: barrier %s: %w (%d of the members that entered did not leave)", dir, ErrMemberLost, n)
}
