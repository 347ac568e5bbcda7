package refserver

import (
	"sync/atomic"
	"time"
)

// metrics are the counters behind srvr, stat and mntr.
type metrics struct {
	packetsReceived atomic.Int64
	packetsSent     atomic.Int64

	// Guarded by Server.mu.
	requests       int64
	latencyTotal   time.Duration
	latencyMin     time.Duration
	latencyMax     time.Duration
	watchEvents    int64
	authFailed     int64
	sessionsClosed int64
}

func (m *metrics) observe(d time.Duration) {
	if m.requests == 0 || d < m.latencyMin {
		m.latencyMin = d
	}
	if d > m.latencyMax {
		m.latencyMax = d
	}
	m.requests++
	m.latencyTotal += d
}

func (m *metrics) reset() {
	m.packetsReceived.Store(0)
	m.packetsSent.Store(0)
	m.requests, m.latencyTotal, m.latencyMin, m.latencyMax = 0, 0, 0, 0
}
