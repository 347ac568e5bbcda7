package recipes

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/layout"
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
	// matches ErrLost. A call that waits for its turn and whose own node
	// is deleted fails with an error that matches it too, but says that a
	// waiting node was deleted (see DeletedWhileWaiting).
	ErrNodeDeleted = fmt.Errorf("%w: node deleted by someone else", ErrLost)
	// ErrReleased is the cause of a held thing's Context after its owner
	// released it.
	ErrReleased = errors.New("zkit: released")
	// ErrWouldBlock is returned by a try-acquire that would have to wait.
	ErrWouldBlock = errors.New("zkit: held by another")
	// ErrOtherRecipe: the path holds the nodes of another kind of recipe
	// (a mutex's beside a read/write lock's, an election's beside a
	// lock's, a lock's in a counter's node). Two kinds on one path would be
	// two queues that exclude nothing, or one recipe's nodes taken for
	// another's, so a recipe refuses such a path before it writes or
	// deletes anything there. Every recipe's layout, and what it refuses,
	// is declared in one registry (internal/layout).
	ErrOtherRecipe = layout.ErrOtherRecipe
	// ErrConflict is matched by every *ConflictError: the node is claimed
	// by another process.
	ErrConflict = errors.New("zkit: node claimed by another process")
)

// ConflictError reports a node that another process claims: it exists and
// is owned by a session that is not this process's, or another process
// wrote to it while this process kept it. zkit neither overwrites nor
// deletes such a node.
type ConflictError struct {
	Path string
	// Owner is the ephemeralOwner of the node found (0 for a persistent
	// node), or this process's own session when the conflict is a write
	// by someone else.
	Owner  int64
	Reason string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("zkit: %s: %s (owner session 0x%x)", e.Path, e.Reason, e.Owner)
}

// Is makes errors.Is(err, ErrConflict) and errors.Is(err, ErrLost) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict || target == ErrLost }

// DeletedWhileWaiting is the error of a call that waits for its turn (a
// lock's, a leadership's, a lease's, a barrier's threshold) when someone
// else deleted path, its own node. It matches ErrNodeDeleted and ErrLost,
// as the deletion of a held node does, but its text says what was lost: a
// place in line, never something held.
func DeletedWhileWaiting(path string) error { return &deletedWaiting{path: path} }

type deletedWaiting struct{ path string }

func (e *deletedWaiting) Error() string {
	return "zkit: " + e.path + ": node deleted by someone else while waiting"
}

func (e *deletedWaiting) Is(target error) bool { return target == ErrNodeDeleted || target == ErrLost }

// Requeueable reports whether err, met by a call on c that waits (for its
// turn, a lease, a barrier's threshold) and holds nothing yet, is the loss
// of the session the call waited under, while c and ctx live on. Only the
// call's place in line was lost: it queues again under the client's next
// session rather than fail (Ticket.Rejoin), until ctx ends.
func Requeueable(ctx context.Context, c *client.Client, err error) bool {
	return err != nil && ctx.Err() == nil && c.Context().Err() == nil &&
		client.IsSessionLost(err) && !errors.Is(err, client.ErrClosed)
}

// WaitError is the error to return from a call on c that waited and holds
// nothing, for err, what ended the wait: client.ErrClosed once c is closed
// (whatever the closing did meanwhile: the call's node deleted, its watches
// dropped), ctx's error for a session lost after ctx ended (the call would
// have queued again but for ctx), and err otherwise. Neither says "no
// longer held" of something that was never held.
func WaitError(ctx context.Context, c *client.Client, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, client.ErrClosed), c.Context().Err() != nil && (client.IsSessionLost(err) || errors.Is(err, ErrLost)):
		return client.ErrClosed
	case ctx.Err() != nil && client.IsSessionLost(err):
		return ctx.Err()
	}
	return err
}

// LostSession is the error for something on c, held or waited for, that
// its session took with it. It matches ErrLost and cause, how the session
// ended (Session.Err, or the Err of a watch it dropped;
// client.ErrSessionLost when cause is nil), or client.ErrClosed once c is
// closed: whatever c saw while it closed (its ephemeral nodes deleted, its
// watches dropped, its session ended) is its own Close, in whichever order
// it saw them.
func LostSession(c *client.Client, cause error) error {
	switch {
	case c.Context().Err() != nil:
		cause = client.ErrClosed
	case cause == nil:
		cause = client.ErrSessionLost
	}
	return fmt.Errorf("%w: %w", ErrLost, cause)
}

// lossCause is the cause to report for a held thing on c that ended with
// cause (its node deleted, its connection suspended too long): LostSession's
// error once c is closed, since the client saw its own Close.
func lossCause(c *client.Client, cause error) error {
	if c.Context().Err() != nil {
		return LostSession(c, nil)
	}
	return cause
}

// Wrap names the call and the recipe path an error came from:
// "zkit: lock /app/locks/jobs: <err>". Errors that name the path already
// (an input error, an error of a call on that very node) are returned as
// they are, so that a message names its path once. Recipes wrap every
// error their exported calls return; nil stays nil.
//
// A create refused because its parent is ephemeral
// (client.ErrNoChildrenForEphemerals) is made to match ErrOtherRecipe too:
// a recipe's path, or a directory in it, is an ephemeral node, which is
// another recipe's (a rendezvous's zr, a member's or a lock's node).
func Wrap(op, path string, err error) error {
	if errors.Is(err, client.ErrNoChildrenForEphemerals) && !errors.Is(err, ErrOtherRecipe) {
		err = fmt.Errorf("%w (the recipe's path or a parent is an ephemeral node: %w)", err, ErrOtherRecipe)
	}
	if err == nil || strings.Contains(err.Error(), path) {
		return err
	}
	return &opError{op: op, path: path, err: err}
}

type opError struct {
	op, path string
	err      error
}

func (e *opError) Error() string {
	return "zkit: " + e.op + " " + e.path + ": " + strings.TrimPrefix(e.err.Error(), "zkit: ")
}

func (e *opError) Unwrap() error { return e.err }
