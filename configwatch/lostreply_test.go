package configwatch_test

import (
	"testing"

	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/internal/testing/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// The configuration node, missing, is created with a lost reply: Publish
// gets through, with the ready flag and atomically.
func TestPublishThroughLostReplyOnNode(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		for _, opts := range [][]configwatch.Option{nil, {configwatch.WithAtomic()}} {
			path := zktest.UniquePath(t) + "/config"
			c, cut := recipetest.LostCreateOf(t, b, path)
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
