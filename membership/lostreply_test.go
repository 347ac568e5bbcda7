package membership_test

import (
	"context"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/testing/recipetest"
	"github.com/zkit-dev/zkit/membership"
	"github.com/zkit-dev/zkit/zktest"
)

// The group's node, missing, is created with a lost reply: Join gets
// through (creating a directory twice only answers "node exists"). A Join
// during a failover must never see an error that retrying would cure.
func TestJoinThroughLostReplyOnGroup(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		group := zktest.UniquePath(t) + "/group"
		c, cut := recipetest.LostCreateOf(t, b, group)
		m, err := membership.New(c, group).Join(ctx, "m1", []byte("x"))
		if err != nil {
			t.Fatalf("Join through a lost reply on the group's create: %v", err)
		}
		if !cut() {
			t.Fatal("the group's create never lost its reply")
		}
		entries, err := membership.New(b.Connect(t), group).List(ctx)
		if err != nil || len(entries) != 1 || entries[0].ID != "m1" {
			t.Fatalf("group after Join: %v, %v", entries, err)
		}
		if err := m.Leave(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// A Join cancelled while it waits to claim its node, whose create was
// applied but lost its reply, leaves no node.
func TestJoinCancelledAfterLostCreateReply(t *testing.T) {
	recipetest.RunKeptCancelAfterLostCreate(t, "m1", func(ctx context.Context, c *client.Client, dir string) error {
		m, err := membership.New(c, dir).Join(ctx, "m1", []byte("x"))
		if err != nil {
			return err
		}
		return m.Leave(ctx)
	})
}
