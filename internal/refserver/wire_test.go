package refserver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// wireClient is a raw, synchronous ZooKeeper client built on internal/jute.
// It sees exactly what the server sends (xids, zxids, error codes, event
// order), which makes it the probe of the conformance suite.
type wireClient struct {
	t       testing.TB
	conn    net.Conn
	xid     int32
	session int64
	passwd  []byte
	timeout int32
	lastZx  int64
	// log records every frame received, in order, as text.
	log    []string
	events []jute.WatcherEvent
}

// frame is one received packet, split into its header and body.
type frame struct {
	hdr  jute.ReplyHeader
	body []byte
}

func dialWire(t testing.TB, addr string) *wireClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	wc := &wireClient{t: t, conn: c}
	t.Cleanup(func() { c.Close() })
	return wc
}

// connectWire dials and opens a new session with the given timeout.
func connectWire(t testing.TB, addr string, timeout time.Duration) *wireClient {
	t.Helper()
	c := dialWire(t, addr)
	rsp, err := c.handshake(0, nil, int32(timeout/time.Millisecond), 0)
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	if rsp.SessionID == 0 {
		t.Fatalf("connect %s: server refused the session", addr)
	}
	return c
}

func (c *wireClient) writeRaw(b []byte) error {
	c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err := c.conn.Write(b)
	return err
}

// readFrame reads one length-prefixed frame.
func (c *wireClient) readFrame(d time.Duration) ([]byte, error) {
	c.conn.SetReadDeadline(time.Now().Add(d))
	var l [4]byte
	if _, err := io.ReadFull(c.conn, l[:]); err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(l[:]))
	if n < 0 || n > 16<<20 {
		return nil, fmt.Errorf("bad frame length %d", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c.conn, b); err != nil {
		return nil, err
	}
	return b, nil
}

// handshake sends a ConnectRequest and reads the response.
func (c *wireClient) handshake(session int64, passwd []byte, timeoutMs int32, lastZxid int64) (jute.ConnectResponse, error) {
	if passwd == nil {
		passwd = make([]byte, 16)
	}
	req := &jute.ConnectRequest{LastZxidSeen: lastZxid, TimeOut: timeoutMs, SessionID: session, Passwd: passwd, HasReadOnly: true}
	var rsp jute.ConnectResponse
	if err := c.writeRaw(jute.Frame(req)); err != nil {
		return rsp, err
	}
	b, err := c.readFrame(10 * time.Second)
	if err != nil {
		return rsp, err
	}
	if err := jute.Decode(b, &rsp); err != nil {
		return rsp, err
	}
	c.session, c.passwd, c.timeout = rsp.SessionID, rsp.Passwd, rsp.TimeOut
	return rsp, nil
}

// send writes one request and returns its xid.
func (c *wireClient) send(op int32, req any) int32 {
	c.xid++
	xid := c.xid
	switch op {
	case jute.OpPing:
		xid = jute.XidPing
	case jute.OpAuth:
		xid = jute.XidAuth
	case jute.OpSetWatches, jute.OpSetWatches2:
		xid = jute.XidSetWatches
	}
	c.sendXid(xid, op, req)
	return xid
}

func (c *wireClient) sendXid(xid, op int32, req any) {
	recs := []any{&jute.RequestHeader{Xid: xid, Type: op}}
	if req != nil {
		recs = append(recs, req)
	}
	if err := c.writeRaw(jute.Frame(recs...)); err != nil {
		c.t.Fatalf("send %s: %v", jute.OpName(op), err)
	}
}

// next reads the next frame and records it in the log.
func (c *wireClient) next(d time.Duration) (frame, error) {
	b, err := c.readFrame(d)
	if err != nil {
		return frame{}, err
	}
	var f frame
	dec := jute.NewDecoder(b, 0)
	if err := jute.Unmarshal(dec, &f.hdr); err != nil {
		return f, err
	}
	f.body = dec.Rest()
	if f.hdr.Xid == jute.XidNotification {
		var ev jute.WatcherEvent
		if err := jute.Decode(f.body, &ev); err != nil {
			return f, err
		}
		c.events = append(c.events, ev)
		c.log = append(c.log, fmt.Sprintf("event %s %s", eventName(ev.Type), ev.Path))
	} else {
		if f.hdr.Zxid > c.lastZx {
			c.lastZx = f.hdr.Zxid
		}
		c.log = append(c.log, fmt.Sprintf("reply xid=%d err=%s", f.hdr.Xid, jute.Error(f.hdr.Err).Name()))
	}
	return f, nil
}

// call sends a request and reads frames until its reply; watcher events
// that arrive first are recorded. resp, if not nil, is decoded from the
// reply body when the reply carries no error.
func (c *wireClient) call(op int32, req, resp any) (jute.ReplyHeader, error) {
	c.t.Helper()
	xid := c.send(op, req)
	return c.await(xid, resp)
}

func (c *wireClient) await(xid int32, resp any) (jute.ReplyHeader, error) {
	for {
		f, err := c.next(10 * time.Second)
		if err != nil {
			return f.hdr, err
		}
		if f.hdr.Xid == jute.XidNotification {
			continue
		}
		if f.hdr.Xid != xid {
			return f.hdr, fmt.Errorf("reply xid %d, want %d", f.hdr.Xid, xid)
		}
		if f.hdr.Err == 0 && resp != nil {
			if err := jute.Decode(f.body, resp); err != nil {
				return f.hdr, err
			}
		}
		return f.hdr, nil
	}
}

// mustCall is call that fails the test on a transport error and returns the
// ZooKeeper error code.
func (c *wireClient) mustCall(op int32, req, resp any) jute.Error {
	c.t.Helper()
	h, err := c.call(op, req, resp)
	if err != nil {
		c.t.Fatalf("%s: %v", jute.OpName(op), err)
	}
	return jute.Error(h.Err)
}

// waitEvents reads frames until n watcher events have been seen in total.
func (c *wireClient) waitEvents(n int, d time.Duration) error {
	deadline := time.Now().Add(d)
	for len(c.events) < n {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("have %d events, want %d", len(c.events), n)
		}
		if _, err := c.next(left); err != nil {
			return fmt.Errorf("have %d events, want %d: %w", len(c.events), n, err)
		}
	}
	return nil
}

// expectClosed reads until the server closes the connection; it fails if a
// frame other than those allowed arrives or the deadline passes.
func (c *wireClient) expectClosed(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return errors.New("connection still open")
		}
		_, err := c.next(left)
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return errors.New("connection still open")
		}
		return nil
	}
}

func eventName(t int32) string {
	switch t {
	case jute.EventNodeCreated:
		return "NodeCreated"
	case jute.EventNodeDeleted:
		return "NodeDeleted"
	case jute.EventNodeDataChanged:
		return "NodeDataChanged"
	case jute.EventNodeChildrenChanged:
		return "NodeChildrenChanged"
	}
	return fmt.Sprintf("event%d", t)
}
