package client

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// One connection.
//
// A conn is one connection of a session, from the connect response to its
// end. Frames go out whole, one writer at a time: each caller writes its
// own request on its own goroutine (see direct.go), the pinger its pings.
// One reading goroutine, the client's session loop (connect.go), reads
// every frame the server sends and hands it over by its xid:
//
//   - a call's reply (xid 1 and up, as the caller numbered it) goes to the
//     caller waiting for it, and a watch the call set is filed first
//     (watch.go);
//   - a watch event (xid -1) fires the watches it concerns, and reaches
//     the client's subscribers;
//   - a ping's answer (-2) only proves the connection alive;
//   - credentials (-4) are answered in the order they were sent;
//   - SetWatches (-8) is answered once the watches are set again.
//
// ZooKeeper answers a session's requests in the order it received them,
// and a call's reply carries the zxid of the server's state when it was
// answered (its own transaction's, for a write): the reading goroutine
// keeps the highest, for LastZxid, the next connect request and
// SetWatches.
//
// On a new connection of a client with credentials, they are sent again
// first, then SetWatches, and calls wait until the server has answered
// every credential sent again: a call then never meets NoAuth for a node
// the credentials open, and when a credential is refused (the server then
// closes the connection) no call had left, so none has an unknown outcome.
//
// When the connection ends, every call waiting for its reply fails with
// ErrConnectionClosed (an unknown outcome for a write), and every call
// still waiting to be written with a retryable error: it was not sent, and
// never will be. Nothing outlives its connection.

// firstXid is the xid of a connection's first call; xids run up from it,
// and start again there after the largest int32. ZooKeeper reserves the
// negative xids (-1 events, -2 pings, -4 credentials, -8 SetWatches).
const firstXid int32 = 1

// keptBuffer bounds the buffer a connection keeps to read frames into.
const keptBuffer = 64 << 10

// closeWait bounds the wait for the server to end the session at Close.
const closeWait = time.Second

// pingFrame is a ping: length 8, xid -2, opcode ping.
var pingFrame = jute.Frame(&jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing})

// conn is one connection of a session.
type conn struct {
	c       *Client
	nc      net.Conn
	in      *bufio.Reader
	addr    string
	session int64
	timeout time.Duration // the session timeout the server negotiated

	wmu sync.Mutex // one writer at a time, so that frames go out whole

	mu     sync.Mutex
	next   int32                // the next call's xid
	calls  map[int32]directCall // awaiting their reply, by xid
	auths  []authWait           // credentials sent, to be answered in this order
	resent int                  // credentials sent again at the start, still unanswered
	open   chan struct{}        // closed once calls may be written, or the connection ended
	ended  error                // why the connection ended; nil while it lives
	pinger *time.Timer          // the next ping
}

// authWait is credentials sent on the connection, awaiting the server's
// answer: AddAuth's (reply set), or the client's sent again at the start.
type authWait struct {
	cred  authCred
	reply chan<- directReply // nil for credentials sent again
}

// directCall is a call awaiting its reply.
type directCall struct {
	reply chan<- directReply
	op    int32
	watch watchReg
}

// watchReg is what a call that sets or removes watches does in the watch
// registry (watch.go): filed runs with its reply, on the reading goroutine
// before any later frame is read (the server sends a watch's events only
// after the reply that set it); dropped runs instead when no reply will
// come (the connection ended, the request did not go out whole, or the
// reply was too long to read). Either may be nil.
type watchReg struct {
	filed   func(session int64, code int32)
	dropped func()
}

// drop runs the dropped hook, if any.
func (w watchReg) drop() {
	if w.dropped != nil {
		w.dropped()
	}
}

// directReply is the server's reply to a call, or why none came.
type directReply struct {
	zxid int64  // the reply header's
	code int32  // the reply header's error code
	body []byte // after the header; nil when empty
	err  error  // the connection ended first

	tooLarge *ReplyTooLargeError // the body was too long to read, and skipped
}

func newConn(c *Client, nc net.Conn, in *bufio.Reader, addr string, h *handshake) *conn {
	return &conn{c: c, nc: nc, in: in, addr: addr, session: h.sessionID, timeout: h.timeout,
		next: firstXid, calls: make(map[int32]directCall), open: make(chan struct{})}
}

// prime writes, before anything else goes out on the connection, the
// client's credentials and then the SetWatches requests that set its
// watches (keys) again. Calls wait until the server has answered the
// credentials (see opened).
func (cn *conn) prime(creds []authCred, keys []watchKey) error {
	cn.mu.Lock()
	for _, a := range creds {
		cn.auths = append(cn.auths, authWait{cred: a})
	}
	cn.resent = len(creds)
	if cn.resent == 0 {
		close(cn.open)
	}
	cn.mu.Unlock()
	for _, a := range creds {
		if _, err := cn.nc.Write(authFrame(a)); err != nil {
			return err
		}
	}
	for _, f := range setWatchesFrames(keys, cn.c.lastZxid.Load()) {
		if _, err := cn.nc.Write(f); err != nil {
			return err
		}
	}
	return nil
}

// authFrame is the request that adds credentials a to the connection.
func authFrame(a authCred) []byte {
	return jute.Frame(&jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth}, &jute.AuthPacket{Scheme: a.scheme, Auth: a.auth})
}

// startPings pings every third of the session timeout, as ZooKeeper's
// client does, until the connection ends. The server expires a session it
// has not heard from for its timeout; the client drops a connection it has
// not heard from for two thirds of it (see read), which a ping's answer
// always comes well within.
func (cn *conn) startPings() {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.ended == nil {
		cn.pinger = time.AfterFunc(cn.timeout/3, cn.ping)
	}
}

func (cn *conn) ping() {
	if err := cn.write(pingFrame, nil); err != nil {
		return
	}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.ended == nil {
		cn.pinger.Reset(cn.timeout / 3)
	}
}

// write writes frame whole, or closes the connection: a frame cut short
// would leave the server reading the rest of it as the next one. A frame
// that did not go out whole was not sent (notSent, or ErrClosed once the
// client is closed). before, when set, runs under the writer's lock just
// before the write, and may refuse it.
func (cn *conn) write(frame []byte, before func() error) error {
	cn.wmu.Lock()
	if before != nil {
		if err := before(); err != nil {
			cn.wmu.Unlock()
			return err
		}
	}
	n, err := cn.nc.Write(frame)
	cn.wmu.Unlock()
	if err == nil {
		return nil
	}
	_ = cn.nc.Close() // the reading goroutine ends the connection
	if n == len(frame) {
		return nil // it left: its reply, if any, fails with the connection
	}
	if cn.c.life.Err() != nil {
		return ErrClosed
	}
	return notSent{fmt.Errorf("%w (%v)", ErrConnectionClosed, err)}
}

// read reads and hands over the server's frames until the connection
// fails, and returns why. It drops a connection that has been silent for
// two thirds of the session timeout (less a sixteenth at most): a ping
// would have been answered.
func (cn *conn) read() error {
	silent := 2 * cn.timeout / 3
	limit := cn.c.cfg.maxBuffer + wireSlack
	var length [4]byte
	var buf []byte // the frames are read into it; what a caller keeps is copied out
	var deadline time.Time
	for {
		// The deadline moves on with the frames, in steps of a sixteenth
		// (setting it costs more than reading the clock).
		if now := time.Now(); deadline.Sub(now) < silent-silent/16 {
			deadline = now.Add(silent)
			if err := cn.nc.SetReadDeadline(deadline); err != nil {
				return err
			}
		}
		if _, err := io.ReadFull(cn.in, length[:]); err != nil {
			return err
		}
		size := int(int32(binary.BigEndian.Uint32(length[:])))
		if size < 16 {
			return fmt.Errorf("zk: frame of %d bytes from %s: shorter than a reply header", size, cn.addr)
		}
		if size > limit {
			if err := cn.skip(size, limit); err != nil {
				return err
			}
			continue
		}
		if cap(buf) < size {
			buf = make([]byte, size)
		}
		frame := buf[:size]
		if _, err := io.ReadFull(cn.in, frame); err != nil {
			return err
		}
		if err := cn.dispatch(frame); err != nil {
			return err
		}
		if cap(buf) > keptBuffer {
			buf = nil // a long reply's buffer is not kept for the connection's life
		}
	}
}

// dispatch hands one frame (length excluded) over by its xid; it returns
// an error when the connection cannot go on.
func (cn *conn) dispatch(b []byte) error {
	xid := int32(binary.BigEndian.Uint32(b))
	zxid := int64(binary.BigEndian.Uint64(b[4:]))
	code := int32(binary.BigEndian.Uint32(b[12:]))
	switch xid {
	case jute.XidNotification:
		// Not a reply: its zxid, when the server sends one, is the event's
		// transaction, not the state the session has seen (a multi fires
		// several events of one zxid, and the client may not yet have
		// read them all).
		cn.c.watches.fire(b[16:], eventZxid(zxid))
		cn.c.publishWatchEvent(b[16:], eventZxid(zxid))
	case jute.XidPing:
	case jute.XidAuth:
		return cn.authAnswered(code)
	case jute.XidSetWatches:
		if code != 0 {
			cn.c.log.Warn("zkit: the server refused to set the watches again", "err", wireError(code))
		}
	default:
		cn.c.sawZxid(zxid)
		cn.deliver(xid, zxid, code, b[16:])
	}
	return nil
}

// deliver hands a call's reply to its caller, and files the watch it set,
// before the frames after it are read: the server sends a watch's event
// only after that reply.
func (cn *conn) deliver(xid int32, zxid int64, code int32, body []byte) {
	call, ok := cn.take(xid)
	if !ok {
		return // a reply nobody waits for: closeSession's
	}
	if call.watch.filed != nil {
		// Filed even when the caller has gone: the server set it.
		call.watch.filed(cn.session, code)
	}
	call.reply <- directReply{zxid: zxid, code: code, body: append([]byte(nil), body...)}
}

// skip reads past a frame of size bytes, more than limit, when it is a
// call's reply, and fails that call with a *ReplyTooLargeError (see
// pending.wait). ZooKeeper does not bound its replies (a node may have more
// children than any reply the client reads), and a connection dropped for
// one would fail every call on it with a retryable error, and the same call
// again on the next connection, for ever. Skipped, the reply costs the
// connection nothing: the length says where the next frame starts. A watch
// the call set is not filed (nobody gets its channel); the server's fires
// into nothing. Any other frame that long ends the connection.
func (cn *conn) skip(size, limit int) error {
	h, err := cn.in.Peek(16) // the reply header: xid int32, zxid int64, err int32
	if err != nil {
		return err
	}
	xid := int32(binary.BigEndian.Uint32(h))
	zxid, code := int64(binary.BigEndian.Uint64(h[4:])), int32(binary.BigEndian.Uint32(h[12:]))
	if xid < firstXid {
		return fmt.Errorf("zk: frame of %d bytes from %s: more than the %d the client reads", size, cn.addr, limit)
	}
	if _, err := cn.in.Discard(size); err != nil {
		return err
	}
	cn.c.sawZxid(zxid)
	if call, ok := cn.take(xid); ok {
		call.watch.drop()
		call.reply <- directReply{zxid: zxid, code: code, tooLarge: &ReplyTooLargeError{Size: size, Limit: limit}}
	}
	return nil
}

// authAnswered takes the server's answer (code) to the oldest credentials
// still unanswered. Accepted credentials are kept, to be sent again on
// every later connection, even when their caller has given up: the server
// holds them for this connection. Refused, they end the connection, as
// the server does.
func (cn *conn) authAnswered(code int32) error {
	cn.mu.Lock()
	if len(cn.auths) == 0 {
		cn.mu.Unlock()
		return fmt.Errorf("zk: %s answered credentials never sent", cn.addr)
	}
	a := cn.auths[0]
	cn.auths = cn.auths[1:]
	if a.reply == nil {
		if cn.resent--; cn.resent == 0 && code == 0 {
			close(cn.open)
		}
	}
	cn.mu.Unlock()
	if code == 0 && a.reply != nil {
		cn.c.keepCredentials(a.cred)
	}
	if a.reply != nil {
		a.reply <- directReply{code: code}
	}
	if code != 0 {
		cn.c.authFailed(a.cred.scheme, wireError(code))
		return fmt.Errorf("zk: %s refused the %s credentials: %w", cn.addr, a.cred.scheme, wireError(code))
	}
	return nil
}

// register gives a call its xid. It fails when the connection has ended:
// the call was not sent.
func (cn *conn) register(call directCall) (int32, error) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.ended != nil {
		return 0, cn.notSentErr()
	}
	xid := cn.nextXid()
	cn.calls[xid] = call
	return xid, nil
}

// nextXid gives out the next xid. Called with mu held.
func (cn *conn) nextXid() int32 {
	xid := cn.next
	if cn.next == math.MaxInt32 {
		cn.next = firstXid
	} else {
		cn.next++
	}
	return xid
}

// notSentErr is the error of a call that found the connection ended
// before it was written. Called with mu held.
func (cn *conn) notSentErr() error {
	if cn.c.life.Err() != nil {
		return ErrClosed
	}
	return notSent{ErrConnectionClosed}
}

// take removes the call of xid, and returns it unless there is none.
func (cn *conn) take(xid int32) (directCall, bool) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	call, ok := cn.calls[xid]
	delete(cn.calls, xid)
	return call, ok
}

// forget drops a call whose request was not sent: no reply will come.
func (cn *conn) forget(xid int32) {
	if call, ok := cn.take(xid); ok {
		call.watch.drop()
	}
}

// send writes one request on the connection and returns the channel its
// reply comes on; a watching call's watch goes to w. It waits until calls
// may be written (see opened), and fails, with nothing sent, when ctx ends
// first (notSent), when the connection has ended (notSent, or ErrClosed
// once the client is closed), or when the connection broke before the
// whole request was written (likewise).
func (cn *conn) send(ctx context.Context, op int32, req any, w watchReg) (<-chan directReply, error) {
	if err := cn.opened(ctx); err != nil {
		return nil, err
	}
	reply := make(chan directReply, 1)
	xid, err := cn.register(directCall{reply, op, w})
	if err != nil {
		return nil, err
	}
	if err := cn.write(jute.Frame(&jute.RequestHeader{Xid: xid, Type: op}, req), nil); err != nil {
		cn.forget(xid)
		return nil, err
	}
	return reply, nil
}

// sendAuth writes credentials a on the connection and returns the channel
// the server's answer comes on (its code: 0, or AuthFailed). It waits and
// fails as send does.
func (cn *conn) sendAuth(ctx context.Context, a authCred) (<-chan directReply, error) {
	if err := cn.opened(ctx); err != nil {
		return nil, err
	}
	reply := make(chan directReply, 1)
	// Credentials are answered in the order they were written: queue them
	// under the writer's lock. If the write fails, the connection ends,
	// and they fail with it.
	err := cn.write(authFrame(a), func() error {
		cn.mu.Lock()
		defer cn.mu.Unlock()
		if cn.ended != nil {
			return cn.notSentErr()
		}
		cn.auths = append(cn.auths, authWait{cred: a, reply: reply})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return reply, nil
}

// opened waits until calls may be written on the connection: the server
// has answered the credentials sent again at its start (see prime), or
// the connection has ended (the call then fails as it registers). It
// fails with ctx's error (notSent) when ctx ends first.
func (cn *conn) opened(ctx context.Context) error {
	select {
	case <-cn.open:
		return nil
	case <-ctx.Done():
		return notSent{ctx.Err()}
	}
}

// fail ends the connection's calls with err: no call is written on it any
// more, and every call and credentials waiting for an answer fail with
// err. The connection itself is closed by its owner.
func (cn *conn) fail(err error) {
	cn.mu.Lock()
	if cn.ended != nil {
		cn.mu.Unlock()
		return
	}
	cn.ended = err
	calls, auths := cn.calls, cn.auths
	cn.calls, cn.auths, cn.resent = nil, nil, 0
	if !isClosed(cn.open) {
		close(cn.open) // calls waiting to be written find it ended
	}
	if cn.pinger != nil {
		cn.pinger.Stop()
	}
	cn.mu.Unlock()
	for _, call := range calls {
		call.watch.drop()
		call.reply <- directReply{err: err}
	}
	for _, a := range auths {
		if a.reply != nil {
			a.reply <- directReply{err: err}
		}
	}
}

// isClosed reports whether ch is closed.
func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// closeSession asks the server to end the session, and waits, at most
// closeWait, until the server has closed the connection (read ended), as
// it does once the session is gone: closing first could reset the
// connection before the server read the request. The calls still waiting
// fail with ErrClosed at once.
func (cn *conn) closeSession(read <-chan struct{}) {
	cn.fail(ErrClosed)
	// A writer stuck on a connection that no longer drains gives up by
	// then, and leaves the way free.
	_ = cn.nc.SetWriteDeadline(time.Now().Add(closeWait))
	cn.mu.Lock()
	xid := cn.nextXid()
	cn.mu.Unlock()
	if cn.write(jute.Frame(&jute.RequestHeader{Xid: xid, Type: jute.OpCloseSession}), nil) == nil {
		t := time.NewTimer(closeWait)
		defer t.Stop()
		select {
		case <-read:
		case <-t.C:
		}
	}
	_ = cn.nc.Close()
}
