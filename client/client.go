package client

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Client is a connection to a ZooKeeper ensemble and its current session.
// It is safe for concurrent use. Close it when done: that ends the session
// and deletes its ephemeral nodes.
type Client struct {
	cfg     config
	servers []string
	log     *slog.Logger
	tel     *Telemetry
	hub     *hub
	reconn  *reconnector  // the session loop's (connect.go)
	stopped chan struct{} // closed when the session loop has returned

	lastZxid  atomic.Int64         // the highest zxid of a reply (conn.go)
	cur       atomic.Pointer[conn] // the connection calls go on; nil while there is none
	watches   watchSet             // the client's watches (watch.go)
	abandoned atomic.Int64         // the id of the last session declared lost: never resumed

	mu          sync.Mutex
	creds       []authCred // sent first on every new connection (conn.prime)
	schemes     []string   // of the credentials added, for ACL validation
	sess        *Session   // current session; nil before the first
	suspended   bool
	suspendedAt time.Time
	lossTimer   *time.Timer
	changed     chan struct{} // closed and replaced at every change of the connection or the session
	closed      bool
	ready       chan struct{} // closed when the first session is established
	lastErr     error         // why the last connection attempt failed
	fatal       chan error    // an error Connect should fail with at once

	life       context.Context // ends when the client is closed
	endLife    context.CancelFunc
	background sync.WaitGroup // cleanup goroutines
	local      sync.Map       // see Local
}

// Connect connects to servers ("host:port" each) and returns once a session
// is established, or with ctx's error. The client keeps reconnecting in the
// background for as long as it lives. When Connect fails after it began
// connecting, it closes the half-made client in the background: its
// goroutines may outlive the call by about a second.
func Connect(ctx context.Context, servers []string, opts ...Option) (*Client, error) {
	if len(servers) == 0 {
		return nil, &InputError{Op: "connect", Reason: "no servers given"}
	}
	for _, s := range servers {
		if s == "" {
			return nil, &InputError{Op: "connect", Reason: "empty server address"}
		}
	}
	c := &Client{cfg: defaultConfig(), ready: make(chan struct{}), fatal: make(chan error, 1),
		changed: make(chan struct{}), servers: slices.Clone(servers)}
	for _, o := range opts {
		o(&c.cfg)
	}
	if c.cfg.sessionTimeout <= 0 {
		return nil, &InputError{Op: "connect", Reason: fmt.Sprintf("session timeout %v must be positive", c.cfg.sessionTimeout)}
	}
	if c.cfg.maxBuffer <= requestOverhead {
		return nil, &InputError{Op: "connect", Reason: fmt.Sprintf("max buffer %d: want more than the %d bytes a request adds to its data", c.cfg.maxBuffer, requestOverhead)}
	}
	if c.cfg.subBuffer <= 0 {
		return nil, &InputError{Op: "connect", Reason: fmt.Sprintf("subscription buffer %d must be positive", c.cfg.subBuffer)}
	}
	c.hub = newHub(c.cfg.subBuffer)
	for _, a := range c.cfg.auth {
		if a.scheme == "" {
			return nil, &InputError{Op: "connect", Reason: "credentials with an empty scheme"}
		}
		c.addScheme(a.scheme)
	}
	if err := checkNamespace(c.cfg.namespace); err != nil {
		return nil, err
	}
	if reason := ValidateACL(c.cfg.defaultACL, c.schemes...); reason != "" {
		return nil, &InputError{Op: "connect", Reason: "default ACL: " + reason, Err: ErrInvalidACL}
	}
	c.log = c.cfg.logger
	c.watches.rel = c.rel
	c.tel = newTelemetry(c.cfg)
	c.watches.unwatch, c.watches.overflowed = c.unwatch, c.tel.watchOverflowed
	c.life, c.endLife = context.WithCancel(context.Background())
	c.reconn = newReconnector(servers, c.cfg.sessionTimeout)
	c.stopped = make(chan struct{})
	go c.run()
	select {
	case <-c.ready:
	case err := <-c.fatal:
		go c.Close() // see below
		return nil, fmt.Errorf("zkit: connect %v: %w", servers, err)
	case <-ctx.Done():
		// Connect returns when ctx ends; the half-made client is closed
		// in the background.
		go c.Close()
		c.mu.Lock()
		last := c.lastErr
		c.mu.Unlock()
		if last != nil {
			return nil, fmt.Errorf("zkit: connect %v: %w (last attempt: %v)", servers, ctx.Err(), last)
		}
		return nil, fmt.Errorf("zkit: connect %v: %w", servers, ctx.Err())
	}
	for _, a := range c.cfg.auth {
		// Credentials added twice are harmless: ride out a lost reply.
		err := c.Retry(ctx, func(ctx context.Context) error { return c.addAuth(ctx, a.scheme, a.auth) })
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("zkit: auth %s: %w", a.scheme, err)
		}
	}
	if err := c.openNamespace(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if c.cfg.trackEnsemble {
		c.Go(c.trackEnsemble)
	}
	return c, nil
}

// Session returns the current session. It is never nil on a connected
// client; after Close it is the last session, already lost.
func (c *Client) Session() *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
}

// Suspended reports whether the client is disconnected right now while its
// session may still live, and since when. Unlike the events of a
// Subscription, which arrive a little later, it is the state at the moment
// of the call: use it to check the state when an event says it changed.
func (c *Client) Suspended() (bool, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.suspended {
		return false, time.Time{}
	}
	return true, c.suspendedAt
}

// Changed returns a channel that is closed at the next change of the
// connection (suspended, reconnected) or the session (lost, replaced), or
// when the client is closed. Take it before reading the state it guards
// (Suspended, Session), so that no change between the two is missed.
// Unlike a Subscription it costs nothing: any number of held things can
// follow the client this way.
func (c *Client) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// notifyLocked closes the channel Changed returned. Called with mu held.
func (c *Client) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Subscribe returns a subscription to every state change and watch event
// from now on, which holds up to WithSubscriptionBuffer events for a reader
// that falls behind (see Subscription).
func (c *Client) Subscribe() *Subscription { return c.hub.subscribe() }

// Local is storage that lives as long as the client. Recipes keep there
// the state that every handle on one client shares: a counter's queue of
// calls to combine, the nodes kept present. Key it, like a context value,
// with a type of your own package so that keys never collide.
func (c *Client) Local() *sync.Map { return &c.local }

// Context ends when the client is closed.
func (c *Client) Context() context.Context { return c.life }

// Close ends the session (the server deletes its ephemeral nodes), stops
// reconnecting, and ends every subscription after a final StateClosed event.
// Calls in flight fail at once with an error matching ErrClosed, even on a
// connection that no longer answers. It waits for background cleanups
// started by this client to stop, and for the server to end the session,
// at most a second.
func (c *Client) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.mu.Unlock()
	c.endLife() // the connection's calls fail now, and the session ends (see serve)
	c.background.Wait()
	<-c.stopped
	c.watches.close()
	c.mu.Lock()
	if c.lossTimer != nil {
		c.lossTimer.Stop()
	}
	if c.suspended {
		c.tel.resumed(c.suspendedAt) // the suspension ends with the client
		c.suspended = false          // and its session: nothing may still live
	}
	sess := c.sess
	if sess != nil {
		sess.lose(ErrClosed)
	}
	c.notifyLocked()
	c.mu.Unlock()
	c.tel.state(StateClosed)
	c.hub.publish(Event{State: StateClosed, Session: sess}, true)
}

// Go runs fn in the background for as long as the client lives: fn's
// context ends when the client is closed, and Close waits for fn to return.
// Recipes use it for cleanups that must outlive the call that started them.
func (c *Client) Go(fn func(ctx context.Context)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.background.Add(1)
	go func() {
		defer c.background.Done()
		fn(c.life)
	}()
}

// loseLocked ends the current session with cause; why names it for the
// telemetry. A suspension it ends is recorded, however it ended: the loss
// timer, the server's expiry, or a new session. Called with mu held.
func (c *Client) loseLocked(why string, cause error) {
	if c.lossTimer != nil {
		c.lossTimer.Stop()
	}
	if c.suspended {
		c.tel.resumed(c.suspendedAt)
	}
	c.suspended = false
	c.abandoned.Store(c.sess.id)
	c.log.Warn("zkit: session lost", "session", fmt.Sprintf("0x%x", c.sess.id), "cause", cause)
	c.sess.lose(cause)
	c.watches.lose(c.sess.id, cause)
	c.notifyLocked()
	c.tel.sessionLost(why)
	c.publishLocked(StateLost)
}

// publishLocked tells subscribers and the telemetry of a state change of
// the current session. Called with mu held.
func (c *Client) publishLocked(s State) {
	c.tel.state(s)
	c.hub.publish(Event{State: s, Session: c.sess}, false)
}

// addScheme records that the client has credentials for scheme.
func (c *Client) addScheme(scheme string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addSchemeLocked(scheme)
}

func (c *Client) addSchemeLocked(scheme string) {
	if !slices.Contains(c.schemes, scheme) {
		c.schemes = append(c.schemes, scheme)
	}
}

// current returns the live session, or an error saying there is none.
func (c *Client) current() (*Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClosed
	}
	if c.sess == nil || !c.sess.Alive() {
		return nil, ErrSessionLost
	}
	return c.sess, nil
}
