package recipetest

import (
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// LostCreateOf returns a client whose next create of exactly path is
// applied by the server but loses its reply (the connection breaks right
// after it), for recipes that create a directory or a parent on the way
// to their own nodes. cut reports, at the end of the test, whether that
// happened: a test that passes only because the cut never fired proves
// nothing.
func LostCreateOf(t *testing.T, b zktest.Backend, path string) (c *client.Client, cut func() bool) {
	t.Helper()
	p := zktest.NewProxy(t, b.Addr())
	p.CutAfterCreateOf(path)
	c = b.Connect(t, client.WithDialer(p.Dialer()))
	sub := c.Subscribe()
	t.Cleanup(sub.Close)
	return c, func() bool {
		return WaitEventFor(t, sub, zktest.Scale(5*time.Second), func(ev client.Event) bool {
			return ev.State == client.StateSuspended
		})
	}
}
