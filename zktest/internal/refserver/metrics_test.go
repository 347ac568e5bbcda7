package refserver

import (
	"testing"
	"time"
)

// Latency is kept in whole milliseconds, as ZooKeeper keeps it, so that
// srvr's min/avg/max never has an average above its maximum: under a
// loaded test run, requests of under a millisecond printed 0/0.1/0.
func TestLatencyInWholeMilliseconds(t *testing.T) {
	var s Server
	for _, d := range []time.Duration{900 * time.Microsecond, 300 * time.Microsecond, 2600 * time.Microsecond} {
		s.m.observe(d)
	}
	if got, want := s.latencyString(), "0/0.7/2"; got != want {
		t.Errorf("min/avg/max %s, want %s", got, want)
	}
}
