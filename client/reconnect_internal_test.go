package client

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The reconnector's delays: none after a stable connection, then jittered
// doubling from reconnectMin up to its cap; a connection that ends quickly
// does not reset them.
func TestReconnectorDelays(t *testing.T) {
	t.Parallel()
	r := newReconnector([]string{"a:1", "b:2"}, 10*time.Second)
	assert.Equal(t, reconnectMax, r.cap)

	for k := 0; k < 12; k++ {
		r.failures = k
		d := r.delay()
		if k == 0 {
			assert.Zero(t, d, "first attempt")
			continue
		}
		want := min(reconnectMax, reconnectMin<<(k-1))
		assert.GreaterOrEqual(t, d, want/2, "attempt %d", k)
		assert.LessOrEqual(t, d, want, "attempt %d", k)
	}

	// A short session timeout caps the delays at a tenth of it.
	assert.Equal(t, 40*time.Millisecond, newReconnector([]string{"a:1"}, 400*time.Millisecond).cap)
	assert.Equal(t, reconnectMin, newReconnector([]string{"a:1"}, time.Millisecond).cap)

	// attempt rotates through the servers; failures grow until a stable
	// connection resets them.
	r.failures = 0
	s1, wait := r.attempt()
	assert.Zero(t, wait)
	s2, _ := r.attempt()
	assert.NotEqual(t, s1, s2)
	r.failures = 5
	r.connected()
	r.attempt() // the connection lasted a moment: still failing
	assert.Equal(t, 6, r.failures)
	r.connectedAt = time.Now().Add(-stableConnection)
	_, wait = r.attempt() // after a stable connection: immediate, and counting from one
	assert.Zero(t, wait)
	assert.Equal(t, 1, r.failures)
}

// Clients given the same servers try them in different orders, each
// client every server in turn.
func TestReconnectorShufflesServers(t *testing.T) {
	t.Parallel()
	servers := []string{"a:1", "b:2", "c:3", "d:4", "e:5", "f:6"}
	firsts := map[string]bool{}
	for range 100 {
		r := newReconnector(servers, 10*time.Second)
		var tried []string
		for range servers {
			s, _ := r.attempt()
			tried = append(tried, s)
		}
		slices.Sort(tried)
		assert.Equal(t, servers, tried, "every server once per round")
		firsts[r.servers[0]] = true
	}
	assert.Greater(t, len(firsts), 1, "100 clients all began with the same server")
}
