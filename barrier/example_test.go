package barrier_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Three workers start a phase together and finish it together. (Each
// would normally be a process of its own; here they share one client.)
func ExampleNewDouble() {
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

	const workers = 3
	var in, out atomic.Int32
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := barrier.NewDouble(c, "/app/phase-1", workers)
			if err := d.Enter(ctx); err != nil {
				fmt.Println(err)
				return
			}
			in.Add(1) // ... the phase's work ...
			if err := d.Leave(ctx); err != nil {
				fmt.Println(err)
				return
			}
			out.Add(1)
		}()
	}
	wg.Wait()
	fmt.Println("entered:", in.Load(), "left:", out.Load())
	// Output:
	// entered: 3 left: 3
}

// A coordinator holds workers back until it is ready for them.
func ExampleNew() {
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

	gate := barrier.New(c, "/app/start")
	if err := gate.Set(ctx); err != nil {
		fmt.Println(err)
		return
	}
	started := make(chan struct{})
	go func() {
		if err := barrier.New(c, "/app/start").Wait(ctx); err != nil {
			fmt.Println(err)
		}
		close(started)
	}()
	// ... prepare the work ...
	fmt.Println("releasing the workers")
	if err := gate.Remove(ctx); err != nil {
		fmt.Println(err)
		return
	}
	<-started
	fmt.Println("workers started")
	// Output:
	// releasing the workers
	// workers started
}
