package refserver

import (
	"time"
)

// Pause makes the server a black hole: it keeps accepting connections but
// reads, answers and sends nothing until Resume. Requests that arrive in
// the meantime are processed after Resume, as TCP would deliver them.
// Session clocks keep running, so sessions whose clients cannot ping may
// expire, as in a network partition.
func (s *Server) Pause() {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if s.paused == nil {
		s.paused = make(chan struct{})
	}
}

// Resume ends a Pause.
func (s *Server) Resume() {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	if s.paused != nil {
		close(s.paused)
		s.paused = nil
	}
}

func (s *Server) isPaused() bool {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	return s.paused != nil
}

// waitUnpaused blocks while the server is paused; it reports false if done
// closed first.
func (s *Server) waitUnpaused(done <-chan struct{}) bool {
	for {
		s.pmu.Lock()
		ch := s.paused
		s.pmu.Unlock()
		if ch == nil {
			return true
		}
		select {
		case <-ch:
		case <-done:
			return false
		case <-s.stop:
			return false
		}
	}
}

// SetLatency delays every frame the server sends (replies and watch
// events) by d, keeping their order; 0 turns the delay off.
func (s *Server) SetLatency(d time.Duration) {
	s.latency.Store(int64(max(d, 0)))
}

// DropReplyAfterCommit arms a one-shot fault: the next request for which
// match(op, path) returns true is applied, and then its connection is
// closed instead of replying. op is ZooKeeper's name of the opcode
// ("create", "create2", "delete", "setData", "multi", ...); path is the
// request's path (for multi, the first op's). A nil match disarms it.
// match runs on the server's goroutines with the server locked: it must be
// quick and must not call the server.
func (s *Server) DropReplyAfterCommit(match func(op, path string) bool) {
	s.mu.Lock()
	s.dropMatch = match
	s.mu.Unlock()
}

// DropConnections closes every client connection. Sessions survive; clients
// reconnect and resume them.
func (s *Server) DropConnections() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		c.abort()
		s.detach(c)
	}
}

// ExpireSession expires the session now, as if its timeout had passed: its
// ephemerals are deleted (firing watches) and its connection is closed. It
// reports whether the session existed.
func (s *Server) ExpireSession(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.sessions[id]
	if ss == nil || ss.closing {
		return false
	}
	s.expire(ss)
	return true
}

// FastForward advances the server's clock by d, then expires the sessions
// whose time is up and reaps containers and TTL nodes, before returning.
//
// Clients that are connected while the server is not paused are taken to
// have pinged through the skipped time: their sessions live on. Sessions
// without a connection, and every session while the server is paused (no
// ping gets through a black hole), age by d and expire once their timeout
// has passed.
func (s *Server) FastForward(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock.advance(d)
	if !s.isPaused() {
		for _, ss := range s.sessions {
			if ss.conn != nil && !ss.conn.closed() {
				ss.expiresAt = ss.expiresAt.Add(d)
			}
		}
	}
	now := s.clock.now()
	s.expireSessions(now)
	s.reap(now)
	s.nextReap = now.Add(s.cfg.ContainerCheckInterval)
}

// Sessions returns the ids of the live sessions, in increasing order.
func (s *Server) Sessions() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessionIDs()
}

// Now returns the server's clock.
func (s *Server) Now() time.Time { return s.clock.now() }

// Zxid returns the last zxid the server has applied.
func (s *Server) Zxid() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.zxid
}
