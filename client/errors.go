package client

import (
	"context"
	"errors"
	"fmt"
)

// Errors returned by the server, and by the connection. Their messages are
// those go-zookeeper gave them, which zkit used before it spoke the
// protocol itself: programs that print or compare them see no change.
var (
	ErrNoNode                  = errors.New("zk: node does not exist")
	ErrNodeExists              = errors.New("zk: node already exists")
	ErrBadVersion              = errors.New("zk: version conflict")
	ErrNotEmpty                = errors.New("zk: node has children")
	ErrNoAuth                  = errors.New("zk: not authenticated")
	ErrInvalidACL              = errors.New("zk: invalid ACL specified")
	ErrNoChildrenForEphemerals = errors.New("zk: ephemeral nodes may not have children")
	ErrBadArguments            = errors.New("invalid arguments")
	ErrAuthFailed              = errors.New("zk: client authentication failed")
	ErrSessionExpired          = errors.New("zk: session has been expired by the server")
	// ErrConnectionClosed: the connection a call went on ended before
	// its reply came (an *OutcomeUnknownError for a write that was sent),
	// or before its request was wholly written (retryable).
	ErrConnectionClosed = errors.New("zk: connection closed")
	// ErrNoServer: the client has no connection right now (it is
	// suspended, or between two sessions). Retryable.
	ErrNoServer = errors.New("zk: could not connect to a server")
)

var (
	// ErrInvalidInput is matched (errors.Is) by every *InputError.
	ErrInvalidInput = errors.New("zkit: invalid input")
	// ErrSessionLost means the session a call or a held thing belonged to is
	// gone: expired on the server, or disconnected for longer than the session
	// timeout. Ephemeral nodes created under it are gone or going.
	ErrSessionLost = errors.New("zkit: session lost")
	// ErrClosed means the client was closed.
	ErrClosed = errors.New("zkit: client closed")
	// ErrOutcomeUnknown is matched by every *OutcomeUnknownError.
	ErrOutcomeUnknown = errors.New("zkit: outcome unknown")
	// ErrUnimplemented means the server does not know the request: a
	// create mode or an operation newer than the server (containers before
	// ZooKeeper 3.5, TTL nodes without extendedTypesEnabled). Nothing was
	// applied. ZooKeeper closes the connection after it; the session lives
	// on.
	ErrUnimplemented = errors.New("zkit: not implemented by the server")
)

// ErrReplyTooLarge is matched by every *ReplyTooLargeError.
var ErrReplyTooLarge = errors.New("zkit: reply too large")

// ReplyTooLargeError reports a call whose reply the server sent but the
// client does not read: Size bytes, more than Limit, the client's
// WithMaxBuffer and 64 KiB. ZooKeeper checks the size of requests
// (jute.maxbuffer) but not of its replies: a node whose children's names
// add up to more than the limit answers Children so, and a node whose data
// was written under a larger jute.maxbuffer than the client's answers Get
// so. The client skips the reply: the connection, the session and every
// other call go on. The call was a read, so nothing was applied (a
// write's reply is never that long: Multi refuses ops whose reply could
// be); the same call gets the same reply until the node shrinks, so it is
// not retryable (IsRetryable and IsTransient are false, and Retry returns
// it). Read such a node with a client whose WithMaxBuffer is larger (see
// WithMaxBuffer), or keep the node smaller.
type ReplyTooLargeError struct {
	Op    string // "children", "get", ...
	Path  string
	Size  int // the reply's length in bytes
	Limit int // the longest reply the client reads: WithMaxBuffer + 64 KiB
}

func (e *ReplyTooLargeError) Error() string {
	return fmt.Sprintf("%s: reply too large: %d bytes, more than the %d the client reads (WithMaxBuffer + 64 KiB)",
		named(e.Op, e.Path), e.Size, e.Limit)
}

// Is makes errors.Is(err, ErrReplyTooLarge) true.
func (e *ReplyTooLargeError) Is(target error) bool { return target == ErrReplyTooLarge }

// InputError reports input that was rejected before anything was sent.
type InputError struct {
	Op     string // "create", "set", ...
	Path   string
	Reason string
	// Err is the server's error for the same input, when there is one
	// (ErrInvalidACL for a malformed ACL), so that errors.Is matches it
	// whichever side refused.
	Err error
}

func (e *InputError) Error() string {
	return named(e.Op, e.Path) + ": " + e.Reason
}

// named starts the error of a call: `zkit: OP "PATH"`, or `zkit: OP` for a
// call without a path (addAuth).
func named(op, path string) string {
	if path == "" {
		return "zkit: " + op
	}
	return fmt.Sprintf("zkit: %s %q", op, path)
}

// Is makes errors.Is(err, ErrInvalidInput) true.
func (e *InputError) Is(target error) bool { return target == ErrInvalidInput }

// Unwrap returns Err.
func (e *InputError) Unwrap() error { return e.Err }

// OutcomeUnknownError reports a write that was sent but whose reply never
// came: the connection was lost or the context ended while waiting. The write
// may or may not have been applied. Do not retry it blindly; read the state
// back (after Sync) to find out.
type OutcomeUnknownError struct {
	Op   string
	Path string
	Err  error // what ended the wait: ErrConnectionClosed, context.Canceled, ...
}

func (e *OutcomeUnknownError) Error() string {
	return fmt.Sprintf("%s: outcome unknown: %v", named(e.Op, e.Path), e.Err)
}

// Unwrap returns the cause.
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrOutcomeUnknown) true.
func (e *OutcomeUnknownError) Is(target error) bool { return target == ErrOutcomeUnknown }

// IsOutcomeUnknown reports whether err says that a write may or may not have
// been applied.
func IsOutcomeUnknown(err error) bool { return errors.Is(err, ErrOutcomeUnknown) }

// IsSessionLost reports whether err means the session is gone (expired, lost,
// or the client closed). Nothing held under that session may be trusted.
func IsSessionLost(err error) bool {
	return errors.Is(err, ErrSessionLost) || errors.Is(err, ErrSessionExpired) || errors.Is(err, ErrClosed)
}

// IsRetryable reports whether the same call may simply be made again: the
// request was not applied (it never reached a server, or it was a read) and
// the session may still be alive. Outcome-unknown writes are not retryable.
func IsRetryable(err error) bool {
	if err == nil || IsOutcomeUnknown(err) || IsSessionLost(err) {
		return false
	}
	return errors.Is(err, ErrConnectionClosed) || errors.Is(err, ErrNoServer)
}

// classify turns the raw error of one call into the error it returns.
// write says whether the call changes state: a write cut off after it may
// have been sent has an unknown outcome.
func classify(op, path string, write bool, err error) error {
	if err == nil {
		return nil
	}
	unknown := false // a write that may have been applied
	var (
		ns  notSent
		big *ReplyTooLargeError
	)
	switch {
	case errors.As(err, &big):
		return &ReplyTooLargeError{Op: op, Path: path, Size: big.Size, Limit: big.Limit}
	case errors.As(err, &ns):
		err = ns.err // nothing left the client: not applied
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), err == ErrConnectionClosed:
		unknown = write
	}
	if unknown {
		return &OutcomeUnknownError{Op: op, Path: path, Err: err}
	}
	return fmt.Errorf("%s: %w", named(op, path), err)
}
