package client

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// wireSlack is what a frame may add to the server's request limit.
const wireSlack = 64 * 1024

// handshake is what the server said in its connect response: the session
// the connection belongs to.
type handshake struct {
	sessionID int64
	passwd    []byte
	timeout   time.Duration
}

// errExpired is a connect response that resumes no session: the server
// has expired the session the client asked to resume.
var errExpired = errors.New("the server has expired the session")

// handshakeWait bounds the wait for a server's connect response (the TLS
// handshake included): a third of the session timeout, and at least a
// second. A ZooKeeper server that is starting accepts connections before it
// answers them, and a prompt reconnect (reconnect.go) dials it in that
// moment: an unbounded wait would sit on a silent connection while the
// server was long up, and the session would be lost. Bounded, the attempt
// is abandoned and the next one finds the server serving.
func handshakeWait(sessionTimeout time.Duration) time.Duration {
	return max(time.Second, sessionTimeout/3)
}

// open opens a connection to addr: it dials through the client's dialer,
// runs the TLS handshake under WithTLS, and sends the connect request that
// resumes the session of resume with its negotiated timeout (nil: asks for
// a new session with the timeout of WithSessionTimeout), carrying the last
// zxid the client saw, so that no server behind it takes the session. It returns the connection and the server's connect response,
// or errExpired (with the connection closed) when the server has expired
// resume's session. Closing the client abandons the attempt.
func (c *Client) open(addr string, resume *handshake) (net.Conn, *bufio.Reader, *handshake, error) {
	nc, err := c.dial(addr)
	if err != nil {
		return nil, nil, nil, err
	}
	stop := context.AfterFunc(c.life, func() { nc.Close() })
	defer stop()
	if err := nc.SetDeadline(time.Now().Add(handshakeWait(c.cfg.sessionTimeout))); err != nil {
		nc.Close()
		return nil, nil, nil, err
	}
	req := &jute.ConnectRequest{
		LastZxidSeen: c.lastZxid.Load(),
		TimeOut:      int32(c.cfg.sessionTimeout / time.Millisecond),
		Passwd:       make([]byte, 16),
		HasReadOnly:  true, // ReadOnly false: a read-only server refuses the client
	}
	if resume != nil {
		// The session's own timeout, as the server negotiated it.
		req.SessionID, req.Passwd = resume.sessionID, resume.passwd
		req.TimeOut = int32(resume.timeout / time.Millisecond)
	}
	in := bufio.NewReaderSize(nc, 16<<10)
	h, err := connectResponse(nc, in, req)
	if err != nil {
		nc.Close()
		if c.life.Err() != nil {
			return nil, nil, nil, ErrClosed
		}
		if refusedByPeer(err) {
			// With TLS 1.3 a server checks the client's certificate after
			// the client has finished its handshake: its refusal comes here.
			err = explainTLS(addr, err)
		}
		return nil, nil, nil, err
	}
	if err := nc.SetDeadline(time.Time{}); err != nil {
		nc.Close()
		return nil, nil, nil, err
	}
	return nc, in, h, nil
}

// connectResponse sends req on nc and reads the server's connect response.
func connectResponse(nc net.Conn, in *bufio.Reader, req *jute.ConnectRequest) (*handshake, error) {
	if _, err := nc.Write(jute.Frame(req)); err != nil {
		return nil, err
	}
	var length [4]byte
	if _, err := io.ReadFull(in, length[:]); err != nil {
		return nil, err
	}
	size := int32(binary.BigEndian.Uint32(length[:]))
	if size < 20 || size > 1024 {
		return nil, fmt.Errorf("zk: a connect response of %d bytes", size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(in, b); err != nil {
		return nil, err
	}
	var resp jute.ConnectResponse
	if err := jute.Decode(b, &resp); err != nil {
		return nil, err
	}
	if resp.SessionID == 0 || resp.TimeOut <= 0 {
		return nil, errExpired
	}
	return &handshake{sessionID: resp.SessionID, passwd: resp.Passwd, timeout: time.Duration(resp.TimeOut) * time.Millisecond}, nil
}

// dialTimeout bounds the opening of a TCP connection (go-zookeeper's
// bound): a server that drops the client's packets costs an attempt that
// long before the next server is tried.
const dialTimeout = time.Second

// dial opens a connection to addr through the client's dialer within
// dialTimeout, then TLS under WithTLS. The dialer knows no context:
// closing the client abandons the dial, and the connection is closed when
// it comes.
func (c *Client) dial(addr string) (net.Conn, error) {
	type dialed struct {
		nc  net.Conn
		err error
	}
	ch := make(chan dialed)
	go func() {
		nc, err := c.cfg.dialer("tcp", addr, dialTimeout)
		select {
		case ch <- dialed{nc, err}:
		case <-c.life.Done():
			if nc != nil {
				nc.Close()
			}
		}
	}()
	var d dialed
	select {
	case d = <-ch:
	case <-c.life.Done():
		return nil, ErrClosed
	}
	if d.err == nil && c.cfg.tls != nil {
		d.nc, d.err = c.handshakeTLS(d.nc, addr)
	}
	return d.nc, d.err
}
