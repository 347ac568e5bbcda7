package refserver_test

import (
	"net"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/internal/refserver/wireclient"
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
