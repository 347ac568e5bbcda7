package client

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Reconnecting.
//
// go-zookeeper pauses for one second each time it has tried every server
// without getting a session. With a single server that is before every
// reconnect: a session behind a short partition keeps only about a third of
// its timeout, minus that second, to reconnect in (the client notices the
// partition after two thirds of the timeout), and a client learns of an
// expiry a second late. zkit's reconnector replaces that pause:
//
//   - the first attempt after a connection that lasted at least
//     stableConnection is made at once, to the next server;
//   - each further attempt waits a jittered delay that starts at
//     reconnectMin and doubles up to a tenth of the session timeout, at
//     most reconnectMax (500 ms with the default 10 s timeout), so that a
//     server coming back is found within that cap;
//   - a connection that ends sooner than stableConnection (a server that
//     accepts and then drops every connection, for example after refusing
//     its credentials) counts as a failed attempt, so the delays keep
//     growing instead of redialling in a tight loop.
//
// The reconnector asks go-zookeeper for its one-second pause (retryStart)
// in two cases only. Once the client is closing, because that is where
// go-zookeeper notices it should stop. And after the server reported the
// session expired while a call of the old session may still sit in
// go-zookeeper's send queue (a call made in the instant between the
// connection breaking and the client learning of it): that pause is the
// only place go-zookeeper fails queued requests, and a request of the old
// session must never run in the new one (an ephemeral node it created
// would belong to nobody who knows of it). Then the new session is opened
// a second later; the expiry itself is always reported at once.
//
// Server addresses are passed to the dialer as given (go-zookeeper's
// default provider resolves them to IP addresses once, at Connect): DNS
// changes are seen on the next attempt, and a TLS dialer verifies the
// server's certificate against the name in the address.
const (
	reconnectMin     = 10 * time.Millisecond
	reconnectMax     = 500 * time.Millisecond
	stableConnection = time.Second
)

// reconnector is the go-zookeeper HostProvider of every client.
type reconnector struct {
	done <-chan struct{} // closed when the client is closed
	cap  time.Duration   // the longest delay between attempts

	mu          sync.Mutex
	servers     []string
	next        int       // index of the server to try next
	failures    int       // attempts since the last stable connection
	connectedAt time.Time // when the current connection got its session; zero if none
	flush       bool      // pause once so that queued requests fail (see above)

	// settled is called at the start of every attempt: go-zookeeper
	// calls Next only after it has delivered the replies that arrived on
	// the lost connection and failed the requests sent on it.
	settled func()
}

func newReconnector(done <-chan struct{}, sessionTimeout time.Duration, settled func()) *reconnector {
	return &reconnector{done: done, cap: min(reconnectMax, max(reconnectMin, sessionTimeout/10)), settled: settled}
}

// Init takes the server list (already shuffled by go-zookeeper).
func (r *reconnector) Init(servers []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.servers = append([]string(nil), servers...)
	return nil
}

// Len returns the number of servers.
func (r *reconnector) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.servers)
}

// Next waits for the next attempt's turn and returns the server to try.
// retryStart asks go-zookeeper for its pause: see the comment above.
func (r *reconnector) Next() (server string, retryStart bool) {
	r.settled()
	r.mu.Lock()
	server = r.servers[r.next]
	r.next = (r.next + 1) % len(r.servers)
	if !r.connectedAt.IsZero() {
		if time.Since(r.connectedAt) >= stableConnection {
			r.failures = 0
		}
		r.connectedAt = time.Time{}
	}
	if r.flush {
		r.flush = false
		r.mu.Unlock()
		return server, true
	}
	wait := r.delay()
	r.failures++
	r.mu.Unlock()
	select {
	case <-r.done:
		return server, true
	default:
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.done:
			return server, true
		}
	}
	return server, false
}

// delay is the wait before the next attempt: none after a stable
// connection, then reconnectMin doubling up to the cap, each drawn
// uniformly from its upper half.
func (r *reconnector) delay() time.Duration {
	if r.failures == 0 {
		return 0
	}
	d := r.cap
	if r.failures < 30 {
		d = min(r.cap, reconnectMin<<(r.failures-1))
	}
	return d/2 + rand.N(d/2+1)
}

// Connected records that the last server returned by Next gave a session.
func (r *reconnector) Connected() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.connectedAt = time.Now()
}

// flushQueued makes the next attempt wait for go-zookeeper's pause, which
// fails the requests still in its send queue.
func (r *reconnector) flushQueued() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flush = true
}
