package rendezvous_test

import (
	"testing"

	"github.com/zkit-dev/zkit/internal/testing/recipetest"
	"github.com/zkit-dev/zkit/rendezvous"
	"github.com/zkit-dev/zkit/zktest"
)

// zr's parent, missing, is created with a lost reply: Create and
// PublishEphemeral get through.
func TestLostReplyOnParent(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		for _, publish := range []bool{false, true} {
			parent := zktest.UniquePath(t) + "/jobs"
			c, cut := recipetest.LostCreateOf(t, b, parent)
			r := rendezvous.New(c, parent+"/zr")
			var err error
			if publish {
				_, err = r.PublishEphemeral(ctx, []byte("master:1"))
			} else {
				_, err = r.Create(ctx)
			}
			if err != nil {
				t.Fatalf("publish=%v through a lost reply on the parent's create: %v", publish, err)
			}
			if !cut() {
				t.Fatal("the parent's create never lost its reply")
			}
		}
	})
}
