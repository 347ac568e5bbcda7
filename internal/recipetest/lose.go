package recipetest

import (
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// SessionLosses name the ways LosableClient makes a client lose its
// session, on both servers.
var SessionLosses = []string{"expired", "cut off"}

// LosableClient connects a client to b, and returns with it lose, which
// makes it lose its current session the way how (one of SessionLosses)
// says: "expired" has the server expire the session (the client learns of
// it when it reconnects); "cut off" blackholes the client's connection
// for longer than its session timeout (2 s, scaled), until the client
// gives the session up, then heals it.
func LosableClient(t *testing.T, b zktest.Backend, how string) (c *client.Client, lose func()) {
	t.Helper()
	switch how {
	case "expired":
		c = b.Connect(t)
		return c, func() { b.ExpireSession(t, c.Session()) }
	case "cut off":
		opts, cut, heal := b.Blackhole(t)
		c = b.Connect(t, append(opts, client.WithSessionTimeout(zktest.Scale(2*time.Second)))...)
		return c, func() {
			old := c.Session()
			cut()
			Within(t, old.Done(), "the client giving its session up")
			heal()
		}
	}
	t.Fatalf("recipetest: no session loss %q", how)
	return nil, nil
}
