package client

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// wireSlack is what a frame may add to the server's request limit.
const wireSlack = 64 * 1024

// handshake is what the server said in its connect response. The wire client
// keeps the session password and negotiated timeout to itself, so the
// client's dialer reads them off the first frame of each connection.
type handshake struct {
	sessionID int64
	passwd    []byte
	timeout   time.Duration
}

func (c *Client) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	conn, err := c.cfg.dialer(network, address, timeout)
	if err == nil && c.cfg.tls != nil {
		conn, err = c.handshakeTLS(conn, address)
	}
	if err != nil {
		c.attemptFailed(err)
		return nil, err
	}
	s := &sniffConn{Conn: conn, c: c, addr: address, in: bufio.NewReaderSize(conn, 16<<10)}
	s.dc.watches = &c.watches
	return s, nil
}

// sniffConn passes everything through, frame by frame. It parses the
// first frame the server sends (the connect response), may rewrite the
// first frame the client sends (the connect request; see Write), writes
// zkit's own calls and takes their replies and the watch events out of the
// stream (direct.go, watch.go).
type sniffConn struct {
	net.Conn
	c           *Client
	addr        string
	in          *bufio.Reader // the server's side, read a buffer at a time
	done        bool          // the first frame from the server has been read
	established bool          // it was a connect response with a session
	out         []byte        // what Read hands over next: whole frames only
	buf         []byte        // the frame being read
	err         error         // the error that ended the connection, once out is drained
	wrote       bool
	wmu         sync.Mutex // serialises writes to the connection
	dc          directConn // zkit's own calls on this connection (direct.go)
}

// Write passes p through, whole, with one rewrite: the connect request (the
// first frame) carries the last zxid zkit saw (see takeZxid), and asks for
// a new session instead of resuming one the client has declared lost.
//
// After the client gave a session up (its holders were told it is gone),
// the servers may still have it: a server that restarts, or a quorum that
// re-forms, revives its sessions with fresh timeouts. Resuming it would keep
// its ephemeral nodes alive with nobody left who knows of them. Asked for a
// new session, the server leaves the old one to expire, and deletes its
// ephemeral nodes then. (Curator does the same when it declares a session
// lost: it injects an expiry into its ZooKeeper handle.)
func (s *sniffConn) Write(p []byte) (int, error) {
	if !s.wrote {
		s.wrote = true
		// ConnectRequest after the length: protocolVersion int32,
		// lastZxidSeen int64, timeOut int32, sessionId int64, passwd.
		const zxidAt, idAt = 4 + 4, 4 + 4 + 8 + 4
		if len(p) >= idAt+8 {
			q := append([]byte(nil), p...)
			binary.BigEndian.PutUint64(q[zxidAt:], uint64(s.c.wireZxid.Load()))
			if gone := s.c.abandoned.Load(); gone != 0 && int64(binary.BigEndian.Uint64(q[idAt:])) == gone {
				binary.BigEndian.PutUint64(q[idAt:], 0)
			}
			return s.write(p, q)
		}
	}
	// A request after the length: xid int32, opcode int32, then the
	// record.
	var op int32
	if len(p) >= 12 {
		op = int32(binary.BigEndian.Uint32(p[8:12]))
		s.dc.wireWrote(int32(binary.BigEndian.Uint32(p[4:8])), op)
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	n, err := s.Conn.Write(p)
	if err != nil && op == jute.OpAuth {
		// go-zookeeper 1.0.4 hands the credentials it sends again on a
		// new connection a reply channel of one slot, fills it when the
		// write fails, and fills it again when it fails the connection's
		// calls: its event loop then blocks for good, and the client never
		// connects again. Told the write went, it finds the connection
		// closed on its reading side and fails the call once.
		_ = s.Conn.Close()
		return len(p), nil
	}
	return n, err
}

// Close closes the connection and fails the direct calls waiting on it.
func (s *sniffConn) Close() error {
	s.endDirect(ErrConnectionClosed)
	return s.Conn.Close()
}

// endDirect ends the direct calls of the connection: no more are sent on
// it, and those waiting fail with err.
func (s *sniffConn) endDirect(err error) {
	s.c.wire.CompareAndSwap(s, nil)
	s.dc.end(err)
}

// setWatches sets keys again on a new connection of their session, before
// anything else is written on it (see watch.go).
func (s *sniffConn) setWatches(keys []watchKey) {
	if len(keys) == 0 {
		return
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	for _, f := range setWatchesFrames(keys, s.c.endZxid.Load()) {
		if _, err := s.Conn.Write(f); err != nil {
			_ = s.Conn.Close() // the wire client finds it closed, and reconnects
			return
		}
	}
}

// write writes q in place of p.
func (s *sniffConn) write(p, q []byte) (int, error) {
	if _, err := s.Conn.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Read hands the wire client the server's frames, whole: a frame cut off by
// the connection's end is never handed over (the wire client would have
// failed on it anyway). A reply's zxid is kept by zkit and handed over as
// 0 (see watch.go).
func (s *sniffConn) Read(p []byte) (int, error) {
	if len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if err := s.fill(); err != nil {
			if !s.done && refusedByPeer(err) {
				// With TLS 1.3 a server checks the client's certificate
				// after the client has finished its handshake: its refusal
				// comes here.
				s.c.attemptFailed(explainTLS(s.addr, err))
			}
			if s.established {
				s.c.endZxid.Store(s.c.wireZxid.Load())
			}
			s.endDirect(ErrConnectionClosed)
			s.err = err
			return 0, err
		}
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// fill reads the next frame for the wire client into out. Replies to
// direct calls on the way go to their callers.
func (s *sniffConn) fill() error {
	for {
		s.buf = append(s.buf[:0], 0, 0, 0, 0)
		if _, err := io.ReadFull(s.in, s.buf); err != nil {
			return err
		}
		size := int(binary.BigEndian.Uint32(s.buf))
		if limit := s.c.cfg.maxBuffer + wireSlack; size > limit {
			if skipped, err := s.skip(size, limit); skipped || err != nil {
				if err != nil {
					return err
				}
				continue
			}
			// The wire client refuses such a frame and closes the
			// connection: hand over the length alone.
			s.out = s.buf
			return nil
		}
		s.buf = append(s.buf, make([]byte, size)...)
		if _, err := io.ReadFull(s.in, s.buf[4:]); err != nil {
			return err
		}
		b := s.buf[4:]
		if !s.done {
			s.done = true
			s.parse(b)
			s.out = s.buf
			return nil
		}
		if len(b) >= 16 {
			switch xid := int32(binary.BigEndian.Uint32(b)); {
			case isDirectXid(xid):
				s.sawZxid(int64(binary.BigEndian.Uint64(b[4:])))
				s.dc.deliver(xid, b)
				continue
			case xid == jute.XidSetWatches: // zkit's own (see watch.go)
				if code := int32(binary.BigEndian.Uint32(b[12:])); code != 0 {
					s.c.log.Warn("zkit: the server refused to set the watches again", "err", wireError(code))
				}
				continue
			case xid == jute.XidNotification:
				// The wire client still sees the event, for subscribers.
				s.c.watches.fire(b[16:])
			default:
				s.dc.wireReplied(xid)
			}
		}
		s.takeZxid(b)
		s.out = s.buf
		return nil
	}
}

// skip reads past a frame of size bytes, more than limit, when it is a
// reply to a direct call, and fails that call with a *ReplyTooLargeError
// (see pending.wait). ZooKeeper does not bound its replies (a node may have
// more children than any reply the client reads), and a connection dropped
// for one would fail every call on it with a retryable error, and the same
// call again on the next connection, for ever. Skipped, the reply costs the
// connection nothing: the length says where the next frame starts. A watch
// the call set is not filed (nobody gets its channel); the server's fires
// into nothing. Any other frame is left for the wire client, which refuses
// it and closes the connection: it reports false.
func (s *sniffConn) skip(size, limit int) (bool, error) {
	if !s.done || size < 16 {
		return false, nil
	}
	h, err := s.in.Peek(16) // the reply header: xid int32, zxid int64, err int32
	if err != nil {
		return false, err
	}
	xid := int32(binary.BigEndian.Uint32(h))
	if !isDirectXid(xid) {
		return false, nil
	}
	zxid, code := int64(binary.BigEndian.Uint64(h[4:])), int32(binary.BigEndian.Uint32(h[12:]))
	if _, err := s.in.Discard(size); err != nil {
		return false, err
	}
	s.sawZxid(zxid)
	s.dc.skipped(xid, zxid, code, size, limit)
	return true, nil
}

// takeZxid keeps the zxid of a reply (ReplyHeader: xid int32, zxid int64,
// err int32) and zeroes it. Pings, watch events and auth replies (negative
// xids) are left alone, as ZooKeeper's own client does.
//
// A client sends the last zxid it saw in each connect request, so that no
// server behind it takes the session. go-zookeeper 1.0.4 keeps it in a
// field its receive loop writes for every reply while its connection loop
// reads it for the connect request, without synchronisation: a data race
// (go-zookeeper/zk#35) that `go test -race` reports in any program that
// reconnects. zkit takes the last zxid off the receive loop instead: it
// keeps the highest zxid of every reply on its way in and hands the wire
// client a zxid of 0, which it ignores; it writes the zxid it kept into the
// connect request (see Write) and SetWatches (watch.go).
func (s *sniffConn) takeZxid(b []byte) {
	if len(b) < 16 || int32(binary.BigEndian.Uint32(b)) < 0 {
		return
	}
	s.sawZxid(int64(binary.BigEndian.Uint64(b[4:])))
	binary.BigEndian.PutUint64(b[4:], 0)
}

// sawZxid keeps z if it is the highest zxid of a reply so far.
func (s *sniffConn) sawZxid(z int64) {
	for {
		cur := s.c.wireZxid.Load()
		if z <= cur || s.c.wireZxid.CompareAndSwap(cur, z) {
			return
		}
	}
}

// parse reads the connect response.
func (s *sniffConn) parse(b []byte) {
	if len(b) < 20 || len(b) > 1024 {
		return // not a connect response we understand
	}
	timeoutMs := int32(binary.BigEndian.Uint32(b[4:8]))
	id := int64(binary.BigEndian.Uint64(b[8:16]))
	plen := int(int32(binary.BigEndian.Uint32(b[16:20])))
	if id == 0 {
		s.c.watches.expired()
	}
	if id == 0 || plen < 0 || 20+plen > len(b) {
		return
	}
	s.established = true
	s.dc.start(id, int(s.c.creds.Load()))
	s.setWatches(s.c.watches.resume(id))
	s.c.wire.Store(s)
	s.c.handshake.Store(&handshake{
		sessionID: id,
		passwd:    append([]byte(nil), b[20:20+plen]...),
		timeout:   time.Duration(timeoutMs) * time.Millisecond,
	})
}
