package client

import (
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// Reconnecting.
//
// The client tries the servers in turn, in an order shuffled once at
// Connect (as ZooKeeper's client does, so that clients given the same list
// spread over the ensemble), and paces its attempts:
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
// A session behind a short partition so keeps all of the third of its
// timeout that is left once the client has noticed the partition (after
// two thirds of it), and a client learns that the server expired its
// session within a round trip of reaching a server again. (go-zookeeper
// pauses a full second each time it has tried every server: with one
// server, before every reconnect.)
//
// Server addresses are passed to the dialer as given, not resolved once at
// Connect: DNS changes are seen on the next attempt, and a TLS dialer
// verifies the server's certificate against the name in the address.
const (
	reconnectMin     = 10 * time.Millisecond
	reconnectMax     = 500 * time.Millisecond
	stableConnection = time.Second
)

// reconnector picks the server of each connection attempt and paces the
// attempts. The session loop makes the attempts; UpdateServers changes the
// servers (rebalance.go), hence the lock.
type reconnector struct {
	mu          sync.Mutex
	servers     []string
	first       []string      // servers to try before the others, in order: a move (rebalance.go)
	cap         time.Duration // the longest delay between attempts
	next        int           // index of the server to try next
	failures    int           // attempts since the last stable connection
	connectedAt time.Time     // when the current connection got its session; zero if none
}

func newReconnector(servers []string, sessionTimeout time.Duration) *reconnector {
	r := &reconnector{servers: slices.Clone(servers), cap: min(reconnectMax, max(reconnectMin, sessionTimeout/10))}
	rand.Shuffle(len(r.servers), func(i, j int) { r.servers[i], r.servers[j] = r.servers[j], r.servers[i] })
	return r
}

// attempt returns the server to try next and how long to wait first.
func (r *reconnector) attempt() (string, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var server string
	if len(r.first) > 0 {
		server, r.first = r.first[0], r.first[1:]
	} else {
		server = r.servers[r.next]
		r.next = (r.next + 1) % len(r.servers)
	}
	if !r.connectedAt.IsZero() {
		if time.Since(r.connectedAt) >= stableConnection {
			r.failures = 0
		}
		r.connectedAt = time.Time{}
	}
	wait := r.delay()
	r.failures++
	return server, wait
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

// connected records that the last server attempt returned gave a session.
func (r *reconnector) connected() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.connectedAt = time.Now()
	r.first = nil // the move is done
}
