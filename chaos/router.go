package chaos

import (
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Router gives one worker its own fault proxy to every server of an
// ensemble. Its Dialer sends a connection for server address A through A's
// proxy, so the client keeps the real connect string and still chooses
// among the servers itself, while the test can partition the worker from
// all of them (Blackhole), drop its connections (ResetAll) or lose the
// reply of its next request (CutAfterNextRequest).
type Router struct {
	proxies map[string]*zktest.Proxy // real server address -> its proxy
	order   []*zktest.Proxy
}

// NewRouter starts a proxy to each of servers; they are closed when the
// test ends.
func NewRouter(t testing.TB, servers []string) *Router {
	t.Helper()
	r := &Router{proxies: map[string]*zktest.Proxy{}}
	for _, s := range servers {
		p := zktest.NewProxy(t, s)
		r.proxies[s] = p
		r.order = append(r.order, p)
	}
	return r
}

// Dialer dials the proxy of the address it is given.
func (r *Router) Dialer() client.Dialer {
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		p, ok := r.proxies[address]
		if !ok {
			return nil, fmt.Errorf("chaos: no proxy for %s", address)
		}
		return net.DialTimeout(network, p.Addr(), timeout)
	}
}

// Option is the client option that routes a client through r.
func (r *Router) Option() client.Option { return client.WithDialer(r.Dialer()) }

// Blackhole partitions the worker from every server.
func (r *Router) Blackhole() {
	for _, p := range r.order {
		p.Blackhole()
	}
}

// Heal ends the partition.
func (r *Router) Heal() {
	for _, p := range r.order {
		p.Heal()
	}
}

// ResetAll drops every connection of the worker.
func (r *Router) ResetAll() {
	for _, p := range r.order {
		p.ResetAll()
	}
}

// SetLatency delays everything the worker sends and receives by d.
func (r *Router) SetLatency(d time.Duration) {
	for _, p := range r.order {
		p.SetLatency(d)
	}
}

// CutAfterNextRequest makes the next request of the worker lose its reply
// after the server applied it, and reports whether it could: the worker
// must have exactly one connection open (otherwise it is not known which
// proxy will carry the next request).
func (r *Router) CutAfterNextRequest() bool {
	p := r.active()
	if p == nil {
		return false
	}
	p.CutAfterNextRequest()
	return true
}

// CutAfterNextCreate makes the worker's next create of a path under prefix
// lose its reply after the server applied it (the requests before it go
// through), and reports whether it could, as CutAfterNextRequest does.
func (r *Router) CutAfterNextCreate(prefix string) bool {
	p := r.active()
	if p == nil {
		return false
	}
	p.CutAfterNextCreate(prefix)
	return true
}

// CutAfterNextMultiCreate is CutAfterNextCreate for the next multi whose
// first op creates a node under prefix (an election's Requeue).
func (r *Router) CutAfterNextMultiCreate(prefix string) bool {
	p := r.active()
	if p == nil {
		return false
	}
	p.CutAfterNextMultiCreate(prefix)
	return true
}

// active is the proxy of the worker's only open connection, or nil.
func (r *Router) active() *zktest.Proxy {
	var active *zktest.Proxy
	for _, p := range r.order {
		if p.ActiveConns() > 0 {
			if active != nil {
				return nil
			}
			active = p
		}
	}
	return active
}

// Requests is the number of requests the worker has sent (not counting
// handshakes and pings): a call that must send nothing leaves it
// unchanged.
func (r *Router) Requests() int64 {
	var n int64
	for _, p := range r.order {
		n += p.Requests()
	}
	return n
}
