package semaphore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/semaphore"
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

	// At most two exports run at once, across every process.
	exports := semaphore.New(c, "/app/semaphores/export", 2)
	lease, err := exports.Acquire(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("held:", lease.Err() == nil)

	// Run the work under the lease's context: it ends if the lease is lost.
	export := func(ctx context.Context) error { return ctx.Err() }
	fmt.Println("export:", export(lease.Context()))
	lease.Unlock(ctx)

	// AcquireN takes several leases together, or none.
	both, err := exports.AcquireN(ctx, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = exports.TryAcquire(ctx)
	fmt.Println("a third while both are held:", errors.Is(err, semaphore.ErrNoLease))
	both.Unlock(ctx) // hands them all back
	// Output:
	// held: true
	// export: <nil>
	// a third while both are held: true
}
