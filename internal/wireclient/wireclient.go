// Package wireclient is a raw, synchronous ZooKeeper client built on
// internal/jute, for tests. It hides nothing: callers see every frame the
// server sends, in order, with its xid, zxid and error code, which makes it
// the probe of zkit's conformance suite (the same script against real
// ZooKeeper and the reference server), of fuzz tests and of benchmarks.
//
// A Client is not safe for concurrent use, and it never pings on its own:
// keep scenarios shorter than the session timeout.
package wireclient

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// DefaultWait bounds every read unless a call says otherwise.
var DefaultWait = 10 * time.Second

// Client is one connection.
type Client struct {
	Conn      net.Conn
	SessionID int64
	Passwd    []byte
	Timeout   int32 // negotiated, in milliseconds
	LastZxid  int64 // highest zxid seen in a reply

	xid int32
}

// Frame is one packet from the server: a reply or a watcher event.
type Frame struct {
	Header jute.ReplyHeader
	Body   []byte
	Event  *jute.WatcherEvent // set for notifications (xid -1)
}

// ErrClosed reports that the server closed the connection.
var ErrClosed = errors.New("wireclient: connection closed by server")

// Dial opens a TCP connection without a session.
func Dial(addr string) (*Client, error) {
	c, err := net.DialTimeout("tcp", addr, DefaultWait)
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	return &Client{Conn: c}, nil
}

// Connect dials and opens a new session asking for timeout.
func Connect(addr string, timeout time.Duration) (*Client, error) {
	c, err := Dial(addr)
	if err != nil {
		return nil, err
	}
	rsp, err := c.Handshake(0, nil, timeout, 0)
	if err != nil {
		c.Close()
		return nil, err
	}
	if rsp.SessionID == 0 {
		c.Close()
		return nil, errors.New("wireclient: server refused the session")
	}
	return c, nil
}

// Close closes the connection (the session lives on until it expires).
func (c *Client) Close() error { return c.Conn.Close() }

// WriteRaw writes bytes as they are.
func (c *Client) WriteRaw(b []byte) error {
	c.Conn.SetWriteDeadline(time.Now().Add(DefaultWait))
	_, err := c.Conn.Write(b)
	return err
}

// ReadFrame reads one length-prefixed frame.
func (c *Client) ReadFrame(wait time.Duration) ([]byte, error) {
	c.Conn.SetReadDeadline(time.Now().Add(wait))
	var l [4]byte
	if _, err := io.ReadFull(c.Conn, l[:]); err != nil {
		return nil, closedErr(err)
	}
	n := int32(binary.BigEndian.Uint32(l[:]))
	if n < 0 || n > 64<<20 {
		return nil, fmt.Errorf("wireclient: bad frame length %d", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.Conn, b); err != nil {
		return nil, closedErr(err)
	}
	return b, nil
}

func closedErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return ErrClosed
	}
	var oe *net.OpError
	if errors.As(err, &oe) && !oe.Timeout() {
		return ErrClosed
	}
	return err
}

// Handshake sends a ConnectRequest (with the readOnly field) and reads the
// response. The client adopts the session it gets.
func (c *Client) Handshake(session int64, passwd []byte, timeout time.Duration, lastZxid int64) (jute.ConnectResponse, error) {
	if passwd == nil {
		passwd = make([]byte, 16)
	}
	req := &jute.ConnectRequest{LastZxidSeen: lastZxid, TimeOut: int32(timeout / time.Millisecond),
		SessionID: session, Passwd: passwd, HasReadOnly: true}
	var rsp jute.ConnectResponse
	if err := c.WriteRaw(jute.Frame(req)); err != nil {
		return rsp, err
	}
	b, err := c.ReadFrame(DefaultWait)
	if err != nil {
		return rsp, err
	}
	if err := jute.Decode(b, &rsp); err != nil {
		return rsp, err
	}
	c.SessionID, c.Passwd, c.Timeout = rsp.SessionID, rsp.Passwd, rsp.TimeOut
	return rsp, nil
}

// Send writes a request with the next xid (or the reserved xid of ping,
// auth and setWatches) and returns the xid.
func (c *Client) Send(op int32, req any) (int32, error) {
	var xid int32
	switch op {
	case jute.OpPing:
		xid = jute.XidPing
	case jute.OpAuth:
		xid = jute.XidAuth
	case jute.OpSetWatches, jute.OpSetWatches2:
		xid = jute.XidSetWatches
	default:
		c.xid++
		xid = c.xid
	}
	return xid, c.SendXid(xid, op, req)
}

// SendXid writes a request with the given xid; req may be nil (no body).
func (c *Client) SendXid(xid, op int32, req any) error {
	recs := []any{&jute.RequestHeader{Xid: xid, Type: op}}
	if req != nil {
		recs = append(recs, req)
	}
	return c.WriteRaw(jute.Frame(recs...))
}

// Next reads the next frame, decoding watcher events.
func (c *Client) Next(wait time.Duration) (Frame, error) {
	b, err := c.ReadFrame(wait)
	if err != nil {
		return Frame{}, err
	}
	var f Frame
	d := jute.NewDecoder(b, 0)
	if err := jute.Unmarshal(d, &f.Header); err != nil {
		return f, err
	}
	f.Body = d.Rest()
	if f.Header.Xid == jute.XidNotification {
		ev := &jute.WatcherEvent{}
		if err := jute.Decode(f.Body, ev); err != nil {
			return f, err
		}
		f.Event = ev
	} else if f.Header.Zxid > c.LastZxid {
		c.LastZxid = f.Header.Zxid
	}
	return f, nil
}

// Call sends a request and reads frames until its reply. It returns the
// watcher events that arrived before the reply (in order) and the reply
// header; resp, if not nil, is decoded from the body of a successful reply.
func (c *Client) Call(op int32, req, resp any) ([]jute.WatcherEvent, jute.ReplyHeader, error) {
	xid, err := c.Send(op, req)
	if err != nil {
		return nil, jute.ReplyHeader{}, err
	}
	return c.Await(xid, resp, DefaultWait)
}

// Await reads frames until the reply to xid.
func (c *Client) Await(xid int32, resp any, wait time.Duration) ([]jute.WatcherEvent, jute.ReplyHeader, error) {
	var events []jute.WatcherEvent
	deadline := time.Now().Add(wait)
	for {
		f, err := c.Next(time.Until(deadline))
		if err != nil {
			return events, f.Header, err
		}
		if f.Event != nil {
			events = append(events, *f.Event)
			continue
		}
		if f.Header.Xid != xid {
			return events, f.Header, fmt.Errorf("wireclient: reply xid %d, want %d", f.Header.Xid, xid)
		}
		if f.Header.Err == 0 && resp != nil {
			if err := jute.Decode(f.Body, resp); err != nil {
				return events, f.Header, err
			}
		}
		return events, f.Header, nil
	}
}

// Events reads frames until n watcher events have arrived or wait passes;
// it fails on a reply (nothing is outstanding).
func (c *Client) Events(n int, wait time.Duration) ([]jute.WatcherEvent, error) {
	var events []jute.WatcherEvent
	deadline := time.Now().Add(wait)
	for len(events) < n {
		left := time.Until(deadline)
		if left <= 0 {
			return events, fmt.Errorf("wireclient: %d of %d events", len(events), n)
		}
		f, err := c.Next(left)
		if err != nil {
			return events, err
		}
		if f.Event == nil {
			return events, fmt.Errorf("wireclient: unexpected reply xid %d", f.Header.Xid)
		}
		events = append(events, *f.Event)
	}
	return events, nil
}

// WaitClosed reads until the server closes the connection and returns the
// frames it sent first; it fails if the connection is still open after wait.
func (c *Client) WaitClosed(wait time.Duration) ([]Frame, error) {
	var frames []Frame
	deadline := time.Now().Add(wait)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return frames, errors.New("wireclient: connection still open")
		}
		f, err := c.Next(left)
		if errors.Is(err, ErrClosed) {
			return frames, nil
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return frames, errors.New("wireclient: connection still open")
			}
			return frames, nil
		}
		frames = append(frames, f)
	}
}

// CloseSession ends the session and waits for the server to close the
// connection.
func (c *Client) CloseSession() error {
	_, h, err := c.Call(jute.OpCloseSession, nil, nil)
	if err != nil {
		return err
	}
	if h.Err != 0 {
		return jute.Error(h.Err)
	}
	_, err = c.WaitClosed(DefaultWait)
	c.Close()
	return err
}
