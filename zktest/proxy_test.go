package zktest

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer speaks just enough of ZooKeeper's framing to test the proxy
// without a JVM: it answers the connect frame with a connect response, pings
// with ping replies, and every other request with a reply carrying the
// request's xid. It records every frame it receives, in arrival order.
type fakeServer struct {
	ln net.Listener
	wg sync.WaitGroup

	mu       sync.Mutex
	received []int32 // xids; connect frames are recorded as connectMark
	changed  chan struct{}
	conns    []net.Conn
}

const connectMark = -1000

func newFakeServer(t *testing.T) *fakeServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln, changed: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go s.serve(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *fakeServer) addr() string { return s.ln.Addr().String() }

func (s *fakeServer) record(xid int32) {
	s.mu.Lock()
	s.received = append(s.received, xid)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

func (s *fakeServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer c.Close()
	if _, err := readFrame(c); err != nil {
		return
	}
	s.record(connectMark)
	resp := make([]byte, 4, 40)
	resp = binary.BigEndian.AppendUint32(resp, 0)
	resp = binary.BigEndian.AppendUint32(resp, 4000)
	resp = binary.BigEndian.AppendUint64(resp, 0x1234)
	resp = binary.BigEndian.AppendUint32(resp, 16)
	resp = append(resp, make([]byte, 16)...)
	binary.BigEndian.PutUint32(resp, uint32(len(resp)-4))
	if _, err := c.Write(resp); err != nil {
		return
	}
	for {
		body, err := readFrame(c)
		if err != nil || len(body) < 8 {
			return
		}
		xid := int32(binary.BigEndian.Uint32(body))
		s.record(xid)
		if _, err := c.Write(replyFrame(xid)); err != nil {
			return
		}
	}
}

// waitFor waits until the server has received xid.
func (s *fakeServer) waitFor(t *testing.T, xid int32) {
	t.Helper()
	deadline := time.After(Scale(5 * time.Second))
	for {
		s.mu.Lock()
		got, ch := s.received, s.changed
		s.mu.Unlock()
		for _, x := range got {
			if x == xid {
				return
			}
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("server never received xid %d; received %v", xid, got)
		}
	}
}

func (s *fakeServer) saw(xid int32) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.received {
		if x == xid {
			return true
		}
	}
	return false
}

func replyFrame(xid int32) []byte {
	p := make([]byte, 20)
	binary.BigEndian.PutUint32(p, 16)
	binary.BigEndian.PutUint32(p[4:], uint32(xid))
	return p
}

func requestFrame(xid, op int32) []byte {
	p := make([]byte, 12)
	binary.BigEndian.PutUint32(p, 8)
	binary.BigEndian.PutUint32(p[4:], uint32(xid))
	binary.BigEndian.PutUint32(p[8:], uint32(op))
	return p
}

// fakeClient is a raw client connection through the proxy.
type fakeClient struct {
	t *testing.T
	net.Conn
}

// dialFake connects and completes the connect handshake.
func dialFake(t *testing.T, addr string) *fakeClient {
	t.Helper()
	c := dialFakeNoHandshake(t, addr)
	c.send(connectRequest(0, nil, 4*time.Second))
	c.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
	if _, err := readFrame(c); err != nil {
		t.Fatalf("connect response: %v", err)
	}
	return c
}

func dialFakeNoHandshake(t *testing.T, addr string) *fakeClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &fakeClient{t: t, Conn: conn}
}

func (c *fakeClient) send(p []byte) {
	c.t.Helper()
	if _, err := c.Write(p); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// roundTrip sends a request and waits for the reply with the same xid.
func (c *fakeClient) roundTrip(xid int32) {
	c.t.Helper()
	c.send(requestFrame(xid, 3))
	c.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
	body, err := readFrame(c)
	if err != nil {
		c.t.Fatalf("reply to xid %d: %v", xid, err)
	}
	if got := int32(binary.BigEndian.Uint32(body)); got != xid {
		c.t.Fatalf("reply xid %d; want %d", got, xid)
	}
}

// expectSilence checks that nothing arrives for a while: the blackhole
// holds. (Absence can only be observed for a bounded time.)
func (c *fakeClient) expectSilence(d time.Duration) {
	c.t.Helper()
	c.SetReadDeadline(time.Now().Add(d))
	var b [1]byte
	n, err := c.Read(b[:])
	var ne net.Error
	if n != 0 || !errors.As(err, &ne) || !ne.Timeout() {
		c.t.Fatalf("expected silence, got %d bytes, err %v", n, err)
	}
}

// expectClosed waits until the proxy closes the connection.
func (c *fakeClient) expectClosed() {
	c.t.Helper()
	c.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
	n, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		c.t.Fatalf("connection still open (read %d bytes)", n)
	}
	if n != 0 {
		c.t.Fatalf("read %d bytes before close; want none", n)
	}
}

func TestProxyForwards(t *testing.T) {
	srv := newFakeServer(t)
	p := NewProxy(t, srv.addr())
	if !strings.HasPrefix(p.Addr(), "127.0.0.1:") || p.Target() != srv.addr() {
		t.Fatalf("Addr %q Target %q", p.Addr(), p.Target())
	}
	c := dialFake(t, p.Addr())
	c.roundTrip(1)
	c.roundTrip(xidPing)
	big := make([]byte, 4+1<<20) // a 1 MB frame is forwarded whole
	binary.BigEndian.PutUint32(big, 1<<20)
	binary.BigEndian.PutUint32(big[4:], 2)
	c.send(big)
	c.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
	if body, err := readFrame(c); err != nil || int32(binary.BigEndian.Uint32(body)) != 2 {
		t.Fatalf("reply to big frame: %v", err)
	}
	if n := p.ActiveConns(); n != 1 {
		t.Fatalf("ActiveConns = %d; want 1", n)
	}
	// The connect frame and the ping are not requests; xids 1 and 2 are.
	if n := p.Requests(); n != 2 {
		t.Fatalf("Requests = %d; want 2", n)
	}
}

func TestProxyDialer(t *testing.T) {
	srv := newFakeServer(t)
	p := NewProxy(t, srv.addr())
	conn, err := p.Dialer()("tcp", "unused:1", Scale(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := &fakeClient{t: t, Conn: conn}
	c.send(connectRequest(0, nil, 4*time.Second))
	c.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
	if _, err := readFrame(c); err != nil {
		t.Fatalf("connect response through the proxy's dialer: %v", err)
	}
	c.roundTrip(1)
	if n := p.ActiveConns(); n != 1 {
		t.Fatalf("ActiveConns = %d; want 1", n)
	}
}

func TestProxyCutAfterNextRequest(t *testing.T) {
	srv := newFakeServer(t)
	p := NewProxy(t, srv.addr())

	// Armed before the connection exists: its connect frame passes, and so
	// do pings; the first real request is the one cut.
	p.CutAfterNextRequest()
	c := dialFake(t, p.Addr())
	c.roundTrip(xidPing)
	c.send(requestFrame(7, 1))
	srv.waitFor(t, 7) // applied...
	c.expectClosed()  // ...but the reply is lost and the connection closed

	// One-shot: the next connection is untouched.
	c2 := dialFake(t, p.Addr())
	c2.roundTrip(8)
	c2.roundTrip(9)

	// Requests pipelined behind the cut one are not forwarded.
	p.CutAfterNextRequest()
	c2.send(append(requestFrame(10, 1), requestFrame(11, 1)...))
	srv.waitFor(t, 10)
	c2.expectClosed()
	c3 := dialFake(t, p.Addr())
	c3.roundTrip(12)
	if srv.saw(11) {
		t.Fatal("the request after the cut one reached the server")
	}
}

// createFrame is a create request (opcode op) for path, the rest of its
// body left out: the proxy reads no further than the path.
func createFrame(xid, op int32, path string) []byte {
	p := requestFrame(xid, op)
	p = binary.BigEndian.AppendUint32(p, uint32(len(path)))
	p = append(p, path...)
	binary.BigEndian.PutUint32(p, uint32(len(p)-4))
	return p
}

func TestProxyCutAfterNextCreate(t *testing.T) {
	srv := newFakeServer(t)
	p := NewProxy(t, srv.addr())
	p.CutAfterNextCreate("/dir/")
	c := dialFake(t, p.Addr())
	c.roundTrip(1) // not a create
	for xid, f := range map[int32][]byte{
		2: createFrame(2, opCreate, "/dir"),              // the directory itself
		3: createFrame(3, opCreateContainer, "/other/x"), // another path
		4: requestFrame(4, 14),                           // a multi
	} {
		c.send(f)
		c.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
		if body, err := readFrame(c); err != nil || int32(binary.BigEndian.Uint32(body)) != xid {
			t.Fatalf("reply to %d: %v", xid, err)
		}
	}
	c.send(createFrame(5, opCreate2, "/dir/node"))
	srv.waitFor(t, 5) // applied...
	c.expectClosed()  // ...but the reply is lost
	c2 := dialFake(t, p.Addr())
	c2.send(createFrame(6, opCreate, "/dir/again")) // one-shot
	c2.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
	if _, err := readFrame(c2); err != nil {
		t.Fatalf("the cut is not one-shot: %v", err)
	}
}

// multiFrame is a multi request whose first op is op on path, the rest
// left out: the proxy reads no further than the first op's path.
func multiFrame(xid, op int32, path string) []byte {
	p := requestFrame(xid, opMulti)
	p = binary.BigEndian.AppendUint32(p, uint32(op))
	p = append(p, 0)                                 // done
	p = binary.BigEndian.AppendUint32(p, 0xffffffff) // err
	p = binary.BigEndian.AppendUint32(p, uint32(len(path)))
	p = append(p, path...)
	binary.BigEndian.PutUint32(p, uint32(len(p)-4))
	return p
}

func TestProxyCutAfterNextMultiCreate(t *testing.T) {
	srv := newFakeServer(t)
	p := NewProxy(t, srv.addr())
	p.CutAfterNextMultiCreate("/dir/")
	c := dialFake(t, p.Addr())
	for xid, f := range map[int32][]byte{
		1: createFrame(1, opCreate, "/dir/plain"), // a create outside a multi
		2: multiFrame(2, 5, "/dir/x"),             // a multi beginning with a setData
		3: multiFrame(3, opCreate, "/other/x"),    // a multi creating elsewhere
		4: requestFrame(4, opMulti),               // an empty multi
	} {
		c.send(f)
		c.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
		if body, err := readFrame(c); err != nil || int32(binary.BigEndian.Uint32(body)) != xid {
			t.Fatalf("reply to %d: %v", xid, err)
		}
	}
	c.send(multiFrame(5, opCreate, "/dir/node-"))
	srv.waitFor(t, 5) // applied...
	c.expectClosed()  // ...but the reply is lost
}

func TestProxyBlackholeHeal(t *testing.T) {
	srv := newFakeServer(t)
	p := NewProxy(t, srv.addr())
	pinger := dialFake(t, p.Addr())
	worker := dialFake(t, p.Addr())

	p.Blackhole()
	pinger.send(requestFrame(xidPing, 11))
	worker.send(requestFrame(20, 1))
	fresh := dialFakeNoHandshake(t, p.Addr()) // accepted while blackholed
	fresh.send(connectRequest(0, nil, 4*time.Second))
	pinger.expectSilence(Scale(300 * time.Millisecond))
	worker.expectSilence(Scale(10 * time.Millisecond))
	fresh.expectSilence(Scale(10 * time.Millisecond))

	p.Heal()
	// The connections that lost a request (or their handshake) are closed at
	// once; the one that lost only a ping goes on.
	worker.expectClosed()
	fresh.expectClosed()
	pinger.roundTrip(21)
	if srv.saw(20) {
		t.Fatal("a request sent while blackholed reached the server")
	}
	dialFake(t, p.Addr()).roundTrip(22)
}

func TestProxyResetAll(t *testing.T) {
	srv := newFakeServer(t)
	p := NewProxy(t, srv.addr())
	a, b := dialFake(t, p.Addr()), dialFake(t, p.Addr())
	a.roundTrip(1)
	p.ResetAll()
	for _, c := range []*fakeClient{a, b} {
		c.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		if err == nil || errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("read after ResetAll: %v; want the connection gone", err)
		}
	}
	dialFake(t, p.Addr()).roundTrip(2)
}

func TestProxyLatency(t *testing.T) {
	srv := newFakeServer(t)
	p := NewProxy(t, srv.addr())
	c := dialFake(t, p.Addr())
	const d = 100 * time.Millisecond
	p.SetLatency(d)
	start := time.Now()
	c.roundTrip(1)
	if rtt := time.Since(start); rtt < 2*d {
		t.Fatalf("round trip %v with latency %v each way; want at least %v", rtt, d, 2*d)
	}
	p.SetLatency(0)
	c.roundTrip(2)
}

func TestProxyRawStream(t *testing.T) {
	// Not ZooKeeper framing (a four-letter word): forwarded as bytes.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var cmd [4]byte
		io.ReadFull(c, cmd[:])
		io.WriteString(c, "got "+string(cmd[:]))
	}()
	p := NewProxy(t, ln.Addr().String())
	c := dialFakeNoHandshake(t, p.Addr())
	c.send([]byte("ruok"))
	c.SetReadDeadline(time.Now().Add(Scale(5 * time.Second)))
	out, err := io.ReadAll(c)
	if string(out) != "got ruok" {
		t.Fatalf("read %q, %v", out, err)
	}
}

func TestProxyDeadTarget(t *testing.T) {
	p := NewProxy(t, deadAddr(t))
	c := dialFakeNoHandshake(t, p.Addr())
	c.expectClosed()
}

// A client that reconnects during a Blackhole finds a silent network even
// when the server is down meanwhile: the proxy must not give the partition
// away by closing the connection at once. Heal then closes it.
func TestProxyBlackholeHidesDeadTarget(t *testing.T) {
	p := NewProxy(t, deadAddr(t))
	p.Blackhole()
	c := dialFakeNoHandshake(t, p.Addr())
	c.send(connectRequest(0, nil, 4*time.Second))
	c.expectSilence(Scale(300 * time.Millisecond))
	p.Heal()
	c.expectClosed()
}

// deadAddr is a loopback address where nothing listens.
func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// proxyGoroutines lists the goroutines running proxy code.
func proxyGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "zktest.(*Proxy)") || strings.Contains(g, "zktest.(*proxyConn)") {
			out = append(out, g)
		}
	}
	return out
}

func TestProxyCloseLeaksNothing(t *testing.T) {
	if n := len(proxyGoroutines()); n != 0 {
		t.Skipf("%d proxy goroutines of other tests still running", n)
	}
	srv := newFakeServer(t)
	p := NewProxy(t, srv.addr())
	idle := dialFake(t, p.Addr())
	slow := dialFake(t, p.Addr())
	held := dialFake(t, p.Addr())
	p.SetLatency(time.Hour) // a goroutine asleep in the latency delay
	slow.send(requestFrame(1, 1))
	p.Blackhole() // and one whose server side is gone while blackholed
	srv.mu.Lock()
	for _, c := range srv.conns {
		c.Close()
	}
	srv.mu.Unlock()
	held.send(requestFrame(2, 1))

	p.Close()
	// Close waited for them; give the last ones a moment to return after
	// their deferred wg.Done.
	deadline := time.Now().Add(Scale(2 * time.Second))
	for g := proxyGoroutines(); len(g) != 0; g = proxyGoroutines() {
		if time.Now().After(deadline) {
			t.Fatalf("%d proxy goroutines left after Close:\n%s", len(g), strings.Join(g, "\n\n"))
		}
		time.Sleep(time.Millisecond)
	}
	for _, c := range []*fakeClient{idle, slow, held} {
		c.expectClosed()
	}
	if n := p.ActiveConns(); n != 0 {
		t.Fatalf("ActiveConns = %d after Close", n)
	}
	if c, err := net.Dial("tcp", p.Addr()); err == nil {
		c.Close()
		t.Fatal("proxy still accepts after Close")
	}
	p.Close() // idempotent
}

// Blackhole forwards nothing in either direction from the moment it
// returns, latency or not: a request or reply that the proxy was still
// holding back for SetLatency is dropped, not delivered into the partition.
func TestProxyBlackholeDropsDelayedFrames(t *testing.T) {
	srv := newFakeServer(t)
	p := NewProxy(t, srv.addr())
	c := dialFake(t, p.Addr())
	const d = 500 * time.Millisecond
	p.SetLatency(d)
	// Two pipelined requests: when the server has the first, the proxy
	// holds the second (and the first's reply) for the latency.
	c.send(append(requestFrame(30, 3), requestFrame(31, 3)...))
	srv.waitFor(t, 30)
	p.Blackhole()
	c.expectSilence(3 * d)
	if srv.saw(31) {
		t.Fatal("a request held back for latency reached the server during the blackhole")
	}
}
