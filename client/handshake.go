package client

import (
	"encoding/binary"
	"net"
	"time"
)

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
	return &sniffConn{Conn: conn, c: c, addr: address}, nil
}

// sniffConn passes everything through, parses the first frame the server
// sends (the connect response), and may rewrite the first frame the client
// sends (the connect request; see Write).
type sniffConn struct {
	net.Conn
	c     *Client
	addr  string
	done  bool
	buf   []byte
	wrote bool
}

// Write passes p through, except that a connect request that would resume a
// session the client has declared lost asks for a new session instead.
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
		const idAt = 4 + 4 + 8 + 4
		if gone := s.c.abandoned.Load(); gone != 0 && len(p) >= idAt+8 &&
			int64(binary.BigEndian.Uint64(p[idAt:])) == gone {
			q := append([]byte(nil), p...)
			binary.BigEndian.PutUint64(q[idAt:], 0)
			if _, err := s.Conn.Write(q); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	n, err := s.Conn.Write(p)
	if err == nil {
		s.c.sentFrame(p)
	}
	return n, err
}

func (s *sniffConn) Read(p []byte) (int, error) {
	n, err := s.Conn.Read(p)
	if !s.done && n > 0 {
		s.buf = append(s.buf, p[:n]...)
		s.parse()
	}
	if err != nil && !s.done && refusedByPeer(err) {
		// With TLS 1.3 a server checks the client's certificate after
		// the client has finished its handshake: its refusal comes here.
		s.c.attemptFailed(explainTLS(s.addr, err))
	}
	return n, err
}

func (s *sniffConn) parse() {
	if len(s.buf) < 4 {
		return
	}
	size := int(binary.BigEndian.Uint32(s.buf))
	if size > 1024 || size < 20 {
		s.done, s.buf = true, nil // not a connect response we understand
		return
	}
	if len(s.buf) < 4+size {
		return
	}
	b := s.buf[4 : 4+size]
	s.done, s.buf = true, nil
	timeoutMs := int32(binary.BigEndian.Uint32(b[4:8]))
	id := int64(binary.BigEndian.Uint64(b[8:16]))
	plen := int(int32(binary.BigEndian.Uint32(b[16:20])))
	if id == 0 || plen < 0 || 20+plen > len(b) {
		return
	}
	s.c.handshake.Store(&handshake{
		sessionID: id,
		passwd:    append([]byte(nil), b[20:20+plen]...),
		timeout:   time.Duration(timeoutMs) * time.Millisecond,
	})
}
