package zktest

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a TCP proxy between ZooKeeper clients and one server that injects
// network faults: a partition (Blackhole), dropped connections (ResetAll),
// latency (SetLatency) and a request that is applied but whose reply is lost
// (CutAfterNextRequest). It listens on 127.0.0.1; point the client at Addr
// instead of the server.
//
// The proxy understands ZooKeeper's framing (a 4-byte big-endian length and
// a body, whose first field is the xid) and forwards whole frames, so faults
// never split a frame. Streams that are not framed that way (four-letter
// words) are forwarded as raw bytes.
//
// All methods are safe for concurrent use.
type Proxy struct {
	target string
	ln     net.Listener

	latency   atomic.Int64 // time.Duration
	blackhole atomic.Bool
	cutArmed  atomic.Bool
	cutCreate atomic.Pointer[createCut] // CutAfterNextCreate or CutAfterCreateOf armed
	replyCut  atomic.Bool               // CutAfterNextReply armed
	requests  atomic.Int64

	mu     sync.Mutex
	conns  map[*proxyConn]struct{}
	closed bool

	ctx       context.Context // cancelled by Close
	cancel    context.CancelFunc
	closeOnce sync.Once
	wg        sync.WaitGroup
}

// NewProxy starts a proxy to target ("host:port") on a free port of
// 127.0.0.1. It is closed in t.Cleanup.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("zktest: NewProxy: %v", err)
	}
	p := &Proxy{target: target, ln: ln, conns: map[*proxyConn]struct{}{}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.wg.Add(1)
	go p.acceptLoop()
	t.Cleanup(p.Close)
	return p
}

// Addr returns the proxy's address, "127.0.0.1:port".
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target returns the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// Dialer returns a dial function (the signature of zkit's client.Dialer and
// go-zookeeper's WithDialer) that connects to the proxy whatever address it
// is given, so that a client configured with any connect string goes
// through the proxy.
func (p *Proxy) Dialer() func(network, address string, timeout time.Duration) (net.Conn, error) {
	return func(network, _ string, timeout time.Duration) (net.Conn, error) {
		return net.DialTimeout(network, p.Addr(), timeout)
	}
}

// Blackhole partitions the clients from the server: connections stay open
// and new ones are accepted (even while the server is down), but nothing is
// forwarded in either direction, and what is sent meanwhile is dropped.
// Clients see a silent network: their requests and pings go unanswered
// until they give up on the connection, and the server's session timer
// runs.
func (p *Proxy) Blackhole() { p.blackhole.Store(true) }

// Heal ends a Blackhole: forwarding resumes. Bytes dropped while blackholed
// are not replayed; a connection that lost anything but pings and ping
// replies (or whose server side closed) is closed at once, because its
// client or server would otherwise wait for a reply that will never come.
// Clients then reconnect, through the proxy, as after any connection loss.
func (p *Proxy) Heal() {
	p.blackhole.Store(false)
	for _, c := range p.snapshot() {
		if c.damaged.Load() {
			c.teardown(false)
		}
	}
}

// ResetAll closes every open connection through the proxy, with a TCP reset
// where possible. New connections are accepted as usual.
func (p *Proxy) ResetAll() {
	for _, c := range p.snapshot() {
		c.teardown(true)
	}
}

// SetLatency delays every chunk forwarded in either direction by d (0: no
// delay), one chunk after another: chunks sent back to back queue, so the
// k-th of a burst (pipelined requests, a ping behind them) arrives about
// k·d late, as over a slow link more than a long one. It applies to chunks
// read after the call.
func (p *Proxy) SetLatency(d time.Duration) { p.latency.Store(int64(d)) }

// CutAfterNextRequest arms a one-shot fault: the next request frame any
// client sends through the proxy (not counting connect handshakes, pings and
// other frames with negative xids) is forwarded to the server, then
// everything the server sends on that connection is dropped and nothing
// more from the client is forwarded, and once the server has answered that
// request (or after 10 s, scaled) the connection is closed. The request is
// applied, but its reply is lost: the client sees connection loss and cannot
// tell whether its write happened.
func (p *Proxy) CutAfterNextRequest() { p.cutArmed.Store(true) }

// CutAfterNextCreate arms the fault of CutAfterNextRequest for the next
// create request (create, create2, createContainer or createTTL; not a
// create inside a multi) whose path starts with prefix. The requests
// before it, creates of other paths included, go through untouched: a
// recipe that reads or creates its directory first loses the reply of the
// create that matters. It replaces a create cut armed earlier that has not
// fired.
func (p *Proxy) CutAfterNextCreate(prefix string) {
	p.cutCreate.Store(&createCut{path: prefix, prefix: true})
}

// CutAfterCreateOf arms the fault of CutAfterNextRequest for the next
// create of exactly path, as CutAfterNextCreate does for a prefix: for a
// directory or parent that a recipe creates on the way to its own node.
func (p *Proxy) CutAfterCreateOf(path string) { p.cutCreate.Store(&createCut{path: path}) }

// CutAfterNextMultiCreate arms the fault of CutAfterNextRequest for the
// next multi whose first op is a create whose path starts with prefix: for
// a recipe that creates its node and writes others in one transaction.
// Like CutAfterNextCreate, it lets every other request through, and
// replaces a create cut armed earlier that has not fired.
func (p *Proxy) CutAfterNextMultiCreate(prefix string) {
	p.cutCreate.Store(&createCut{path: prefix, prefix: true, multi: true})
}

// createCut is an armed create cut: the path, or its prefix; in a plain
// create, or as the first op of a multi.
type createCut struct {
	path   string
	prefix bool
	multi  bool
}

// takeCreateCut reports whether frame is a create the armed cut names,
// disarming the cut if so.
func (p *Proxy) takeCreateCut(frame []byte) bool {
	cut := p.cutCreate.Load()
	if cut == nil || len(frame) < 16 {
		return false
	}
	at := 12 // where the create's path begins
	if cut.multi {
		// A multi: a MultiHeader (type int32, done bool, err int32)
		// before each op.
		if binary.BigEndian.Uint32(frame[8:12]) != opMulti || len(frame) < 25 {
			return false
		}
		frame, at = frame[4:], 17 // the first op's type where the opcode was
	}
	switch binary.BigEndian.Uint32(frame[8:12]) { // the request's (or first op's) opcode
	case opCreate, opCreate2, opCreateContainer, opCreateTTL:
	default:
		return false
	}
	if len(frame) < at+4 {
		return false
	}
	n := int(int32(binary.BigEndian.Uint32(frame[at : at+4]))) // the path's length
	if n < 0 || at+4+n > len(frame) {
		return false
	}
	path := string(frame[at+4 : at+4+n])
	if path != cut.path && !(cut.prefix && strings.HasPrefix(path, cut.path)) {
		return false
	}
	return p.cutCreate.CompareAndSwap(cut, nil)
}

// CutAfterNextReply arms a one-shot fault: the next request frame any
// connection forwards is answered, and that connection is closed right
// after the reply has been passed to the client: a call that succeeded on
// a connection that then broke.
func (p *Proxy) CutAfterNextReply() { p.replyCut.Store(true) }

// Requests returns how many requests clients have sent through the proxy,
// counted as they arrive (whether forwarded or dropped by a fault): calls
// and credentials, but neither connect handshakes nor pings or watch
// resets. A test that must show that a call sent nothing compares it
// before and after.
func (p *Proxy) Requests() int64 { return p.requests.Load() }

// ActiveConns returns the number of client connections open through the
// proxy.
func (p *Proxy) ActiveConns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close stops accepting, closes every connection and waits until all of the
// proxy's goroutines have ended. It is registered with t.Cleanup by NewProxy
// and may be called more than once.
func (p *Proxy) Close() {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		p.cancel()
		p.ln.Close()
		for _, c := range p.snapshot() {
			c.teardown(false)
		}
	})
	p.wg.Wait()
}

func (p *Proxy) snapshot() []*proxyConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	cs := make([]*proxyConn, 0, len(p.conns))
	for c := range p.conns {
		cs = append(cs, c)
	}
	return cs
}

func (p *Proxy) acceptLoop() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if p.ctx.Err() != nil {
				return
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A transient failure (out of file descriptors, ...): retry.
			select {
			case <-p.ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		p.wg.Add(1)
		go p.handle(c)
	}
}

func (p *Proxy) handle(client net.Conn) {
	defer p.wg.Done()
	ctx, cancel := context.WithTimeout(p.ctx, Scale(10*time.Second))
	var d net.Dialer
	server, err := d.DialContext(ctx, "tcp", p.target)
	cancel()
	if err != nil {
		if !p.blackhole.Load() {
			client.Close()
			return
		}
		// A partition hides that the server is down, as it hides a
		// server's close (serverToClient): the client finds a silent
		// network until Heal, which closes the connection.
		var far net.Conn
		server, far = net.Pipe()
		far.Close()
	}
	c := &proxyConn{p: p, client: client, server: server, closed: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		client.Close()
		server.Close()
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	p.wg.Add(2)
	go c.clientToServer()
	go c.serverToClient()
}

// proxyConn is one client connection and its server connection.
type proxyConn struct {
	p              *Proxy
	client, server net.Conn

	damaged atomic.Bool // lost something but pings while blackholed
	cut     atomic.Bool // CutAfterNextRequest fired on this connection
	cutXid  atomic.Int32

	replyCut    atomic.Bool // CutAfterNextReply fired on this connection
	replyCutXid atomic.Int32

	mu       sync.Mutex
	cutTimer *time.Timer
	once     sync.Once
	closed   chan struct{}
}

// teardown closes both sides (with RST if reset) and forgets the connection.
func (c *proxyConn) teardown(reset bool) {
	c.once.Do(func() {
		if reset {
			for _, nc := range []net.Conn{c.client, c.server} {
				if tc, ok := nc.(*net.TCPConn); ok {
					tc.SetLinger(0)
				}
			}
		}
		c.client.Close()
		c.server.Close()
		c.mu.Lock()
		if c.cutTimer != nil {
			c.cutTimer.Stop()
		}
		c.mu.Unlock()
		close(c.closed)
		c.p.mu.Lock()
		delete(c.p.conns, c)
		c.p.mu.Unlock()
	})
}

// delay waits for the proxy's latency; false if the connection closed.
func (c *proxyConn) delay() bool {
	d := time.Duration(c.p.latency.Load())
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.closed:
		return false
	}
}

// blackholed reports whether the proxy is blackholed, in which case the
// chunk is dropped: anything but a ping lost that way damages the
// connection, which Heal then closes.
func (c *proxyConn) blackholed(hasXid bool, xid int32) bool {
	if !c.p.blackhole.Load() {
		return false
	}
	if !(hasXid && xid == xidPing) {
		c.damaged.Store(true)
	}
	return true
}

func (c *proxyConn) clientToServer() {
	defer c.p.wg.Done()
	defer c.teardown(false)
	fr := newFrameReader(c.client)
	for first := true; ; first = false {
		chunk, framed, err := fr.next()
		if err != nil {
			return
		}
		xid, hasXid := frameXid(chunk, framed)
		if framed && !first && hasXid && (isCall(xid) || xid == xidAuth) {
			c.p.requests.Add(1)
		}
		if c.cut.Load() {
			continue // the cut request was the last one forwarded
		}
		if c.blackholed(hasXid, xid) {
			continue
		}
		if framed && !first && hasXid && isCall(xid) && (c.p.cutArmed.CompareAndSwap(true, false) || c.p.takeCreateCut(chunk)) {
			c.cutXid.Store(xid)
			c.cut.Store(true)
			c.mu.Lock()
			c.cutTimer = time.AfterFunc(Scale(10*time.Second), func() { c.teardown(false) })
			c.mu.Unlock()
			if _, err := c.server.Write(chunk); err != nil {
				return
			}
			continue
		}
		if framed && !first && hasXid && isCall(xid) && c.p.replyCut.CompareAndSwap(true, false) {
			c.replyCutXid.Store(xid)
			c.replyCut.Store(true)
		}
		if !c.delay() {
			return
		}
		// Held back for latency and blackholed meanwhile: in flight when
		// the partition began, so lost.
		if c.blackholed(hasXid, xid) {
			continue
		}
		if _, err := c.server.Write(chunk); err != nil {
			return
		}
	}
}

func (c *proxyConn) serverToClient() {
	defer c.p.wg.Done()
	fr := newFrameReader(c.server)
	for {
		chunk, framed, err := fr.next()
		if err != nil {
			if c.p.blackhole.Load() && !c.cut.Load() {
				// A partition hides the server's close from the client:
				// keep the client's side open until Heal or Close.
				c.damaged.Store(true)
				<-c.closed
			}
			c.teardown(false)
			return
		}
		xid, hasXid := frameXid(chunk, framed)
		if c.cut.Load() {
			if hasXid && xid == c.cutXid.Load() {
				c.teardown(false) // the cut request has been applied
				return
			}
			continue
		}
		if c.blackholed(hasXid, xid) {
			continue
		}
		if !c.delay() {
			return
		}
		// Held back for latency and blackholed meanwhile: in flight when
		// the partition began, so lost.
		if c.blackholed(hasXid, xid) {
			continue
		}
		if _, err := c.client.Write(chunk); err != nil {
			c.teardown(false)
			return
		}
		if c.replyCut.Load() && hasXid && xid == c.replyCutXid.Load() {
			c.teardown(false) // the reply has been passed on
			return
		}
	}
}

// isCall reports whether a request's xid is a call's: a client numbers its
// calls itself (from 0 or 1 up), and ZooKeeper reserves negative xids for
// pings, credentials and SetWatches.
func isCall(xid int32) bool { return xid >= 0 }

// frameXid returns the xid at the start of a frame's body.
func frameXid(chunk []byte, framed bool) (int32, bool) {
	if !framed || len(chunk) < 8 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(chunk[4:8])), true
}

// frameReader splits a ZooKeeper stream into frames (length prefix
// included). A length that cannot be a ZooKeeper frame switches it to raw
// mode for the rest of the stream: chunks as they arrive.
type frameReader struct {
	r   *bufio.Reader
	raw bool
	buf []byte
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next frame (framed true) or raw chunk. The slice is valid
// until the next call.
func (f *frameReader) next() ([]byte, bool, error) {
	if !f.raw {
		hdr, err := f.r.Peek(4)
		if err != nil {
			if len(hdr) > 0 && err == io.EOF {
				f.raw = true // a short tail: pass it on raw
			} else {
				return nil, false, err
			}
		} else if l := int32(binary.BigEndian.Uint32(hdr)); l >= 0 && l <= maxFrame {
			n := 4 + int(l)
			if cap(f.buf) < n {
				f.buf = make([]byte, n)
			}
			f.buf = f.buf[:n]
			if _, err := io.ReadFull(f.r, f.buf); err != nil {
				return nil, false, err
			}
			return f.buf, true, nil
		} else {
			f.raw = true
		}
	}
	if cap(f.buf) < 32<<10 {
		f.buf = make([]byte, 32<<10)
	}
	f.buf = f.buf[:cap(f.buf)]
	n, err := f.r.Read(f.buf)
	if n > 0 {
		return f.buf[:n], false, nil
	}
	return nil, false, err
}
