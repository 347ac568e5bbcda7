package refserver

import (
	"bytes"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// connect handles the ConnectRequest; it reports whether to keep reading.
func (s *Server) connect(c *conn, b []byte) bool {
	var req jute.ConnectRequest
	if jute.Decode(b, &req) != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.closed() {
		return false
	}
	if req.LastZxidSeen > s.zxid {
		// The client has seen a newer state than ours: refuse it by
		// closing the connection, so that it tries another server.
		s.cfg.Logger.Info("refusing client ahead of server", "clientZxid", req.LastZxidSeen, "zxid", s.zxid)
		return false
	}
	timeout := s.negotiateTimeout(req.TimeOut)
	c.oldClient = !req.HasReadOnly
	rsp := &jute.ConnectResponse{HasReadOnly: req.HasReadOnly}
	var ss *session
	if req.SessionID == 0 {
		ss = s.createSession(timeout)
	} else {
		old := s.sessions[req.SessionID]
		if old != nil && old.conn != nil {
			// ZooKeeper drops the session's other connection first,
			// whatever the password.
			old.conn.abort()
			s.detach(old.conn)
		}
		if old != nil && !old.closing && bytes.Equal(old.passwd, req.Passwd) {
			ss = old
			ss.timeout = timeout
			s.touch(ss, s.clock.now())
		}
	}
	if ss == nil {
		s.cfg.Logger.Debug("refusing expired or unknown session", "session", hexID(req.SessionID),
			"client", c.nc.RemoteAddr().String())
		rsp.Passwd = make([]byte, 16)
		c.enqueue(jute.Frame(rsp), true)
		return false
	}
	ss.conn = c
	c.session = ss
	s.cfg.Logger.Debug("session established", "session", hexID(ss.id), "timeout", timeout,
		"resumed", req.SessionID != 0, "client", c.nc.RemoteAddr().String())
	rsp.TimeOut = int32(timeout / time.Millisecond)
	rsp.SessionID = ss.id
	rsp.Passwd = ss.passwd
	c.enqueue(jute.Frame(rsp), false)
	return true
}

// auth handles an auth packet (ZooKeeperServer.processPacket): digest and
// ip succeed, any other scheme fails with AuthFailed and the connection is
// closed, and so does digest with a null credential (the provider fails on
// it).
func (s *Server) auth(c *conn, hdr jute.RequestHeader, body []byte) bool {
	var ap jute.AuthPacket
	if jute.Unmarshal(s.decoder(body), &ap) != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.closed() {
		return false
	}
	var ids []jute.Id
	switch ap.Scheme {
	case "digest":
		if ap.Auth == nil {
			break
		}
		id := digestOf(javaString(string(ap.Auth)))
		if s.cfg.SuperDigest != "" && id == s.cfg.SuperDigest {
			ids = append(ids, jute.Id{Scheme: "super", ID: ""})
		}
		ids = append(ids, jute.Id{Scheme: "digest", ID: id})
	case "ip":
		ids = append(ids, jute.Id{Scheme: "ip", ID: c.remoteIP})
	}
	if ids == nil {
		s.m.authFailed++
		c.enqueue(jute.Frame(&jute.ReplyHeader{Xid: hdr.Xid, Err: int32(jute.ErrAuthFailed)}), true)
		s.detach(c)
		return false
	}
	for _, id := range ids {
		c.auth.add(id)
	}
	c.enqueue(jute.Frame(&jute.ReplyHeader{Xid: hdr.Xid}), false)
	return true
}
