package client_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// A server that accepts a connection and never answers it (a ZooKeeper
// that is still starting) costs one bounded attempt, not a wait of over six
// session timeouts (go-zookeeper's).
func TestSilentServerAbandoned(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	silent := silentServer(t)
	// The first dial reaches the silent server, the others the real one.
	var dials atomic.Int32
	dialer := func(network, _ string, timeout time.Duration) (net.Conn, error) {
		addr := srv.Addr()
		if dials.Add(1) == 1 {
			addr = silent.Addr().String()
		}
		return net.DialTimeout(network, addr, timeout)
	}
	const timeout = 6 * time.Second // unbounded, the silent attempt would last 40 s
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(10*time.Second))
	defer cancel()
	c, err := client.Connect(ctx, srv.Servers(), client.WithDialer(dialer), client.WithSessionTimeout(timeout))
	if err != nil {
		t.Fatalf("connect after a silent server: %v (%d dials)", err, dials.Load())
	}
	c.Close()
	if dials.Load() < 2 {
		t.Fatalf("connected in %d dials: the silent server was never tried", dials.Load())
	}
}

// Connect against a server that accepts and never answers returns when
// its context ends, not a second later: it does not wait for the close of
// a client that has no session.
func TestConnectToSilentServerEndsWithContext(t *testing.T) {
	t.Parallel()
	silent := silentServer(t)
	const wait = 1500 * time.Millisecond // shorter than the handshake's own bound (3.3 s)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	began := time.Now()
	_, err := client.Connect(ctx, []string{silent.Addr().String()}, client.WithSessionTimeout(10*time.Second))
	elapsed := time.Since(began)
	if err == nil {
		t.Fatal("connected to a silent server")
	}
	if elapsed > wait+zktest.Scale(400*time.Millisecond) {
		t.Fatalf("Connect returned %v after its context's %v deadline", elapsed-wait, wait)
	}
}

// silentServer listens on a port that accepts connections and never
// answers them (a ZooKeeper that is still starting).
func silentServer(t *testing.T) net.Listener {
	t.Helper()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() {
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(io.Discard, conn); conn.Close() }()
		}
	}()
	return silent
}

// firstFrames records the first frame the client writes on each
// connection it opens (the connect request), and lets a test break the
// latest connection.
type firstFrames struct {
	mu     sync.Mutex
	frames [][]byte
	conns  []net.Conn
}

func (f *firstFrames) dial(network, address string, timeout time.Duration) (net.Conn, error) {
	conn, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	rc := &recordedConn{Conn: conn, f: f, i: len(f.frames)}
	f.frames = append(f.frames, nil)
	f.conns = append(f.conns, conn)
	return rc, nil
}

func (f *firstFrames) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.frames)
}

// frame returns the first frame written on connection i, once written.
func (f *firstFrames) frame(i int) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.frames[i]
}

func (f *firstFrames) breakLatest() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conns[len(f.conns)-1].Close()
}

type recordedConn struct {
	net.Conn
	f *firstFrames
	i int
}

func (c *recordedConn) Write(p []byte) (int, error) {
	c.f.mu.Lock()
	if c.f.frames[c.i] == nil {
		c.f.frames[c.i] = append([]byte{}, p...)
	}
	c.f.mu.Unlock()
	return c.Conn.Write(p)
}

// The connect request of a new connection carries the last zxid the client
// saw, so that no server behind it takes the session: here the zxid of
// the client's own last write.
func TestConnectRequestCarriesLastZxid(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		var rec firstFrames
		c := connect(t, b.Servers, client.WithDialer(rec.dial))
		ctx := testCtx(t)
		sub := c.Subscribe()
		t.Cleanup(sub.Close)
		base := zktest.UniquePath(t)
		require.NoError(t, c.EnsurePath(ctx, base))
		st, err := c.Set(ctx, base, []byte("x"), -1)
		require.NoError(t, err)

		before := rec.count()
		rec.breakLatest()
		require.Equal(t, client.StateSuspended, nextState(t, sub, 10*time.Second).State)
		require.Equal(t, client.StateReconnected, nextState(t, sub, 10*time.Second).State)
		require.Greater(t, rec.count(), before)
		// The frame: length, protocolVersion, lastZxidSeen, ...
		frame := rec.frame(rec.count() - 1)
		require.GreaterOrEqual(t, len(frame), 16)
		seen := int64(binary.BigEndian.Uint64(frame[8:16]))
		require.GreaterOrEqual(t, seen, st.Mzxid, "the connect request's last zxid")
	})
}

// A connect request that resumes a session asks for the timeout the
// server negotiated for it, not the one the client asked for at first
// (more than the server allows, here).
func TestReconnectAsksForTheNegotiatedTimeout(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		var rec firstFrames
		c := connect(t, b.Servers, client.WithDialer(rec.dial), client.WithSessionTimeout(time.Hour))
		negotiated := c.Session().Timeout()
		require.Less(t, negotiated, time.Hour, "the server clamps the timeout")
		sub := c.Subscribe()
		t.Cleanup(sub.Close)
		timeout := func(i int) time.Duration { // the frame: length, protocolVersion, lastZxidSeen, timeOut, ...
			frame := rec.frame(i)
			require.GreaterOrEqual(t, len(frame), 20)
			return time.Duration(binary.BigEndian.Uint32(frame[16:20])) * time.Millisecond
		}
		assert.Equal(t, time.Hour, timeout(0), "a new session asks for the timeout given")

		rec.breakLatest()
		require.Equal(t, client.StateSuspended, nextState(t, sub, 10*time.Second).State)
		require.Equal(t, client.StateReconnected, nextState(t, sub, 10*time.Second).State)
		assert.Equal(t, negotiated, timeout(rec.count()-1), "a resumed session asks for its own timeout")
	})
}

// A server that cannot be reached (its packets dropped: a dial that only
// ends with its timeout) costs an attempt of a second, whatever the session
// timeout, before the next server is tried.
func TestUnreachableServerCostsASecond(t *testing.T) {
	t.Parallel()
	srv := zktest.NewServer(t)
	var unreachable atomic.Int32
	dialer := func(network, address string, timeout time.Duration) (net.Conn, error) {
		if address == "unreachable:2181" {
			unreachable.Add(1)
			time.Sleep(timeout)
			return nil, errors.New("i/o timeout")
		}
		return net.DialTimeout(network, address, timeout)
	}
	for i := 0; unreachable.Load() == 0; i++ { // the servers are tried in a random order
		require.Less(t, i, 20, "the unreachable server was never tried")
		began := time.Now()
		c := connect(t, []string{"unreachable:2181", srv.Addr()}, client.WithDialer(dialer),
			client.WithSessionTimeout(30*time.Second))
		took := time.Since(began)
		c.Close()
		assert.Less(t, took, zktest.Scale(2500*time.Millisecond), "Connect took %v", took)
	}
}
