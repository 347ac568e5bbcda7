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

// observe counts a request answered d after it arrived, in whole
// milliseconds as ZooKeeper measures it: min and max are printed in whole
// milliseconds, so an average of the untruncated times could exceed the
// maximum (0/0.9/0 for one request of 0.9 ms).
func (m *metrics) observe(d time.Duration) {
	d = d.Truncate(time.Millisecond)
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
