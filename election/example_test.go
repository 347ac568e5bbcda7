package election_test

import (
	"context"
	"fmt"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/zktest"
)

func ExampleNew() {
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

	e := election.New(c, "/app/election/scheduler", "host-a")
	term, err := e.Campaign(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("leading as", term.ID())

	// Lead under the term's context: it ends when leadership is lost.
	// Writes to ZooKeeper that only the leader may make are fenced.
	if _, err := term.Multi(ctx, client.CreateOp("/app/schedule", []byte("v1"), client.Persistent)); err != nil {
		fmt.Println(err)
	}

	// Anyone can ask who leads.
	leader, err := election.New(c, "/app/election/scheduler", "").Leader(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("leader:", leader.ID)

	term.Resign(ctx)
	<-term.Done()
	fmt.Println("ended:", context.Cause(term.Context()))
	// Output:
	// leading as host-a
	// leader: host-a
	// ended: zkit: released
}

// Observe follows the leader as it changes, "no leader" included.
func ExampleElection_Observe() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	feed := election.New(c, "/app/election/indexer", "").Observe(ctx)
	fmt.Println(<-feed.Values())

	term, err := election.New(c, "/app/election/indexer", "host-b").Campaign(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println((<-feed.Values()).ID)
	term.Resign(ctx)
	fmt.Println(<-feed.Values())
	// Output:
	// no leader
	// host-b
	// no leader
}
