package client

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/zkit-dev/zkit/internal/jute"
)

// Direct calls.
//
// go-zookeeper's calls block their goroutine until the reply comes and know
// nothing of contexts, so a call made through it has to run on a goroutine
// of its own for its caller to return when the context ends (see run). That
// hand-over, two goroutine wake-ups per call on top of the wire client's own
// two, was the last per-call cost that go-zookeeper used directly does not
// pay: about 10 µs of CPU per call, enough to put a loop of creates and
// deletes below go-zookeeper's.
//
// So every call but credentials (create, delete, setData, getData, exists,
// getChildren, sync, multi, getACL, setACL, and the watching getData,
// exists and getChildren) is written on the connection by the connection
// wrapper itself, and its reply is taken out of the stream before the wire
// client reads it: the caller writes its request and waits for its reply on
// a channel that the wire client's reading goroutine fills, one wake-up per
// call. The wire client keeps the handshake, pings, credentials and closing
// the session; zkit keeps the watches (watch.go).
//
// A direct call is written at once or not at all, so a disconnect never
// leaves one waiting to go out later. The wire client instead keeps the
// requests it is handed in a send queue that outlives its connections: one
// that a disconnect caught there (behind the credentials it sends again on
// a new connection, for example) is written on the next connection of the
// session, long after its caller was told it failed. The ACL calls were
// the wire client's, and a SetACL told "outcome unknown" could be applied
// after a reader had found it was not.
//
// The two share the session's stream safely because ZooKeeper treats a
// request's xid as the client's own: it answers every request with the xid
// it came with and in the order the session sent them, and matches nothing
// else by it but for replies, which are told apart on the client. The
// connection wrapper gives its requests xids of their own, negative and
// below the ones ZooKeeper reserves (-1 events, -2 pings, -4 credentials, -8
// SetWatches), so that they never meet the wire client's (0 and up); the
// server does no throttle accounting for xids of 0 and below, on either
// side. Frames are written whole, one writer at a time, in the order they
// were handed over.
//
// On a new connection of a client that has credentials, the wire client
// sends them again before anything else; direct calls wait until the server
// has answered that many, or until the wire client writes something else.
// When a connection ends, every direct call waiting on it fails as the wire
// client fails its own: connection closed (an unknown outcome for a write),
// or "closing" once the client is closed. A call that had not been written
// yet (it waited for the credentials), or whose frame did not go out whole,
// was not sent: it fails with a retryable error, even a write.

// Direct xids run down from firstDirectXid, and start again there after
// reaching the smallest int32.
const firstDirectXid int32 = -16

// isDirectXid reports whether xid is one of the connection wrapper's own.
func isDirectXid(xid int32) bool { return xid <= firstDirectXid }

// directConn is the direct calls' part of one connection.
type directConn struct {
	mu     sync.Mutex
	next   int32                // the next xid to give out
	calls  map[int32]directCall // awaiting their reply, by xid
	ended  bool                 // the connection ended: calls fail
	open   chan struct{}        // closed once calls may be written
	auths  int                  // credentials still to be answered before open
	opened bool

	authXids  map[int32]bool // credentials written, not yet answered
	authsSent atomic.Int32   // len(authXids), read without the lock

	watches *watchSet // the client's, where watching calls file their watch
	session int64     // the connection's
}

// directCall is a call awaiting its reply.
type directCall struct {
	reply chan<- directReply
	op    int32
	watch watchReg
}

// watchReg is where a watching call's watch goes: the channel its event
// comes on, and the path as on the wire. The zero value is no watch.
type watchReg struct {
	ch   chan<- WatchEvent
	path string
}

// directReply is the server's reply to a direct call, or why none came.
type directReply struct {
	zxid int64  // the reply header's
	code int32  // the reply header's error code
	body []byte // after the header; a copy
	err  error  // the connection ended first

	tooLarge *ReplyTooLargeError // the body was too long to read, and skipped
}

// start readies the direct calls of a connection of session, established;
// the wire client will first send auths credentials again.
func (d *directConn) start(session int64, auths int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.session, d.next, d.open, d.auths = session, firstDirectXid, make(chan struct{}), auths
	if auths <= 0 {
		d.openLocked()
	}
}

func (d *directConn) openLocked() {
	if !d.opened && d.open != nil {
		d.opened = true
		close(d.open)
	}
}

// wireWrote notes a frame the wire client writes: credentials are
// awaited, anything else means it has sent them all.
func (d *directConn) wireWrote(xid, op int32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if op != jute.OpAuth {
		d.openLocked()
		return
	}
	if d.authXids == nil {
		d.authXids = make(map[int32]bool)
	}
	d.authXids[xid] = true
	d.authsSent.Store(int32(len(d.authXids)))
}

// wireReplied notes a reply to the wire client: the server's answer to
// credentials counts.
func (d *directConn) wireReplied(xid int32) {
	if d.authsSent.Load() == 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.authXids[xid] {
		return
	}
	delete(d.authXids, xid)
	d.authsSent.Store(int32(len(d.authXids)))
	if d.auths--; d.auths <= 0 {
		d.openLocked()
	}
}

// register gives a call its xid, or reports false when the connection has
// ended.
func (d *directConn) register(call directCall) (int32, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended {
		return 0, false
	}
	xid := d.next
	if d.next == math.MinInt32 {
		d.next = firstDirectXid
	} else {
		d.next--
	}
	if d.calls == nil {
		d.calls = make(map[int32]directCall)
	}
	d.calls[xid] = call
	return xid, true
}

// deliver hands a reply (length prefix excluded) to its call, and files
// the watch it set, before the frames after it are read: the server sends
// a watch's event only after that reply.
func (d *directConn) deliver(xid int32, b []byte) {
	call, ok := d.take(xid)
	if !ok {
		return // a reply nobody asked for
	}
	code := int32(binary.BigEndian.Uint32(b[12:]))
	if w := call.watch; w.ch != nil {
		// Filed even when the caller has gone: the server set it.
		d.watches.file(d.session, call.op, w.path, code, w.ch)
	}
	call.reply <- directReply{
		zxid: int64(binary.BigEndian.Uint64(b[4:])),
		code: code,
		body: append([]byte(nil), b[16:]...),
	}
}

// skipped tells the call of xid that its reply, size bytes with the
// header's zxid and code, was longer than the connection reads (limit) and
// was skipped. The watch it may have set is not filed: the call fails, and
// nobody gets its channel.
func (d *directConn) skipped(xid int32, zxid int64, code int32, size, limit int) {
	if call, ok := d.take(xid); ok {
		call.reply <- directReply{zxid: zxid, code: code, tooLarge: &ReplyTooLargeError{Size: size, Limit: limit}}
	}
}

// take removes the call of xid, and returns it unless there is none.
func (d *directConn) take(xid int32) (directCall, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	call, ok := d.calls[xid]
	delete(d.calls, xid)
	return call, ok
}

// end fails every call still waiting, with err.
func (d *directConn) end(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended {
		return
	}
	d.ended = true
	for xid, call := range d.calls {
		call.reply <- directReply{err: err}
		delete(d.calls, xid)
	}
	if d.open == nil {
		d.open = make(chan struct{})
	}
	d.openLocked() // waiters find the connection ended
}

// send writes one request on the connection and returns the channel its
// reply comes on; a watching call's watch goes to w. It reports false,
// with nothing written, when the connection has ended, and fails with a
// notSent error when ctx ended before the request was written or the
// connection broke before all of it was.
func (s *sniffConn) send(ctx context.Context, op int32, req any, w watchReg) (<-chan directReply, bool, error) {
	d := &s.dc
	select {
	case <-d.open:
	case <-ctx.Done():
		return nil, true, notSent{ctx.Err()}
	}
	reply := make(chan directReply, 1)
	xid, ok := d.register(directCall{reply, op, w})
	if !ok {
		return nil, false, nil
	}
	frame := jute.Frame(&jute.RequestHeader{Xid: xid, Type: op}, req)
	s.wmu.Lock()
	n, err := s.Conn.Write(frame)
	s.wmu.Unlock()
	if err != nil {
		// The connection is broken, and the call ends with it like any
		// other, unless the frame did not go out whole: the server never
		// read that request, so it was not applied.
		_ = s.Conn.Close()
		if n < len(frame) {
			d.forget(xid)
			if s.c.life.Err() != nil {
				return nil, true, ErrClosed
			}
			return nil, true, notSent{fmt.Errorf("%w (%v)", ErrConnectionClosed, err)}
		}
	}
	return reply, true, nil
}

// forget drops a call whose request was not sent: no reply will come.
func (d *directConn) forget(xid int32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.calls, xid)
}

// direct sends one call on the current connection and returns its reply
// (see pending.wait).
func direct(ctx context.Context, c *Client, op int32, req, resp any) (int64, error) {
	p, err := begin(ctx, c, op, req)
	if err != nil {
		return 0, err
	}
	return p.wait(ctx, resp)
}

// pending is a direct call written on the connection, its reply to come.
type pending struct {
	c     *Client
	reply <-chan directReply
}

// begin writes one call on the current connection. It fails with ctx's
// error in notSent when ctx ends before the call was written, with
// ErrConnectionClosed in notSent when the connection broke before the
// call was wholly written, and with errNotConnected when there is no
// connection. Calls begun one after the other on one goroutine reach the
// server in that order, and are answered in that order, when they go on
// the same connection.
func begin(ctx context.Context, c *Client, op int32, req any) (*pending, error) {
	return beginWatch(ctx, c, op, req, watchReg{})
}

// beginWatch is begin for a watching call, whose watch goes to w.
func beginWatch(ctx context.Context, c *Client, op int32, req any, w watchReg) (*pending, error) {
	if err := ctx.Err(); err != nil {
		return nil, notSent{err}
	}
	s := c.wire.Load()
	if s == nil || c.link.Load() == nil {
		if c.life.Err() != nil {
			return nil, ErrClosed
		}
		return nil, errNotConnected
	}
	ch, ok, err := s.send(ctx, op, req, w)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errNotConnected
	}
	return &pending{c, ch}, nil
}

// wait returns the call's reply: the header's error as the wire client
// reports it, or the body decoded into resp, with the zxid of the reply.
// It returns ctx's error when ctx ends first, ErrConnectionClosed
// (ErrClosed once the client is closed) when the connection ended
// before the reply came, and a *ReplyTooLargeError (without its Op and
// Path: classify names it) for a reply longer than the connection reads.
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
