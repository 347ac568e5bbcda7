package refserver

import (
	"crypto/rand"
	"sort"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// session is a client session. It outlives connections: a client may
// reconnect with the id and password until the session expires or is closed.
type session struct {
	id         int64
	passwd     []byte
	timeout    time.Duration // negotiated on the last (re)connect
	expiresAt  time.Time     // on the server clock, rounded up to a tick
	conn       *conn         // current connection, or nil
	ephemerals map[string]struct{}
	closing    bool
}

// nextSessionID seeds session ids as ZooKeeper's SessionTrackerImpl does for
// a standalone server (server id 1 in the top byte, time below).
func nextSessionID(now time.Time) int64 {
	ms := uint64(now.UnixMilli())
	return int64((ms<<24)>>8 | 1<<56)
}

// negotiateTimeout clamps the requested timeout to [min, max].
func (s *Server) negotiateTimeout(ms int32) time.Duration {
	d := time.Duration(ms) * time.Millisecond
	if d < s.cfg.MinSessionTimeout {
		d = s.cfg.MinSessionTimeout
	}
	if d > s.cfg.MaxSessionTimeout {
		d = s.cfg.MaxSessionTimeout
	}
	return d
}

// touch extends the session's life by its timeout, rounded up to the next
// tick as ZooKeeper's ExpiryQueue does. Caller holds s.mu.
func (s *Server) touch(ss *session, now time.Time) {
	tick := s.cfg.TickTime
	t := now.Add(ss.timeout).UnixNano()
	rounded := (t/int64(tick) + 1) * int64(tick)
	ss.expiresAt = time.Unix(0, rounded)
}

// createSession registers a new session (a txn: it takes a zxid). Caller
// holds s.mu.
func (s *Server) createSession(timeout time.Duration) *session {
	s.takeZxid()
	id := s.nextSession
	s.nextSession++
	if id == containerOwner || id == 0 {
		id = s.nextSession
		s.nextSession++
	}
	pw := make([]byte, 16)
	rand.Read(pw)
	ss := &session{id: id, passwd: pw, timeout: timeout, ephemerals: map[string]struct{}{}}
	s.touch(ss, s.clock.now())
	s.sessions[id] = ss
	return ss
}

// closeSession ends a session as ZooKeeper's closeSession txn does: it takes
// a zxid, deletes the session's ephemerals (firing their watches) and
// forgets the session. Caller holds s.mu.
func (s *Server) closeSession(ss *session) {
	s.cfg.Logger.Debug("session closed", "session", hexID(ss.id))
	s.takeZxid()
	ss.closing = true
	paths := make([]string, 0, len(ss.ephemerals))
	for p := range ss.ephemerals {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	tx := s.newTxn()
	for _, p := range paths {
		if _, ok := s.nodes[p]; ok {
			s.deleteNode(tx, p)
		}
	}
	s.commit(tx)
	delete(s.sessions, ss.id)
	s.m.sessionsClosed++
}

// expireSessions closes every session whose time is up and drops its
// connection. Caller holds s.mu.
func (s *Server) expireSessions(now time.Time) {
	var due []*session
	for _, ss := range s.sessions {
		if !ss.closing && !now.Before(ss.expiresAt) {
			due = append(due, ss)
		}
	}
	sort.Slice(due, func(i, j int) bool { return due[i].id < due[j].id })
	for _, ss := range due {
		s.expire(ss)
	}
}

// expire closes the session now, as if it had timed out. Caller holds s.mu.
func (s *Server) expire(ss *session) {
	s.cfg.Logger.Info("session expired", "session", hexID(ss.id))
	c := ss.conn
	if c != nil {
		// ZooKeeper closes the connection without a word; events for
		// the expiring session itself are not delivered.
		c.abort()
		s.detach(c)
	}
	s.closeSession(ss)
}

// sessionIDs lists the live sessions.
func (s *Server) sessionIDs() []int64 {
	ids := make([]int64, 0, len(s.sessions))
	for id, ss := range s.sessions {
		if !ss.closing {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

func hexID(id int64) string {
	const digits = "0123456789abcdef"
	u := uint64(id)
	var b [18]byte
	i := len(b)
	for {
		i--
		b[i] = digits[u&0xf]
		u >>= 4
		if u == 0 {
			break
		}
	}
	i--
	b[i] = 'x'
	i--
	b[i] = '0'
	return string(b[i:])
}

var _ = jute.ErrOK
