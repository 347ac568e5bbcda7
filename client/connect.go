package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zkit-dev/zkit/internal/jute"
)

// The session loop.
//
// Each client runs one goroutine for as long as it lives: it opens a
// connection (handshake.go), serves it until it ends (conn.go), and opens
// the next one (reconnect.go), resuming the session the last connection
// had. It is the one goroutine that reads from the server; an idle client
// runs no other (its pings are timers).
//
// The session is resumed unless it is gone: the server answers a connect
// request for a session it has expired with no session (errExpired), and
// the next attempt asks for a new one. A session the client has declared
// lost is never resumed (see doc.go): the next attempt asks for a new one,
// and a connection on which the server resumed it all the same (a connect
// request sent before the client gave the session up, answered after) is
// dropped at once.

// run is the session loop. It returns once the client is closed, after
// the server has ended the session (see conn.closeSession).
func (c *Client) run() {
	defer close(c.stopped)
	var resume *handshake // the session to resume; nil for a new one
	for {
		addr, wait := c.reconn.attempt()
		if !c.pause(wait) {
			return
		}
		if resume != nil && resume.sessionID == c.abandoned.Load() {
			resume = nil
		}
		nc, in, h, err := c.open(addr, resume)
		switch {
		case c.life.Err() != nil && err != nil:
			return
		case errors.Is(err, errExpired):
			c.expired()
			resume = nil
			continue
		case err != nil:
			c.attemptFailed(addr, err)
			continue
		case h.sessionID == c.abandoned.Load():
			nc.Close()
			resume = nil
			continue
		}
		resume = h
		c.reconn.connected()
		c.serve(newConn(c, nc, in, addr, h), h)
	}
}

// pause waits d, and reports false if the client was closed meanwhile.
func (c *Client) pause(d time.Duration) bool {
	if d <= 0 {
		return c.life.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.life.Done():
		return false
	}
}

// serve makes cn, a new connection of session h, the client's connection,
// and reads from it until it ends. Before anything else it sends the
// client's credentials and sets its watches again (see conn.prime); when
// the client is closed, it ends the session.
func (c *Client) serve(cn *conn, h *handshake) {
	keys := c.watches.resume(cn.session)
	if err := cn.prime(c.credentials(), keys); err != nil {
		cn.fail(ErrConnectionClosed)
		cn.nc.Close()
		c.attemptFailed(cn.addr, err)
		return
	}
	if !c.established(cn, h) && c.life.Err() == nil {
		cn.fail(ErrConnectionClosed) // a session given up: never resumed
		cn.nc.Close()
		return
	}
	// Once the client is closed (already, if it was while connecting), the
	// session ends, and the connection is read until the server closes it.
	read := make(chan struct{}) // closed once the connection is read no more
	stop := context.AfterFunc(c.life, func() { cn.closeSession(read) })
	cn.startPings()
	err := cn.read()
	close(read)
	stop()
	cause := ErrConnectionClosed
	if c.life.Err() != nil {
		cause = ErrClosed
	}
	cn.fail(cause)
	cn.nc.Close()
	c.log.Debug("zkit: connection ended", "server", cn.addr, "err", err)
	c.disconnected(cn)
}

// established makes cn, just opened on session h, the client's connection,
// and moves the session on: the same session connected again, or a new one
// (which ends the one before). It reports false, and leaves everything as
// it is, when the client is closed or the session is one the client has
// given up.
func (c *Client) established(cn *conn, h *handshake) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || h.sessionID == c.abandoned.Load() {
		return false
	}
	c.cur.Store(cn)
	defer c.notifyLocked()
	if c.sess != nil && c.sess.Alive() && c.sess.id == h.sessionID {
		if c.suspended {
			c.suspended = false
			c.lossTimer.Stop()
			c.log.Info("zkit: reconnected", "session", fmt.Sprintf("0x%x", h.sessionID), "server", cn.addr)
			c.tel.resumed(c.suspendedAt)
			c.publishLocked(StateReconnected)
		}
		return true
	}
	if c.sess != nil && c.sess.Alive() {
		c.loseLocked("replaced", errNewSession)
	}
	c.suspended = false
	c.sess = newSession(h.sessionID, h.passwd, h.timeout)
	c.log.Info("zkit: session established", "session", fmt.Sprintf("0x%x", h.sessionID), "timeout", h.timeout, "server", cn.addr)
	c.publishLocked(StateConnected)
	select {
	case <-c.ready:
	default:
		close(c.ready)
	}
	return true
}

// disconnected records that cn, the client's connection, has ended: the
// session is suspended, and declared lost once it has been for its
// timeout.
func (c *Client) disconnected(cn *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur.CompareAndSwap(cn, nil)
	if c.closed {
		return
	}
	defer c.notifyLocked()
	if c.sess == nil || !c.sess.Alive() || c.suspended {
		return
	}
	c.suspended, c.suspendedAt = true, time.Now()
	sess := c.sess
	c.log.Warn("zkit: disconnected; session suspended", "session", fmt.Sprintf("0x%x", sess.id))
	c.publishLocked(StateSuspended)
	c.lossTimer = time.AfterFunc(sess.timeout, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.sess == sess && c.suspended && sess.Alive() && !c.closed {
			c.loseLocked("timeout", fmt.Errorf("%w: disconnected for longer than the %v session timeout", ErrSessionLost, sess.timeout))
		}
	})
}

// expired records that the server has expired the session.
func (c *Client) expired() {
	c.watches.expired()
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed && c.sess != nil && c.sess.Alive() {
		c.loseLocked("expired", fmt.Errorf("%w: %w", ErrSessionLost, ErrSessionExpired))
	}
}

// authFailed records that the server refused credentials of scheme (and
// closes the connection): subscribers see StateAuthFailed.
func (c *Client) authFailed(scheme string, err error) {
	c.log.Warn("zkit: the server refused credentials", "scheme", scheme, "err", err)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.publishLocked(StateAuthFailed)
	}
}

// attemptFailed records why a connection attempt to addr failed. Before
// the first session, a TLS configuration error ends Connect at once; after
// it, the client keeps trying (certificates may be rotated) and logs it.
func (c *Client) attemptFailed(addr string, err error) {
	c.log.Debug("zkit: connection attempt failed", "server", addr, "err", err)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastErr = err
	if !errors.Is(err, errTLSConfig) {
		return
	}
	select {
	case <-c.ready:
		c.log.Warn("zkit: connection attempt failed", "server", addr, "err", err)
	default:
		select {
		case c.fatal <- err:
		default:
		}
	}
}

// publishWatchEvent tells subscribers of an event frame's event (b after
// the reply header).
func (c *Client) publishWatchEvent(b []byte, zxid int64) {
	var ev jute.WatcherEvent
	if jute.Decode(b, &ev) != nil {
		return
	}
	c.mu.Lock()
	sess := c.sess
	c.mu.Unlock()
	c.hub.publish(Event{Type: EventType(ev.Type), Path: c.rel(ev.Path), Zxid: zxid, Session: sess}, false)
}

// sawZxid keeps z if it is the highest zxid of a reply so far.
func (c *Client) sawZxid(z int64) {
	for {
		cur := c.lastZxid.Load()
		if z <= cur || c.lastZxid.CompareAndSwap(cur, z) {
			return
		}
	}
}

// credentials returns the credentials to send first on a new connection.
func (c *Client) credentials() []authCred {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.creds
}

// keepCredentials adds a, which the server accepted, to the credentials
// sent on every new connection.
func (c *Client) keepCredentials(a authCred) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range c.creds {
		if k.scheme == a.scheme && string(k.auth) == string(a.auth) {
			return
		}
	}
	c.creds = append(c.creds[:len(c.creds):len(c.creds)], a)
	c.addSchemeLocked(a.scheme)
}
