package cache_test

import (
	"context"
	"fmt"

	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// A service mirrors its configuration tree, and reads its own write from
// the cache.
func ExampleOpenTree() {
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
	for _, p := range []string{"/config", "/config/db", "/config/workers"} {
		if _, err := c.Create(ctx, p, []byte("v1"), client.Persistent); err != nil {
			fmt.Println(err)
			return
		}
	}

	tree, err := cache.OpenTree(ctx, c, "/config")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tree.Close()
	snap := tree.Snapshot()
	n, _ := snap.Get("/config")
	fmt.Println(snap.Paths(), n.Children)

	st, err := c.Set(ctx, "/config/db", []byte("v2"), -1)
	if err != nil {
		fmt.Println(err)
		return
	}
	snap, err = tree.WaitFor(ctx, st.Mzxid) // read your write
	if err != nil {
		fmt.Println(err)
		return
	}
	db, _ := snap.Get("/config/db")
	fmt.Printf("%s version %d\n", db.Data, db.Stat.Version)
	// Output:
	// [/config /config/db /config/workers] [db workers]
	// v2 version 1
}

// Events reports the tree's nodes, then "initialized", then every change.
func ExampleCache_Events() {
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
	if _, err := c.Create(ctx, "/services", nil, client.Persistent); err != nil {
		fmt.Println(err)
		return
	}

	kids, err := cache.OpenChildren(ctx, c, "/services")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer kids.Close()
	events := kids.Events()
	fmt.Println((<-events).Type, (<-events).Type)

	if _, err := c.Create(ctx, "/services/api", []byte("10.0.0.1:80"), client.Persistent); err != nil {
		fmt.Println(err)
		return
	}
	ev := <-events
	fmt.Println(ev.Type, ev.Path, string(ev.Data))
	// Output:
	// created initialized
	// created /services/api 10.0.0.1:80
}
