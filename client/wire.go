package client

import (
	"context"
	"net"
	"slices"
	"time"
)

// Wire is how a client reaches its ensemble, for a zkit package that speaks
// ZooKeeper's protocol on connections of its own beside the client's (package
// cache sends requests go-zookeeper cannot: addWatch). Such a connection
// opens a session of its own, with the client's credentials, namespace and
// session timeout.
type Wire struct {
	Servers        []string      // as given to Connect
	SessionTimeout time.Duration // asked for by the client
	Namespace      string        // "" for none; paths on the wire are the server's
	Auth           []Credential  // sent after each connect, in order
	MaxBuffer      int           // the server's jute.maxbuffer, as WithMaxBuffer says
}

// Credential is one WithAuth (or WithDigestAuth) of the client's.
type Credential struct {
	Scheme string
	Auth   []byte
}

// Wire returns how c reaches its ensemble.
func (c *Client) Wire() Wire {
	w := Wire{Servers: slices.Clone(c.servers), SessionTimeout: c.cfg.sessionTimeout,
		Namespace: c.cfg.namespace, MaxBuffer: c.cfg.maxBuffer}
	for _, a := range c.cfg.auth {
		w.Auth = append(w.Auth, Credential{a.scheme, slices.Clone(a.auth)})
	}
	return w
}

// DialWire opens a connection to address (one of Wire().Servers) as the
// client opens its own: through WithDialer's dialer, then TLS under
// WithTLS. It ends with ctx or when the client is closed.
func (c *Client) DialWire(ctx context.Context, address string) (net.Conn, error) {
	timeout := handshakeWait(c.cfg.sessionTimeout)
	if d, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(d))
	}
	conn, err := c.cfg.dialer("tcp", address, timeout)
	if err == nil && c.cfg.tls != nil {
		conn, err = c.handshakeTLS(conn, address)
	}
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		conn.Close()
		return nil, ctx.Err()
	}
	return conn, nil
}
