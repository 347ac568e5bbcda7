package rendezvous_test

import (
	"fmt"
	"testing"

	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/rendezvous"
	"github.com/zkit-dev/zkit/zktest"
)

// A master whose session has just expired publishes all the same: Publish
// needs no session, and a write cut off by the expiry, read back as not
// applied, is made again instead of failing as of unknown outcome.
func TestPublishRightAfterSessionExpiry(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		path := zrPath(t)
		launch, err := rendezvous.New(b.Connect(t), path).Create(ctx)
		if err != nil {
			t.Fatal(err)
		}
		worker := rendezvous.New(b.Connect(t), path)
		for i := range 5 {
			master := b.Connect(t)
			b.ExpireSession(t, master.Session())
			addr := fmt.Sprintf("10.0.0.%d:7000", i)
			if err := rendezvous.New(master, path).Publish(ctx, []byte(addr)); err != nil {
				t.Fatalf("Publish right after the master's session expired: %v", err)
			}
			if got, err := worker.Wait(ctx); err != nil || string(got) != addr {
				t.Fatalf("worker got %q, %v; want %s", got, err, addr)
			}
		}
		if launch.Err() != nil {
			t.Fatalf("the launch ended: %v", launch.Err())
		}
	})
}
