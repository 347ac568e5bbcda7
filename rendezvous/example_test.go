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
	launch, err := rendezvous.New(launcher, "/jobs/42/zr").Create(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("launcher holds zr:", launch.Err() == nil)

	// A worker waits for the master's address...
	zr := rendezvous.New(worker, "/jobs/42/zr")
	addr := make(chan string)
	go func() {
		data, err := zr.Wait(ctx)
		if err != nil {
			addr <- err.Error()
			return
		}
		addr <- string(data)
	}()
	// ...which the master publishes once it listens.
	if err := rendezvous.New(master, "/jobs/42/zr").Publish(ctx, []byte("10.0.0.7:7000")); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("worker got:", <-addr)

	// When the launcher ends, zr vanishes, and everyone watching sees it.
	feed := zr.Watch(ctx)
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
func ExampleRendezvous_PublishEphemeral() {
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

	zr := rendezvous.New(c, "/services/master")
	pub, err := zr.PublishEphemeral(ctx, []byte("10.0.0.7:7000"))
	if err != nil {
		fmt.Println(err)
		return
	}
	data, _ := zr.Wait(ctx)
	fmt.Println("workers see:", string(data))
	pub.Remove(ctx)
	// Output:
	// workers see: 10.0.0.7:7000
}
