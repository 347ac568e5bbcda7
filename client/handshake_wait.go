package client

import "time"

// handshakeWait bounds the wait for a server's connect response: a third
// of the session timeout, and at least a second.
//
// go-zookeeper waits ten times its receive timeout (6.7 times the session
// timeout) for it. A ZooKeeper server that is starting accepts connections
// before it answers them, and the prompt reconnects of reconnect.go dial it
// in that moment: the client then sat on a silent connection for over a
// minute (with a 10 s session) while the server was long up, and lost its
// session. Bounded, the attempt is abandoned and the next one finds the
// server serving.
func handshakeWait(sessionTimeout time.Duration) time.Duration {
	return max(time.Second, sessionTimeout/3)
}

// SetReadDeadline passes t through, except that until the connect response
// has been read no deadline lies more than handshakeWait ahead.
func (s *sniffConn) SetReadDeadline(t time.Time) error {
	if !s.done {
		if limit := time.Now().Add(handshakeWait(s.c.cfg.sessionTimeout)); t.IsZero() || t.After(limit) {
			t = limit
		}
	}
	return s.Conn.SetReadDeadline(t)
}
