package membership_test

import (
	"context"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
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

// An Update whose reply is lost (applied, the connection broken right
// after) is settled by reading the node back: it returns nil, and the
// member, tolerant of the blip, stays present with the new data. Writing
// again from the old version would take its own write for another
// process's and end the membership with a conflict. So with empty data
// (nil), which looked like no write pending: the Update returned a
// *ConflictError.
func TestUpdateThroughLostReply(t *testing.T) {
	for name, data := range map[string][]byte{"data": []byte("v2"), "empty": nil} {
		t.Run(name, func(t *testing.T) {
			zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
				ctx := recipetest.Context(t)
				admin := b.Connect(t)
				path := groupPath(t, admin)
				p := zktest.NewProxy(t, b.Addr())
				c := b.Connect(t, client.WithDialer(p.Dialer()))
				sub := c.Subscribe()
				defer sub.Close()
				m, err := membership.New(c, path, membership.WithSuspendTolerance(time.Hour)).Join(ctx, "w", []byte("v1"))
				if err != nil {
					t.Fatal(err)
				}
				p.CutAfterNextRequest()
				if err := m.Update(ctx, data); err != nil {
					t.Fatalf("Update whose reply was lost: %v", err)
				}
				if !recipetest.WaitEventFor(t, sub, zktest.Scale(5*time.Second), func(ev client.Event) bool {
					return ev.State == client.StateSuspended
				}) {
					t.Fatal("the Update's reply was not lost")
				}
				eventuallyList(t, admin, path, "w="+string(data))
				if err := m.Err(); err != nil {
					t.Fatalf("the member after the Update: %v", err)
				}
				if err := m.Leave(ctx); err != nil {
					t.Fatal(err)
				}
			})
		})
	}
}

// An Update whose outcome stayed unknown (applied, its reply lost, its
// context ended before it could read the node back) is the member's own
// write. The next Update, made while the link is still down, settles it
// and writes over it: it returns nil, and the member stays present with
// the new data. Taking the first write for another process's made the
// second Update return a ConflictError, or, when its own write lost its
// reply too, end the membership for good.
func TestUpdateAfterUnsettledUpdate(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		path := groupPath(t, admin)
		p := zktest.NewProxy(t, b.Addr())
		c := b.Connect(t, client.WithDialer(p.Dialer()), client.WithSessionTimeout(zktest.Scale(10*time.Second)))
		m, err := membership.New(c, path, membership.WithSuspendTolerance(time.Hour)).Join(ctx, "w", []byte("v1"))
		if err != nil {
			t.Fatal(err)
		}
		// v2 reaches the server; its reply, held back by the latency, is
		// dropped by the partition.
		p.SetLatency(zktest.Scale(time.Second))
		ctx1, cancel1 := context.WithCancel(ctx)
		defer cancel1()
		first := make(chan error, 1)
		go func() { first <- m.Update(ctx1, []byte("v2")) }()
		recipetest.Eventually(t, "the first Update applied", func() bool {
			data, _, err := admin.Get(ctx, m.Node())
			return err == nil && string(data) == "v2"
		})
		p.Blackhole()
		p.SetLatency(0)
		cancel1()
		if err := <-first; err == nil {
			t.Fatal("the first Update returned nil, its reply was not lost")
		}
		sent := p.Requests()
		second := make(chan error, 1)
		go func() { second <- m.Update(ctx, []byte("v3")) }()
		recipetest.Eventually(t, "the second Update under way", func() bool { return p.Requests() > sent })
		p.Heal()
		if err := <-second; err != nil {
			t.Fatalf("Update after an unsettled Update: %v", err)
		}
		eventuallyList(t, admin, path, "w=v3")
		if err := m.Err(); err != nil {
			t.Fatalf("the member after the Updates: %v", err)
		}
		if err := m.Leave(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
