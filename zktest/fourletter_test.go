package zktest_test

import (
	"context"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/zktest"
)

// ConnectedSessions lists the sessions of the clients connected to a
// server, and no longer one whose client closed it, on both servers.
func TestConnectedSessions(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(20*time.Second))
		defer cancel()
		a, c := b.Connect(t), b.Connect(t)
		got, err := zktest.ConnectedSessions(ctx, b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if !got[a.Session().ID()] || !got[c.Session().ID()] {
			t.Fatalf("cons lists %v, not both 0x%x and 0x%x", got, a.Session().ID(), c.Session().ID())
		}
		gone := c.Session().ID()
		c.Close()
		for {
			got, err := zktest.ConnectedSessions(ctx, b.Addr())
			if err != nil {
				t.Fatal(err)
			}
			if !got[gone] && got[a.Session().ID()] {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("cons still lists the closed session 0x%x: %v", gone, got)
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
}
