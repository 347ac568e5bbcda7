package client_test

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// A server that accepts a connection and never answers it (a ZooKeeper
// that is still starting) costs one bounded attempt, not the wire client's
// wait of over six session timeouts.
func TestSilentServerAbandoned(t *testing.T) {
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
// its context ends, not a second later: it does not wait for the wire
// client's close of a client that has no session.
func TestConnectToSilentServerEndsWithContext(t *testing.T) {
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
