package counter_test

import (
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// The Add that creates the counter's node learns the node's czxid (which
// resolves a later write whose reply is lost) from the create's reply, not
// from a read after it: three requests (a read finding no node, the create,
// and the next Add's write), where reading it back took four.
func TestCreateLearnsCzxidWithoutARead(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := zktest.UniquePath(t) + "/count"
		if err := b.Connect(t).EnsurePath(ctx, path[:len(path)-len("/count")]); err != nil {
			t.Fatal(err)
		}
		proxy := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(proxy.Dialer()))
		k := counter.New(c, path)
		sent := proxy.Requests()
		if v, err := k.Add(ctx, 5); err != nil || v != 5 {
			t.Fatalf("Add(5) on a missing node = %d, %v", v, err)
		}
		flusherStopped(t, c, path)
		if v, err := k.Add(ctx, 1); err != nil || v != 6 {
			t.Fatalf("Add(1) = %d, %v", v, err)
		}
		if n := proxy.Requests() - sent; n != 3 {
			t.Fatalf("%d requests for the first two Adds, want 3", n)
		}
		_, st, err := c.Exists(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if got := counter.Czxid(c, path); got != st.Czxid {
			t.Fatalf("the counter knows czxid %#x, the node has %#x", got, st.Czxid)
		}
	})
}
