package configwatch_test

import (
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// The configuration node, missing, is created with a lost reply: Publish
// gets through, with the ready flag (which creates the node on its own)
// and atomically (which creates it first in its transaction).
func TestPublishThroughLostReplyOnNode(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		for _, atomic := range []bool{false, true} {
			path := zktest.UniquePath(t) + "/config"
			var (
				c    *client.Client
				cut  func() bool
				opts []configwatch.Option
			)
			if atomic {
				opts = append(opts, configwatch.WithAtomic())
				c, cut = lostMultiCreateOf(t, b, path)
			} else {
				c, cut = recipetest.LostCreateOf(t, b, path)
			}
			if _, err := configwatch.New(c, path, configwatch.Raw, opts...).Publish(ctx, configwatch.Values{"k": []byte("v")}); err != nil {
				t.Fatalf("Publish through a lost reply on the node's create: %v", err)
			}
			if !cut() {
				t.Fatal("the configuration node's create never lost its reply")
			}
			snap, err := configwatch.New(b.Connect(t), path, configwatch.Raw).Get(ctx)
			if err != nil || string(snap.Value["k"]) != "v" {
				t.Fatalf("after Publish: %v, %v", snap.Value, err)
			}
		}
	})
}

// lostMultiCreateOf is recipetest.LostCreateOf for a multi whose first op
// creates path.
func lostMultiCreateOf(t *testing.T, b zktest.Backend, path string) (c *client.Client, cut func() bool) {
	t.Helper()
	p := zktest.NewProxy(t, b.Addr())
	p.CutAfterNextMultiCreate(path)
	c = b.Connect(t, client.WithDialer(p.Dialer()))
	sub := c.Subscribe()
	t.Cleanup(sub.Close)
	return c, func() bool {
		return recipetest.WaitEventFor(t, sub, zktest.Scale(5*time.Second), func(ev client.Event) bool {
			return ev.State == client.StateSuspended
		})
	}
}
