package rendezvous_test

import (
	"context"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
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

// Create and PublishEphemeral cancelled while they wait to claim zr,
// whose create was applied but lost its reply, leave no zr.
func TestCancelAfterLostCreateReply(t *testing.T) {
	t.Run("create", func(t *testing.T) {
		recipetest.RunKeptCancelAfterLostCreate(t, "zr", func(ctx context.Context, c *client.Client, dir string) error {
			l, err := rendezvous.New(c, dir+"/zr").Create(ctx)
			if err != nil {
				return err
			}
			return l.Remove(ctx)
		})
	})
	t.Run("publish", func(t *testing.T) {
		recipetest.RunKeptCancelAfterLostCreate(t, "zr", func(ctx context.Context, c *client.Client, dir string) error {
			p, err := rendezvous.New(c, dir+"/zr").PublishEphemeral(ctx, []byte("master:1"))
			if err != nil {
				return err
			}
			return p.Remove(ctx)
		})
	})
}
