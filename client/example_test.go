package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Connect, create a protected ephemeral-sequential node, and learn when the
// session that owns it is lost.
func ExampleConnect() {
	srv, err := zktest.StartServer("127.0.0.1:0") // the bundled reference server
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, srv.Servers(), client.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if err := c.EnsurePath(ctx, "/workers"); err != nil {
		log.Fatal(err)
	}
	node, err := c.CreateProtected(ctx, "/workers/w-", []byte("ready"), client.EphemeralSequential)
	if err != nil {
		log.Fatal(err)
	}
	_, name := client.SplitPath(node)
	_, rest, _ := client.ParseProtected(name)
	fmt.Println("created", rest)

	sess := c.Session()
	srv.ExpireSession(sess.ID())
	<-sess.Done()
	fmt.Println("lost:", client.IsSessionLost(sess.Err()))
	// Output:
	// created w-0000000000
	// lost: true
}

// Bad input is refused before anything is sent.
func ExampleInputError() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	_, err = c.Create(ctx, "/jobs//1", nil, client.Persistent)
	fmt.Println(err)
	// Output:
	// zkit: create "/jobs//1": empty node name (//)
}

// A member joins a group and counts it in the same round trip: the listing
// is taken right after the create, so it shows the new node and every
// node created before it.
func ExampleClient_CreateListed() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if err := c.EnsurePath(ctx, "/party"); err != nil {
		log.Fatal(err)
	}
	for _, name := range []string{"alice", "bob"} {
		_, listing, err := c.CreateListed(ctx, "/party/"+name, nil, client.Ephemeral)
		if err != nil {
			log.Fatal(err)
		}
		var members []string
		if listing != nil {
			members = listing.Children
		} else if members, _, err = c.Children(ctx, "/party"); err != nil { // none came: list
			log.Fatal(err)
		}
		fmt.Println(name, "joined;", len(members), "in the party")
	}
	// Output:
	// alice joined; 1 in the party
	// bob joined; 2 in the party
}

// Follow a subtree with a persistent recursive watch: read it, then apply
// the feed's events; after EventResync (a reconnect), read it again.
func ExampleClient_Watch() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	feed, err := c.Watch(ctx, "/services", client.Recursive)
	if err != nil {
		log.Fatal(err)
	}
	defer feed.Close()
	// ... read /services and below here: the feed has every change after
	// the watch was set.

	go func() { // another part of the program
		_, _ = c.Create(ctx, "/services", nil, client.Persistent)
		_, _ = c.Create(ctx, "/services/api", []byte("10.0.0.1"), client.Persistent)
		_, _ = c.Set(ctx, "/services/api", []byte("10.0.0.2"), -1)
	}()
	for ev := range feed.Events() {
		switch ev.Type {
		case client.EventResync:
			// Reconnected: what changed meanwhile was not reported. Read
			// /services again.
		default:
			fmt.Println(ev.Type, ev.Path)
		}
		if ev.Type == client.EventNodeDataChanged {
			break
		}
	}
	if err := feed.Err(); err != nil {
		// The feed ended: its session was lost (watch again on the next),
		// its reader fell behind (ErrWatchOverflow), or the client closed.
		log.Fatal(err)
	}
	// Output:
	// EventNodeCreated /services
	// EventNodeCreated /services/api
	// EventNodeDataChanged /services/api
}

// A subscriber that falls further behind than its buffer loses its
// subscription, not the client its memory: its channel is closed, and Err
// says why. Subscribe again, and read again what the events were about.
func ExampleWithSubscriptionBuffer() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers(), client.WithSubscriptionBuffer(2))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	sub := c.Subscribe()
	defer sub.Close()
	for _, path := range []string{"/a", "/b", "/c"} { // three watch events
		if _, _, _, err := c.ExistsW(ctx, path); err != nil {
			log.Fatal(err)
		}
		if _, err := c.Create(ctx, path, nil, client.Persistent); err != nil {
			log.Fatal(err)
		}
	}
	// Nobody read: the third event found the subscription full.
	_, open := <-sub.Events()
	fmt.Println("open:", open)
	fmt.Println(errors.Is(sub.Err(), client.ErrSubscriptionOverflow))
	fmt.Println(sub.Err())
	// Output:
	// open: false
	// true
	// zkit: subscription overflowed: its reader fell behind (2 events unread)
}

// Create a node and learn its Stat from the create's reply: its czxid is
// a fencing token, without a read.
func ExampleClient_CreateStat() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	_, st, err := c.CreateStat(ctx, "/leader", []byte("me"), client.Ephemeral)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Czxid == c.LastZxid(), st.EphemeralOwner == c.Session().ID())
	// Output: true true
}

// Read several nodes in one request; each read fails on its own.
func ExampleClient_MultiRead() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	_, _ = c.Create(ctx, "/a", []byte("1"), client.Persistent)

	rs, err := c.MultiRead(ctx, client.GetOp("/a"), client.GetOp("/b"), client.ChildrenOp("/"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %v %d\n", rs[0].Data, errors.Is(rs[1].Err, client.ErrNoNode), len(rs[2].Children))
	// Output: 1 true 2
}

// Add a server to an ensemble that runs with reconfigEnabled=true, as its
// super user. The new server must already run, started with the current
// configuration plus itself (see Reconfig). This example needs such an
// ensemble, so it is not run.
func ExampleClient_Reconfig() {
	ctx := context.Background()
	c, err := client.Connect(ctx, []string{"zk1:2181", "zk2:2181", "zk3:2181"},
		client.WithAuth("digest", []byte("super:secret")))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	cfg, _, err := c.Reconfig(ctx, client.ConfigChange{Add: []string{"server.4=zk4:2888:3888:participant;2181"}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s", cfg) // the new configuration, its version last
}

// A client that follows the ensemble's membership: on an ensemble with a
// dynamic configuration it learns every server from the one it is given,
// and moves as reconfigurations add and remove servers. On a server
// without one (the bundled reference server here) it keeps its servers.
func ExampleWithEnsembleTracker() {
	srv, err := zktest.StartServer("127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers(), client.WithEnsembleTracker())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(len(c.Servers()), "server")
	// Output: 1 server
}
