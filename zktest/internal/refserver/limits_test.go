package refserver_test

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
	"github.com/zkit-dev/zkit/internal/wireclient"
	"github.com/zkit-dev/zkit/zktest"
)

// dialFrom opens a session from the local address ip (any 127.x address
// reaches a server on 127.0.0.1), or returns the error.
func dialFrom(addr string, ip net.IP) (*wireclient.Client, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 5 * time.Second}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &wireclient.Client{Conn: nc}
	if _, err := c.Handshake(0, nil, 30*time.Second, 0); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// One address may hold maxClientCnxns connections; the next one is closed
// unanswered, another address is not affected, and a slot frees when a
// connection closes.
func TestMaxClientCnxns(t *testing.T) {
	local, other := net.IPv4(127, 0, 0, 1), net.IPv4(127, 0, 0, 2)
	zktest.EachBackendWith(t, []zktest.Option{zktest.WithConfig("maxClientCnxns", "3")},
		[]zktest.ServerOption{zktest.ServerMaxClientCnxns(3)}, func(t *testing.T, b zktest.Backend) {
			var open []*wireclient.Client
			t.Cleanup(func() {
				for _, c := range open {
					c.CloseSession()
					c.Close()
				}
			})
			for i := range 3 {
				c, err := dialFrom(b.Addr(), local)
				if err != nil {
					t.Fatalf("connection %d of 3: %v", i+1, err)
				}
				open = append(open, c)
			}
			if c, err := dialFrom(b.Addr(), local); err == nil {
				c.Close()
				t.Fatal("a fourth connection from one address got a session")
			}
			c, err := dialFrom(b.Addr(), other)
			if err != nil {
				t.Fatalf("a connection from another address: %v", err)
			}
			open = append(open, c)
			open[0].CloseSession()
			open[0].Close()
			deadline := time.Now().Add(zktest.Scale(10 * time.Second))
			for {
				c, err := dialFrom(b.Addr(), local)
				if err == nil {
					open[0] = c
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("no slot after a connection closed: %v", err)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
}

// A connection may add thousands of identities, each in about the time
// ZooKeeper takes (8,000 in about a second), without holding up other
// sessions.
func TestManyIdentities(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		t.Parallel()
		const n = 8000
		ctl, err := wireclient.Connect(b.Addr(), 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer ctl.Close()
		c, err := wireclient.Connect(b.Addr(), 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		start := time.Now()
		go func() {
			var reqs []byte
			for i := range n {
				reqs = append(reqs, jute.Frame(&jute.RequestHeader{Xid: jute.XidAuth, Type: jute.OpAuth},
					&jute.AuthPacket{Scheme: "digest", Auth: fmt.Appendf(nil, "user%d:password", i)})...)
			}
			c.WriteRaw(reqs)
		}()
		replies := make(chan error, 1)
		go func() {
			for i := range n {
				f, err := c.Next(zktest.Scale(30 * time.Second))
				if err == nil && (f.Header.Xid != jute.XidAuth || f.Header.Err != 0) {
					err = fmt.Errorf("reply %+v", f.Header)
				}
				if err != nil {
					replies <- fmt.Errorf("auth %d of %d: %w", i+1, n, err)
					return
				}
			}
			replies <- nil
		}()
		var slowest time.Duration
	wait:
		for {
			select {
			case err := <-replies:
				if err != nil {
					t.Fatal(err)
				}
				break wait
			case <-time.After(10 * time.Millisecond):
			}
			if time.Since(start) > zktest.Scale(20*time.Second) {
				t.Fatalf("%d identities not added in %v", n, time.Since(start).Round(time.Second))
			}
			ping := time.Now()
			if _, h, err := ctl.Call(jute.OpPing, nil, nil); err != nil || h.Err != 0 {
				t.Fatalf("another session's ping: %v %v", h, err)
			}
			slowest = max(slowest, time.Since(ping))
		}
		took := time.Since(start)
		var who jute.WhoAmIResponse
		if _, _, err := c.Call(jute.OpWhoAmI, nil, &who); err != nil || len(who.ClientInfo) != n+1 {
			t.Fatalf("whoAmI lists %d identities (%v), want %d", len(who.ClientInfo), err, n+1)
		}
		t.Logf("%s: %d identities in %v; another session's slowest ping meanwhile %v", b.Name, n, took.Round(time.Millisecond), slowest.Round(time.Millisecond))
	})
}
