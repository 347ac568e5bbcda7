package client

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reconnector's delays: none after a stable connection, then jittered
// doubling from reconnectMin up to its cap; a connection that ends quickly
// does not reset them.
func TestReconnectorDelays(t *testing.T) {
	r := newReconnector(make(chan struct{}), 10*time.Second, func() {})
	require.NoError(t, r.Init([]string{"a:1", "b:2"}))
	assert.Equal(t, 2, r.Len())
	assert.Equal(t, reconnectMax, r.cap)

	for k := 0; k < 12; k++ {
		r.mu.Lock()
		r.failures = k
		d := r.delay()
		r.mu.Unlock()
		if k == 0 {
			assert.Zero(t, d, "first attempt")
			continue
		}
		want := min(reconnectMax, reconnectMin<<(k-1))
		assert.GreaterOrEqual(t, d, want/2, "attempt %d", k)
		assert.LessOrEqual(t, d, want, "attempt %d", k)
	}

	// A short session timeout caps the delays at a tenth of it.
	assert.Equal(t, 40*time.Millisecond, newReconnector(nil, 400*time.Millisecond, func() {}).cap)
	assert.Equal(t, reconnectMin, newReconnector(nil, time.Millisecond, func() {}).cap)

	// Next rotates through the servers; failures grow until a stable
	// connection resets them.
	s1, retry := r.Next()
	assert.False(t, retry)
	s2, _ := r.Next()
	assert.NotEqual(t, s1, s2)
	r.mu.Lock()
	r.failures = 5
	r.mu.Unlock()
	r.Connected()
	r.Next() // the connection lasted a moment: still failing
	r.mu.Lock()
	assert.Equal(t, 6, r.failures)
	r.connectedAt = time.Now().Add(-stableConnection)
	r.mu.Unlock()
	r.Next() // after a stable connection: immediate, and counting from one
	r.mu.Lock()
	assert.Equal(t, 1, r.failures)
	r.mu.Unlock()
}

// Next asks go-zookeeper for its pause once after flushQueued, and always
// once the client is closed, without waiting out its own delay.
func TestReconnectorPauses(t *testing.T) {
	done := make(chan struct{})
	r := newReconnector(done, 10*time.Second, func() {})
	require.NoError(t, r.Init([]string{"a:1"}))
	r.flushQueued()
	_, retry := r.Next()
	assert.True(t, retry, "after flushQueued")
	_, retry = r.Next()
	assert.False(t, retry, "only once")

	r.mu.Lock()
	r.failures, r.cap = 100, time.Hour // a delay the test would not outlive
	r.mu.Unlock()
	returned := make(chan bool)
	go func() {
		_, retry := r.Next()
		returned <- retry
	}()
	close(done)
	select {
	case retry = <-returned:
		assert.True(t, retry, "closed while waiting")
	case <-time.After(10 * time.Second):
		t.Fatal("Next kept waiting after the client closed")
	}
	_, retry = r.Next()
	assert.True(t, retry, "closed")
}

// An expiry reported while a wire-client call is pending makes the next
// attempt take go-zookeeper's pause, which fails the calls still queued:
// a call of the old session must never run in the new one.
func TestExpiryWithACallPendingFlushesTheQueue(t *testing.T) {
	c := &Client{changed: make(chan struct{}), hub: newHub()}
	c.reconn = newReconnector(make(chan struct{}), 10*time.Second, func() {})
	require.NoError(t, c.reconn.Init([]string{"a:1"}))

	c.onEvent(zk.Event{Type: zk.EventSession, State: zk.StateExpired})
	_, retry := c.reconn.Next()
	assert.False(t, retry, "no call pending: no pause")

	c.pending.Add(1)
	c.onEvent(zk.Event{Type: zk.EventSession, State: zk.StateExpired})
	_, retry = c.reconn.Next()
	assert.True(t, retry, "a call pending: the queue is flushed")
}
