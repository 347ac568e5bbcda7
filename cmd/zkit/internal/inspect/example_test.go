package inspect_test

import (
	"context"
	"fmt"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/inspect"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
)

func ExampleInspect() {
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

	lease, err := lock.New(c, "/app/locks/report").Lock(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lease.Unlock(ctx)

	r, err := inspect.Inspect(ctx, c, "/app/locks/report")
	if err != nil {
		fmt.Println(err)
		return
	}
	holder := r.Held()[0]
	fmt.Println("kind:", r.Kind)
	fmt.Println("held by this session:", holder.Session == c.Session().ID())
	fmt.Println("token:", holder.Token == lease.Token())
	fmt.Println("waiting:", len(r.Queued()))
	// Output:
	// kind: lock
	// held by this session: true
	// token: true
	// waiting: 0
}
