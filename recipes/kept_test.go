package recipes_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// Another process that writes to the kept node while this one adopts it
// again after a suspension (between the claim's read of the node and its
// write of the data an Update left for the next presence) is a conflict,
// as such a write is while the node is present: keeping ends with a
// *ConflictError and zkit deletes its own node. It ended with a plain
// "bad version" error instead, and left the node behind, owned by a
// session that nothing kept it for.
func TestKeepClaimRacedByForeignWrite(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		p := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(p.Dialer()), client.WithSessionTimeout(zktest.Scale(20*time.Second)))
		node := zktest.UniquePath(t) + "/kept"
		k, err := recipes.Keep(ctx, c, node, []byte("v1"), recipes.KeepOptions{})
		if err != nil {
			t.Fatal(err)
		}
		first := k.Presence()
		p.Blackhole() // suspended: the presence ends at once (no tolerance)
		p.ResetAll()
		recipetest.Eventually(t, "the presence ended", func() bool { return first.Err() != nil })
		if err := k.Update(ctx, []byte("v2")); err != nil { // kept for the next presence
			t.Fatal(err)
		}
		// Once reconnected, the claim reads the node (v1) and writes v2:
		// hold that write back while another process writes the node.
		p.SetLatency(zktest.Scale(time.Second))
		sent := p.Requests()
		p.Heal()
		recipetest.Eventually(t, "the claim's write sent", func() bool { return p.Requests() >= sent+3 })
		if _, err := admin.Set(ctx, node, []byte("foreign"), -1); err != nil {
			t.Fatal(err)
		}
		p.SetLatency(0)
		recipetest.Eventually(t, "keeping ended", func() bool {
			_, err := k.Present(ctx)
			return err != nil
		})
		if err := k.Err(); !errors.Is(err, recipes.ErrConflict) {
			t.Fatalf("Err after a foreign write during the claim: %v; want a conflict", err)
		}
		recipetest.Eventually(t, "the node deleted", func() bool {
			ok, _, err := admin.Exists(ctx, node)
			return err == nil && !ok
		})
	})
}
