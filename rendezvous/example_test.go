package rendezvous_test

import (
	"context"
	"fmt"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/rendezvous"
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
	connect := func() *client.Client {
		c, err := client.Connect(ctx, srv.Servers())
		if err != nil {
			panic(err)
		}
		return c
	}
	launcher, master, worker := connect(), connect(), connect()
	defer master.Close()
	defer worker.Close()

	// The launcher creates zr before it starts the master and the workers.
	zr, err := rendezvous.Create(ctx, launcher, "/jobs/42/zr")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("launcher holds zr:", zr.Err() == nil)

	// A worker waits for the master's address...
	addr := make(chan string)
	go func() {
		data, err := rendezvous.Wait(ctx, worker, "/jobs/42/zr")
		if err != nil {
			addr <- err.Error()
			return
		}
		addr <- string(data)
	}()
	// ...which the master publishes once it listens.
	if err := rendezvous.Publish(ctx, master, "/jobs/42/zr", []byte("10.0.0.7:7000")); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("worker got:", <-addr)

	// When the launcher ends, zr vanishes, and everyone watching sees it.
	feed := rendezvous.Watch(ctx, worker, "/jobs/42/zr")
	fmt.Println("filled:", (<-feed.Values()).Filled())
	launcher.Close()
	fmt.Println("exists:", (<-feed.Values()).Exists)
	// Output:
	// launcher holds zr: true
	// worker got: 10.0.0.7:7000
	// filled: true
	// exists: false
}

// Without a launcher, the master owns zr: it is published again by itself
// under each new session, until Remove.
func ExamplePublishEphemeral() {
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

	pub, err := rendezvous.PublishEphemeral(ctx, c, "/services/master", []byte("10.0.0.7:7000"))
	if err != nil {
		fmt.Println(err)
		return
	}
	data, _ := rendezvous.Wait(ctx, c, "/services/master")
	fmt.Println("workers see:", string(data))
	pub.Remove(ctx)
	// Output:
	// workers see: 10.0.0.7:7000
}
