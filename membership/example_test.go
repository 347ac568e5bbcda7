package membership_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/membership"
	"github.com/zkit-dev/zkit/zktest"
)

func Example() {
	srv, err := zktest.StartServer("127.0.0.1:0") // the bundled reference server
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	workers := membership.New(c, "/app/workers")
	// Watch the group: every snapshot is the whole group, sorted by id.
	feed := workers.Watch(ctx)
	fmt.Println("watching:", len(<-feed.Values()), "members")

	a, err := workers.Join(ctx, "worker-a", []byte("10.0.0.1:8080"))
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := workers.Join(ctx, "worker-b", []byte("10.0.0.2:8080"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for group := range feed.Values() {
		if len(group) == 2 {
			for _, m := range group {
				fmt.Printf("%s at %s\n", m.ID, m.Data)
			}
			break
		}
	}

	// The same id twice is a conflict, never a takeover.
	_, err = workers.Join(ctx, "worker-a", nil)
	fmt.Println("second worker-a:", err != nil)

	b.Leave(ctx)
	group, _ := workers.List(ctx)
	fmt.Println("after leave:", len(group), "member,", group[0].ID)
	fmt.Println("present:", a.Err() == nil)
	// Output:
	// watching: 0 members
	// worker-a at 10.0.0.1:8080
	// worker-b at 10.0.0.2:8080
	// second worker-a: true
	// after leave: 1 member, worker-a
	// present: true
}

// A member serves while it is present, and again each time it is present
// again after a loss (a new session, a reconnect).
func ExampleMember_Present() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	m, err := membership.New(c, "/app/workers").Join(ctx, "worker-a", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	serve := func(ctx context.Context) {
		// ... serve until ctx ends: the member may no longer be present ...
	}
	for i := 0; i < 2; i++ {
		p, err := m.Present(ctx)
		if err != nil {
			fmt.Println("membership ended:", err)
			return
		}
		serve(p.Context())
		if i == 0 {
			m.Leave(ctx) // for the example: the next Present says why it ended
		}
	}
	// Output:
	// membership ended: zkit: present /app/workers/worker-a: released
}

// A write that must only happen while the member is present goes through
// its Multi: ZooKeeper refuses it once the member's node is gone.
func ExampleMember_Multi() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	m, err := membership.New(c, "/app/workers").Join(ctx, "worker-a", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := m.Multi(ctx, client.CreateOp("/app/shard-1", []byte("worker-a"), client.Persistent)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("claimed shard 1 as member", m.Token() > 0)
	m.Leave(ctx)
	_, err = m.Multi(ctx, client.CreateOp("/app/shard-2", []byte("worker-a"), client.Persistent))
	fmt.Println("after leave:", errors.Is(err, membership.ErrReleased))
	// Output:
	// claimed shard 1 as member true
	// after leave: true
}
