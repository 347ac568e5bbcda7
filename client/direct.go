package client

import (
	"context"
	"fmt"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Calls.
//
// Every call is written on the session's connection by its caller, on
// the caller's own goroutine, and answered there: the caller writes its
// request and waits for its reply on a channel that the connection's
// reading goroutine fills (conn.go), one wake-up per call. A context
// costs nothing per call, and a call no goroutine of its own.
//
// A call is written at once or not at all: a call made while the client
// has no connection fails at once with a retryable error (matching
// ErrNoServer), and one caught by the end of its connection before it was
// written (while it waited for the credentials sent again on a new
// connection, or because its frame did not go out whole) fails with a
// retryable error too. Nothing is kept to be sent later, on another
// connection, after its caller was told it failed. A call whose request
// was written and whose reply did not come fails with ErrConnectionClosed:
// an unknown outcome, for a write.

// direct sends one call on the current connection and returns its reply
// (see pending.wait).
func direct(ctx context.Context, c *Client, op int32, req, resp any) (int64, error) {
	p, err := begin(ctx, c, op, req)
	if err != nil {
		return 0, err
	}
	return p.wait(ctx, resp)
}

// pending is a call written on the connection, its reply to come.
type pending struct {
	c     *Client
	reply <-chan directReply
}

// begin writes one call on the current connection. It fails with ctx's
// error in notSent when ctx ends before the call was written, with
// ErrConnectionClosed in notSent when the connection ended or broke before
// the call was wholly written, with errNotConnected when there is no
// connection, and with ErrClosed once the client is closed. Calls begun
// one after the other on one goroutine reach the server in that order, and
// are answered in that order, when they go on the same connection.
func begin(ctx context.Context, c *Client, op int32, req any) (*pending, error) {
	return beginWatch(ctx, c, op, req, watchReg{})
}

// beginWatch is begin for a call that sets or removes watches: w's hooks
// run with its reply, or when none will come. When beginWatch fails, the
// call was not registered (neither hook runs), or dropped already.
func beginWatch(ctx context.Context, c *Client, op int32, req any, w watchReg) (*pending, error) {
	cn, err := c.connection(ctx)
	if err != nil {
		return nil, err
	}
	ch, err := cn.send(ctx, op, req, w)
	if err != nil {
		return nil, err
	}
	return &pending{c, ch}, nil
}

// connection returns the connection to write a call on, or why there is
// none: ctx ended (notSent), the client is closed (ErrClosed), or it has
// no connection right now (errNotConnected).
func (c *Client) connection(ctx context.Context) (*conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, notSent{err}
	}
	if c.life.Err() != nil {
		return nil, ErrClosed
	}
	if cn := c.cur.Load(); cn != nil {
		return cn, nil
	}
	return nil, errNotConnected
}

// wait returns the call's reply: the header's error (see wireError), or
// the body decoded into resp, with the zxid of the reply. It returns ctx's
// error when ctx ends first, ErrConnectionClosed (ErrClosed once the
// client is closed) when the connection ended before the reply came, and a
// *ReplyTooLargeError (without its Op and Path: classify names it) for a
// reply longer than the connection reads.
func (p *pending) wait(ctx context.Context, resp any) (int64, error) {
	var r directReply
	select {
	case r = <-p.reply:
	case <-ctx.Done():
		select {
		case r = <-p.reply: // answered at the same moment: the answer wins
		default:
			return 0, ctx.Err()
		}
	}
	switch {
	case r.err != nil:
		if p.c.life.Err() != nil {
			return 0, ErrClosed
		}
		return 0, r.err
	case r.code != 0:
		return r.zxid, wireError(r.code)
	case r.tooLarge != nil:
		return r.zxid, r.tooLarge
	case resp != nil:
		if err := jute.Decode(r.body, resp); err != nil {
			return r.zxid, fmt.Errorf("zk: decoding the reply: %w", err)
		}
	}
	return r.zxid, nil
}

// wireError is the error for a server's error code.
func wireError(code int32) error {
	if err, ok := wireErrors[code]; ok {
		return err
	}
	return fmt.Errorf("zk: server error %v", jute.Error(code))
}

var wireErrors = map[int32]error{
	int32(jute.ErrUnimplemented):           ErrUnimplemented,
	int32(jute.ErrBadArguments):            ErrBadArguments,
	int32(jute.ErrNoNode):                  ErrNoNode,
	int32(jute.ErrNoAuth):                  ErrNoAuth,
	int32(jute.ErrBadVersion):              ErrBadVersion,
	int32(jute.ErrNoChildrenForEphemerals): ErrNoChildrenForEphemerals,
	int32(jute.ErrNodeExists):              ErrNodeExists,
	int32(jute.ErrNotEmpty):                ErrNotEmpty,
	int32(jute.ErrSessionExpired):          ErrSessionExpired,
	int32(jute.ErrInvalidACL):              ErrInvalidACL,
	int32(jute.ErrAuthFailed):              ErrAuthFailed,
	int32(jute.ErrNoWatcher):               ErrNoWatcher,
	int32(jute.ErrReconfigDisabled):        ErrReconfigDisabled,
	int32(jute.ErrReconfigInProgress):      ErrReconfigInProgress,
	int32(jute.ErrNewConfigNoQuorum):       ErrNewConfigNoQuorum,
}

// juteACL is acl as the wire encodes it.
func juteACL(acl []ACL) []jute.ACL {
	out := make([]jute.ACL, len(acl))
	for i, a := range acl {
		out[i] = jute.ACL{Perms: a.Perms, ID: jute.Id{Scheme: a.Scheme, ID: a.ID}}
	}
	return out
}

// aclOf is acl as the client returns it.
func aclOf(acl []jute.ACL) []ACL {
	out := make([]ACL, len(acl))
	for i, a := range acl {
		out[i] = ACL{Perms: a.Perms, Scheme: a.ID.Scheme, ID: a.ID.ID}
	}
	return out
}
