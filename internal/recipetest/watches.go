package recipetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/zktest"
)

// WaitWatching waits until the server at addr reports (four-letter word
// wchc, which both real ZooKeeper and the reference server answer) that
// session has a watch on path: a waiter has been answered and is now only
// waiting, with nothing in flight.
func WaitWatching(t *testing.T, addr, path string, session int64) {
	t.Helper()
	Eventually(t, fmt.Sprintf("session 0x%x watches %s", session, path), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(5*time.Second))
		defer cancel()
		paths, err := zktest.WatchedPaths(ctx, addr, session)
		return err == nil && paths[path]
	})
}

// EventZxidBackend is a server for a test of the zxid a watch event
// carries (client.WatchEvent.Zxid), and whether it sends one.
type EventZxidBackend struct {
	zktest.Backend
	SendsZxid bool // the zxid of the transaction that fired the event, as ZooKeeper 3.9 sends it
}

// EventZxidBackends are the test binary's shared ZooKeeper 3.8 and a
// fresh reference server, which send no zxid with a watch event, and a
// reference server that sends it as ZooKeeper 3.9 does
// (zktest.ServerWatchEventZxids).
func EventZxidBackends(t *testing.T) []EventZxidBackend {
	says := zktest.ReferenceBackend(t, zktest.ServerWatchEventZxids())
	says.Name = "reference-event-zxids"
	return []EventZxidBackend{{zktest.RealBackend(t), false}, {zktest.ReferenceBackend(t), false}, {says, true}}
}
