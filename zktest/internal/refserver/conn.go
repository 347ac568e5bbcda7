package refserver

import (
	"bufio"
	"crypto/tls"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// sessionlessTimeout is how long a connection may stay without a session
// (ZooKeeper's zookeeper.nio.sessionlessCnxnTimeout default).
const sessionlessTimeout = 10 * time.Second

// conn is one client connection. A reader goroutine (serve) reads frames and
// processes them one at a time under the server lock; everything it sends
// (replies, and watch events other connections' requests trigger) goes
// through a queue that a writer goroutine drains, so the server lock is
// never held across a network write.
//
// The queue is bounded by what the client reads. While more than
// Config.outputLimit bytes or outputFrames frames wait to be written, the
// reader reads no further request (as ZooKeeper stops reading a
// connection with too much outstanding), so a client that sends requests
// and never reads their replies blocks on its own writes instead of
// growing the server's memory. Watch events are queued whatever the
// reader does; a connection whose queue passes outputDropFactor times the
// limit all the same is closed (its session lives on).
type conn struct {
	id       uint64
	s        *Server
	nc       net.Conn
	br       *bufio.Reader // reads frames from nc
	remoteIP string
	start    time.Time

	// Guarded by s.mu.
	session   *session
	auth      authSet
	oldClient bool  // its ConnectRequest had no readOnly field
	lastXid   int32 // of the last request of xid 0 and up (ZooKeeper's lastCxid)
	lastOp    string
	lastZxid  int64 // in the last reply header

	qmu    sync.Mutex
	queue  []outPacket
	queued int64 // bytes enqueued and not yet written
	frames int   // frames enqueued and not yet written
	wake   chan struct{}
	drain  chan struct{} // the writer wrote some of the queue

	done      chan struct{}
	closeOnce sync.Once
	draining  atomic.Bool // a frame queued with close-after is pending

	received atomic.Int64
	sent     atomic.Int64
}

type outPacket struct {
	b     []byte
	at    time.Time // not before
	close bool      // close the connection once written
}

func newConn(s *Server, nc net.Conn, id uint64, ip string) *conn {
	c := &conn{
		id: id, s: s, nc: nc, remoteIP: ip, start: time.Now(),
		wake: make(chan struct{}, 1), drain: make(chan struct{}, 1), done: make(chan struct{}),
		br: bufio.NewReaderSize(nc, 16<<10),
	}
	if ip != "" {
		c.auth.add(jute.Id{Scheme: "ip", ID: ip})
	}
	return c
}

// abort closes the connection at once; queued output is dropped. Safe to
// call with s.mu held and more than once.
func (c *conn) abort() {
	c.closeOnce.Do(func() {
		close(c.done)
		c.nc.Close()
	})
}

func (c *conn) closed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// enqueue queues a frame for the writer. Safe to call with s.mu held.
func (c *conn) enqueue(b []byte, closeAfter bool) {
	at := time.Time{}
	if d := time.Duration(c.s.latency.Load()); d > 0 {
		at = time.Now().Add(d)
	}
	if closeAfter {
		c.draining.Store(true)
	}
	c.qmu.Lock()
	c.queue = append(c.queue, outPacket{b: b, at: at, close: closeAfter})
	c.queued += int64(len(b))
	c.frames++
	queued := c.queued
	c.qmu.Unlock()
	if queued > outputDropFactor*c.s.cfg.outputLimit {
		c.s.cfg.Logger.Warn("closing a connection that does not read its output", "conn", c.id,
			"client", c.nc.RemoteAddr().String(), "queued", queued)
		c.abort()
		return
	}
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// written accounts for frames the writer wrote.
func (c *conn) written(frames int, bytes int64) {
	c.qmu.Lock()
	c.queued -= bytes
	c.frames -= frames
	c.qmu.Unlock()
	select {
	case c.drain <- struct{}{}:
	default:
	}
}

// waitForWriter blocks while the connection has more output queued than it
// may before its next request is read; it reports false if the connection
// closed meanwhile.
func (c *conn) waitForWriter() bool {
	for {
		c.qmu.Lock()
		full := c.queued > c.s.cfg.outputLimit || c.frames > c.s.cfg.outputFrames
		c.qmu.Unlock()
		if !full {
			return true
		}
		select {
		case <-c.drain:
		case <-c.done:
			return false
		}
	}
}

// writeLoop drains the queue, batching frames into one write.
func (c *conn) writeLoop() {
	defer c.s.wg.Done()
	var buf []byte
	var deadline time.Time
	for {
		select {
		case <-c.done:
			return
		case <-c.wake:
		}
		c.qmu.Lock()
		batch := c.queue
		c.queue = nil
		c.qmu.Unlock()
		if !c.s.waitUnpaused(c.done) {
			return
		}
		for len(batch) > 0 {
			if wait := time.Until(batch[0].at); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-c.done:
					t.Stop()
					return
				case <-t.C:
				}
			}
			buf = buf[:0]
			now := time.Now()
			n, closeAfter := 0, false
			for n < len(batch) && !batch[n].at.After(now) {
				buf = append(buf, batch[n].b...)
				closeAfter = batch[n].close
				n++
				if closeAfter {
					break
				}
			}
			batch = batch[n:]
			// A client that stops reading is dropped after 30s
			// without progress; the deadline is refreshed lazily to
			// keep a syscall off the common path.
			if now := time.Now(); deadline.Sub(now) < 20*time.Second {
				deadline = now.Add(30 * time.Second)
				c.nc.SetWriteDeadline(deadline)
			}
			if _, err := c.nc.Write(buf); err != nil {
				c.abort()
				return
			}
			c.written(n, int64(len(buf)))
			c.sent.Add(int64(n))
			c.s.m.packetsSent.Add(int64(n))
			if closeAfter {
				// ZooKeeper shuts the socket down after the last frame.
				if tc, ok := c.nc.(*net.TCPConn); ok {
					tc.CloseWrite()
				}
				c.abort()
				return
			}
		}
		if cap(buf) > 1<<20 {
			buf = nil
		}
	}
}

var errFrame = errors.New("refserver: bad frame")

// readFrame reads one length-prefixed frame; lenBuf already holds the
// length when first is true.
func (c *conn) readFrame(first []byte) ([]byte, error) {
	var l [4]byte
	if first != nil {
		copy(l[:], first)
	} else if _, err := io.ReadFull(c.br, l[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(l[:]))
	if n < 0 || int(n) > c.s.cfg.MaxBuffer {
		return nil, errFrame
	}
	b, err := readGrowing(c.br, int(n))
	if err != nil {
		return nil, err
	}
	c.received.Add(1)
	c.s.m.packetsReceived.Add(1)
	return b, nil
}

// readGrowing reads n bytes into a buffer that grows as they arrive, so
// that a declared length costs memory only once its bytes come: a client
// that declares a large frame and sends nothing holds a small buffer.
func readGrowing(r io.Reader, n int) ([]byte, error) {
	const first = 64 << 10
	b := make([]byte, 0, min(n, first))
	for len(b) < n {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(n-len(b), cap(b))) // doubles
		}
		m, err := r.Read(b[len(b):min(cap(b), n)])
		b = b[:len(b)+m]
		if err != nil && len(b) < n {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return b, nil
}

// serve runs the connection until it closes.
func (c *conn) serve() {
	defer c.s.wg.Done()
	defer c.shutdown()
	c.s.wg.Add(1)
	go c.writeLoop()
	c.s.cfg.Logger.Debug("connection accepted", "conn", c.id, "client", c.nc.RemoteAddr().String())

	c.nc.SetReadDeadline(time.Now().Add(sessionlessTimeout))
	if tc, ok := c.nc.(*tls.Conn); ok && !c.tlsHandshake(tc) {
		return
	}
	var first [4]byte
	if _, err := io.ReadFull(c.br, first[:]); err != nil {
		return
	}
	if cmd := string(first[:]); isFourLetterWord(cmd) {
		c.s.m.packetsReceived.Add(1)
		if !c.s.waitUnpaused(c.done) {
			return
		}
		out := c.s.fourLetter(cmd)
		// Counted by its own answer (srvr's Connections), as ZooKeeper
		// counts it, and no longer once answered: the next word's
		// count must not include it.
		c.s.mu.Lock()
		c.s.detach(c)
		c.s.mu.Unlock()
		c.enqueue([]byte(out), true)
		return
	}
	b, err := c.readFrame(first[:])
	if err != nil {
		return
	}
	if !c.s.waitUnpaused(c.done) || !c.s.connect(c, b) {
		return
	}
	c.nc.SetReadDeadline(time.Time{})
	for {
		if !c.waitForWriter() {
			return
		}
		b, err := c.readFrame(nil)
		if err != nil {
			return
		}
		if !c.s.waitUnpaused(c.done) || !c.s.request(c, b) {
			return
		}
	}
}

// tlsHandshake completes the TLS handshake, and authenticates a client
// whose certificate was verified as its subject (x509 scheme).
func (c *conn) tlsHandshake(tc *tls.Conn) bool {
	c.nc.SetWriteDeadline(time.Now().Add(sessionlessTimeout))
	err := tc.Handshake()
	c.nc.SetWriteDeadline(time.Time{})
	if err != nil {
		c.s.cfg.Logger.Debug("TLS handshake failed", "conn", c.id, "err", err)
		return false
	}
	if chains := tc.ConnectionState().VerifiedChains; len(chains) > 0 {
		var subject pkix.RDNSequence
		if _, err := asn1.Unmarshal(chains[0][0].RawSubject, &subject); err == nil {
			c.s.mu.Lock()
			c.auth.add(jute.Id{Scheme: "x509", ID: subject.String()})
			c.s.mu.Unlock()
		}
	}
	return true
}

// shutdown closes the connection and forgets it. If a last frame is queued
// to be sent before closing, the writer closes the connection once it is
// out (or gives up on a stuck client).
func (c *conn) shutdown() {
	if c.draining.Load() {
		t := time.NewTimer(35 * time.Second)
		select {
		case <-c.done:
		case <-c.s.stop:
		case <-t.C:
		}
		t.Stop()
	}
	c.abort()
	c.s.mu.Lock()
	c.s.detach(c)
	c.s.mu.Unlock()
	c.s.cfg.Logger.Debug("connection closed", "conn", c.id, "client", c.nc.RemoteAddr().String())
}

// request handles one frame after the connect; it reports whether to keep
// reading.
func (s *Server) request(c *conn, b []byte) bool {
	var hdr jute.RequestHeader
	d := jute.NewDecoder(b, 0)
	if jute.Unmarshal(d, &hdr) != nil {
		return false // ZooKeeper closes the connection on a short header
	}
	body := d.Rest()
	start := time.Now()
	if hdr.Type == jute.OpAuth {
		return s.auth(c, hdr, body)
	}
	if hdr.Type == jute.OpSASL {
		// Without SASL configured ZooKeeper answers any well-formed
		// token with an empty one, and drops the connection on a
		// malformed request.
		d := jute.NewDecoder(body, 2*s.cfg.MaxBuffer)
		d.Buffer()
		if d.Err() != nil {
			return false
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		c.enqueue(jute.Frame(&jute.ReplyHeader{Xid: hdr.Xid}, saslResponse{}), false)
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.closed() || c.session == nil {
		return false
	}
	s.touch(c.session, s.clock.now())
	drop := false
	if s.dropMatch != nil && validOp(hdr.Type) {
		if s.dropMatch(jute.OpName(hdr.Type), requestPath(hdr.Type, body)) {
			s.dropMatch = nil
			drop = true
		}
	}
	r := s.handle(c, hdr, body)
	if hdr.Xid >= 0 {
		// ZooKeeper keeps a connection's last cxid only for the xids it
		// does not reserve (a client's own negative xids included).
		c.lastXid = hdr.Xid
	}
	c.lastOp = jute.OpName(hdr.Type)
	s.m.observe(time.Since(start))
	if drop {
		s.cfg.Logger.Info("dropping reply after commit", "op", jute.OpName(hdr.Type), "session", hexID(sessionID(c)))
		c.abort()
		s.detach(c)
		return false
	}
	if r.raw != nil {
		c.enqueue(r.raw, false)
		return true
	}
	if r.none {
		return true
	}
	h := &jute.ReplyHeader{Xid: r.xid, Zxid: r.zxid, Err: int32(r.err)}
	c.lastZxid = r.zxid
	if hdr.Type == jute.OpPing {
		h.Xid = jute.XidPing
	}
	var frame []byte
	if r.err == jute.ErrOK && r.body != nil {
		frame = jute.Frame(h, r.body)
	} else {
		frame = jute.Frame(h)
	}
	c.enqueue(frame, r.close)
	if r.close {
		s.detach(c)
		return false
	}
	return true
}

// detach forgets a closed (or closing) connection: its watches go, and its
// session no longer points at it. Caller holds s.mu; idempotent.
func (s *Server) detach(c *conn) {
	if _, ok := s.conns[c]; !ok {
		return
	}
	delete(s.conns, c)
	if s.connsFrom[c.remoteIP]--; s.connsFrom[c.remoteIP] <= 0 {
		delete(s.connsFrom, c.remoteIP)
	}
	s.dataWatches.removeConn(c)
	s.childWatches.removeConn(c)
	if c.session != nil && c.session.conn == c {
		c.session.conn = nil
	}
	c.session = nil
}

// sendEvent queues a watcher event for c, fired by no transaction the
// event names (setWatches'). Caller holds s.mu.
func (s *Server) sendEvent(c *conn, typ int32, path string) { s.sendEventOf(c, typ, path, -1) }

// sendEventOf queues a watcher event for c fired by the transaction of
// zxid (-1: none said), with zxid in its reply header only if the server
// sends event zxids (Config.WatchEventZxids). Caller holds s.mu.
func (s *Server) sendEventOf(c *conn, typ int32, path string, zxid int64) {
	if c.closed() {
		return
	}
	if !s.cfg.WatchEventZxids {
		zxid = -1
	}
	s.m.watchEvents++
	c.enqueue(jute.Frame(&jute.ReplyHeader{Xid: jute.XidNotification, Zxid: zxid},
		&jute.WatcherEvent{Type: typ, State: jute.StateSyncConnected, Path: path}), false)
}

// requestPath extracts the path a request is about (for fault matching).
func requestPath(op int32, body []byte) string {
	switch op {
	case jute.OpMulti, jute.OpMultiRead:
		var m jute.MultiRequest
		if jute.Decode(body, &m) == nil && len(m.Ops) > 0 {
			return m.Ops[0].Path()
		}
		return ""
	case jute.OpPing, jute.OpCloseSession, jute.OpWhoAmI, jute.OpSetWatches, jute.OpSetWatches2, jute.OpReconfig:
		return ""
	case jute.OpDeleteContainer:
		return string(body)
	}
	p, _ := jute.NewDecoder(body, 0).NullableString()
	return p
}

func sessionID(c *conn) int64 {
	if c.session == nil {
		return 0
	}
	return c.session.id
}

// saslResponse is a SetSASLResponse with a null token.
type saslResponse struct{}

func (saslResponse) MarshalJute(e *jute.Encoder) { e.Buffer(nil) }
