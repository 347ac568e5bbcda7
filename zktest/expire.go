package zktest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// ErrSessionNotFound is wrapped by ExpireSession's error when the server does
// not know the session: it has already expired or been closed, or the
// password is wrong (ZooKeeper does not tell these apart).
var ErrSessionNotFound = errors.New("zktest: session not found (already expired or closed, or wrong password)")

// The few pieces of the ZooKeeper wire protocol that zktest needs, written
// out by hand so that zktest depends on no client library. Every packet is a
// 4-byte big-endian length and a jute-encoded body.
const (
	opCloseSession = -11
	// The create requests' opcodes (CutAfterNextCreate).
	opCreate          = 1
	opCreate2         = 15
	opCreateContainer = 19
	opCreateTTL       = 21
	opMulti           = 14 // CutAfterNextMultiCreate
	xidPing           = -2
	xidAuth           = -4 // credentials (Proxy.Requests counts them)
	closeXid          = 1
	maxFrame          = 64 << 20 // anything larger is not a ZooKeeper frame
)

// connectRequest encodes a ConnectRequest packet, length prefix included:
// protocolVersion int32, lastZxidSeen int64, timeOut int32, sessionId int64,
// passwd buffer (int32 length + bytes), readOnly bool.
func connectRequest(sessionID int64, passwd []byte, timeout time.Duration) []byte {
	if passwd == nil {
		passwd = make([]byte, 16)
	}
	var b bytes.Buffer
	body := make([]byte, 0, 45)
	body = binary.BigEndian.AppendUint32(body, 0) // protocolVersion
	body = binary.BigEndian.AppendUint64(body, 0) // lastZxidSeen
	body = binary.BigEndian.AppendUint32(body, uint32(int32(timeout/time.Millisecond)))
	body = binary.BigEndian.AppendUint64(body, uint64(sessionID))
	body = binary.BigEndian.AppendUint32(body, uint32(len(passwd)))
	body = append(body, passwd...)
	body = append(body, 0) // readOnly = false
	binary.Write(&b, binary.BigEndian, int32(len(body)))
	b.Write(body)
	return b.Bytes()
}

// closeSessionRequest encodes a RequestHeader-only closeSession packet.
func closeSessionRequest(xid int32) []byte {
	p := make([]byte, 12)
	binary.BigEndian.PutUint32(p[0:], 8)
	binary.BigEndian.PutUint32(p[4:], uint32(xid))
	op := int32(opCloseSession)
	binary.BigEndian.PutUint32(p[8:], uint32(op))
	return p
}

type connectResponse struct {
	protocolVersion int32
	timeout         int32 // milliseconds; <= 0 means the session is gone
	sessionID       int64
	passwd          []byte
}

func readFrame(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	l := int32(binary.BigEndian.Uint32(n[:]))
	if l < 0 || l > maxFrame {
		return nil, fmt.Errorf("zktest: bad frame length %d", l)
	}
	body := make([]byte, l)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return body, nil
}

func parseConnectResponse(body []byte) (connectResponse, error) {
	var r connectResponse
	if len(body) < 20 {
		return r, fmt.Errorf("zktest: short connect response (%d bytes)", len(body))
	}
	r.protocolVersion = int32(binary.BigEndian.Uint32(body[0:]))
	r.timeout = int32(binary.BigEndian.Uint32(body[4:]))
	r.sessionID = int64(binary.BigEndian.Uint64(body[8:]))
	if pl := int32(binary.BigEndian.Uint32(body[16:])); pl > 0 && int(pl) <= len(body)-20 {
		r.passwd = body[20 : 20+pl]
	}
	return r, nil
}

// rawSession is one hand-rolled client connection.
type rawSession struct {
	conn net.Conn
	stop func() bool
}

// dialRaw connects to addr with the deadline of ctx applied to all I/O and
// the connection closed early if ctx is cancelled.
func dialRaw(ctx context.Context, addr string) (*rawSession, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	return &rawSession{conn: conn, stop: stop}, nil
}

func (s *rawSession) close() {
	s.stop()
	s.conn.Close()
}

// connectAndClose sends a ConnectRequest for sessionID (0: a new session)
// pipelined with a closeSession, and waits for both replies. It returns the
// connect response even when the close fails, and whether the close may
// have been applied: the whole request went out and no reply refused it
// (a connect response without the session, or a closeSession reply with an
// error code). A close whose replies were lost may have been applied.
func connectAndClose(ctx context.Context, addr string, sessionID int64, passwd []byte) (resp connectResponse, mayHaveClosed bool, err error) {
	s, err := dialRaw(ctx, addr)
	if err != nil {
		return connectResponse{}, false, err
	}
	defer s.close()
	// Pipelining the close behind the connect leaves no gap in which a
	// client that owns the session could win it back: the server reads the
	// close as soon as it has (re)attached the session to this connection.
	req := append(connectRequest(sessionID, passwd, 10*time.Second), closeSessionRequest(closeXid)...)
	if _, err := s.conn.Write(req); err != nil {
		// A short write: the close, last, did not go out whole.
		return connectResponse{}, false, ctxErr(ctx, err)
	}
	body, err := readFrame(s.conn)
	if err != nil {
		return connectResponse{}, true, ctxErr(ctx, fmt.Errorf("reading connect response: %w", err))
	}
	resp, err = parseConnectResponse(body)
	if err != nil {
		return resp, true, err
	}
	if resp.timeout <= 0 || resp.sessionID == 0 {
		return resp, false, ErrSessionNotFound
	}
	if sessionID != 0 && resp.sessionID != sessionID {
		return resp, false, fmt.Errorf("zktest: server answered for session 0x%x, asked for 0x%x", resp.sessionID, sessionID)
	}
	for {
		body, err := readFrame(s.conn)
		if err != nil {
			return resp, true, ctxErr(ctx, fmt.Errorf("reading closeSession reply: %w", err))
		}
		if len(body) < 16 {
			return resp, true, fmt.Errorf("zktest: short reply (%d bytes)", len(body))
		}
		if xid := int32(binary.BigEndian.Uint32(body)); xid != closeXid {
			continue // a notification or ping reply: not ours
		}
		if code := int32(binary.BigEndian.Uint32(body[12:])); code != 0 {
			return resp, false, fmt.Errorf("zktest: closeSession failed with ZooKeeper error code %d", code)
		}
		return resp, true, nil
	}
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

// Probe checks that the server at addr serves clients: it completes a
// ZooKeeper connect handshake for a new session and closes that session
// again. A follower that has not joined a quorum, a server still loading its
// data and a port nobody listens on all give an error.
func Probe(ctx context.Context, addr string) error {
	_, _, err := connectAndClose(ctx, addr, 0, nil)
	return err
}

// ExpireSession ends the ZooKeeper session sessionID for real: it opens a
// second connection to the server at addr with the session's id and password
// (which moves the session to that connection; the server drops the owner's
// connection) and sends closeSession on it. When ExpireSession returns nil the
// session is gone and the server has deleted its ephemeral znodes; the owner
// gets "session expired" when it reconnects, exactly as after a timeout, but
// without waiting one out. This is the standard trick from ZooKeeper's own
// test suites and works against real ZooKeeper and any wire-compatible
// server.
//
// addr is one "host:port". If the session no longer exists (or passwd is
// wrong) the error wraps ErrSessionNotFound. If an attempt fails (the owner
// wins its session back before the close is read, a connection breaks),
// ExpireSession tries again until ctx ends. A retry that finds the session
// gone counts as success only if an earlier attempt's close may have been
// applied (it went out, and its reply was lost); if none can have been, the
// session ended some other way, and the error wraps ErrSessionNotFound.
func ExpireSession(ctx context.Context, addr string, sessionID int64, passwd []byte) error {
	if sessionID == 0 {
		return fmt.Errorf("zktest: ExpireSession: session id 0 is not a session")
	}
	mayHaveClosed := false // by an earlier attempt whose replies were lost
	for attempt := 0; ; attempt++ {
		_, closed, err := connectAndClose(ctx, addr, sessionID, passwd)
		if err == nil {
			return nil
		}
		if errors.Is(err, ErrSessionNotFound) {
			if mayHaveClosed {
				// An earlier close went out and no reply refused
				// it, only its replies were lost: it ended the
				// session, as asked.
				return nil
			}
			return fmt.Errorf("zktest: ExpireSession 0x%x at %s: %w", sessionID, addr, err)
		}
		mayHaveClosed = mayHaveClosed || closed
		if ctx.Err() != nil || attempt >= 20 {
			return fmt.Errorf("zktest: ExpireSession 0x%x at %s: %w", sessionID, addr, err)
		}
		t := time.NewTimer(Scale(20 * time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("zktest: ExpireSession 0x%x at %s: %w", sessionID, addr, ctx.Err())
		case <-t.C:
		}
	}
}
