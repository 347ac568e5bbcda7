package election_test

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// A leader-only job: campaign with a context that bounds the wait to lead,
// then run the job under the term's context, which is independent of it
// and ends when leadership is lost (or on Resign). Campaign again after a
// lost term to stand for the next one.
func ExampleTerm_Context() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	c, err := client.Connect(context.Background(), srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	campaignCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	term, err := election.New(c, "/app/election/compactor", "host-c").Campaign(campaignCtx)
	cancel() // ends the wait only: the term goes on
	if err != nil {
		fmt.Println(err)
		return
	}
	jobDone := make(chan error, 1)
	go func() { jobDone <- compact(term.Context()) }()

	// Another process deletes the leader's node (or its session expires):
	// the term ends, and the job with it.
	admin, err := client.Connect(context.Background(), srv.Servers())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer admin.Close()
	if err := admin.Delete(context.Background(), term.Node(), -1); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("job:", <-jobDone)
	fmt.Println("lost:", errors.Is(term.Err(), election.ErrLost))
	// Output:
	// job: context canceled
	// lost: true
}

// compact stands for work only the leader may do: it runs until ctx ends.
func compact(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// Run leads again and again, as Curator's LeaderSelector with
// autoRequeue: lead runs with each term won, its context ends when the
// term is lost, and the candidate campaigns again afterwards.
func ExampleElection_Run() {
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

	ctx, stop := context.WithCancel(ctx)
	terms := 0
	e := election.New(c, "/app/election/reports", "host-a", election.WithRequeuePause(10*time.Millisecond))
	err = e.Run(ctx, func(ctx context.Context, term *election.Term) error {
		terms++
		fmt.Println("term", terms, "as", term.ID())
		// ... lead under ctx; return nil to give the term up and rejoin ...
		if terms == 2 {
			stop() // a clean stop: Run resigns and returns nil
		}
		return nil
	})
	fmt.Println("stopped:", err)
	// Output:
	// term 1 as host-a
	// term 2 as host-a
	// stopped: <nil>
}

// Requeue steps down and campaigns again at the back in one transaction:
// here two hosts take turns, each leading twice.
func ExampleTerm_Requeue() {
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

	const dir = "/app/election/rotation"
	a := election.New(c, dir, "host-a")
	b := election.New(c, dir, "host-b")
	term, err := a.Campaign(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	terms := make(chan *election.Term)
	go func() {
		t, err := b.Campaign(ctx)
		if err != nil {
			fmt.Println(err)
		}
		terms <- t
	}()
	// Wait until host-b is queued behind host-a.
	for {
		names, _, changed, err := c.ChildrenW(ctx, dir)
		if err != nil {
			fmt.Println(err)
			return
		}
		if len(names) == 2 {
			break
		}
		<-changed
	}
	for range 4 {
		fmt.Println("leading:", term.ID())
		mine := term
		go func() {
			// Hand over to the next in line and queue behind it.
			t, err := mine.Requeue(ctx)
			if err != nil {
				fmt.Println(err)
			}
			terms <- t
		}()
		term = <-terms
	}
	term.Resign(ctx)
	(<-terms).Resign(ctx)
	// Output:
	// leading: host-a
	// leading: host-b
	// leading: host-a
	// leading: host-b
}

// Participants lists the candidates in line order, the leader first, as
// Curator's LeaderLatch getParticipants does.
func ExampleElection_Participants() {
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

	const dir = "/app/election/indexer"
	term, err := election.New(c, dir, "host-a").Campaign(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	waiting, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		election.New(c, dir, "host-b").Campaign(waiting) // waits behind host-a
	}()
	// Wait until host-b is in line.
	for {
		names, _, changed, err := c.ChildrenW(ctx, dir)
		if err != nil {
			fmt.Println(err)
			return
		}
		if len(names) == 2 {
			break
		}
		<-changed
	}
	ps, err := election.New(c, dir, "").Participants(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range ps {
		fmt.Println(p.ID, "leader:", p.Leader)
	}
	cancel() // host-b gives up
	<-done
	term.Resign(ctx)
	// Output:
	// host-a leader: true
	// host-b leader: false
}

// A leader changes what it publishes without resigning, as etcd's
// Proclaim does: here the address it serves on.
func ExampleTerm_Proclaim() {
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

	const dir = "/app/election/api"
	term, err := election.New(c, dir, "10.0.0.1:8080").Campaign(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	// It moved to another port: publish it, and lead on.
	if err := term.Proclaim(ctx, "10.0.0.1:9090"); err != nil {
		fmt.Println(err)
		return
	}
	l, err := election.New(c, dir, "").Leader(ctx)
	fmt.Println("leader:", l.ID, err)
	fmt.Println("same term:", l.Token == term.Token(), term.Err())

	term.Resign(ctx)
	// Once the term has ended, nothing is published.
	err = term.Proclaim(ctx, "10.0.0.1:7070")
	fmt.Println("after Resign:", errors.Is(err, election.ErrReleased))
	// Output:
	// leader: 10.0.0.1:9090 <nil>
	// same term: true <nil>
	// after Resign: true
}
