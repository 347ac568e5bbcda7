package zktest

import (
	"context"
	"testing"
	"time"
)

// Backend is a ZooKeeper server a test runs against: real Apache ZooKeeper
// or the bundled reference server. Faults that work on the wire work on
// both: NewProxy(t, b.Addr()) and b.ExpireSession.
type Backend struct {
	Name    string   // "zookeeper" or "reference"
	Servers []string // client addresses
}

// Addr is the first server's address.
func (b Backend) Addr() string { return b.Servers[0] }

// ExpireSession really expires the session on the server (see the package
// function ExpireSession), failing the test if it cannot.
func (b Backend) ExpireSession(t testing.TB, sessionID int64, passwd []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Scale(20*time.Second))
	defer cancel()
	if err := ExpireSession(ctx, b.Addr(), sessionID, passwd); err != nil {
		t.Fatalf("zktest: expire session on %s: %v", b.Name, err)
	}
}

// EachBackend runs fn as a subtest against the test binary's shared real
// ZooKeeper ("zookeeper"; skipped when none is installed, failed with
// ZKIT_REQUIRE_ZOOKEEPER=1) and against a fresh reference server
// ("reference"), configured like the real one (tickTime 200ms, session
// timeouts from 400ms to 60s). Tests keep out of each other's way with
// UniquePath.
func EachBackend(t *testing.T, fn func(t *testing.T, b Backend)) {
	t.Helper()
	t.Run("zookeeper", func(t *testing.T) {
		fn(t, Backend{Name: "zookeeper", Servers: SharedZooKeeper(t).Servers()})
	})
	t.Run("reference", func(t *testing.T) {
		fn(t, Backend{Name: "reference", Servers: NewServer(t, ServerTickTime(200*time.Millisecond),
			ServerSessionTimeouts(400*time.Millisecond, time.Minute)).Servers()})
	})
}
