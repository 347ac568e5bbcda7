package rwlock_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/rwlock"
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

	// Two readers hold the lock together...
	r1, _ := rwlock.New(c, "/app/locks/config").RLock(ctx)
	r2, err := rwlock.New(c, "/app/locks/config").TryRLock(ctx)
	fmt.Println("second reader:", err)

	// ...and keep writers out.
	writer := rwlock.New(c, "/app/locks/config")
	_, err = writer.TryLock(ctx)
	fmt.Println("writer while reading:", errors.Is(err, rwlock.ErrLocked))

	r1.Unlock(ctx)
	r2.Unlock(ctx)
	w, err := writer.Lock(ctx)
	fmt.Println("writer:", err)

	// The same RWLock cannot read while it writes: that would deadlock.
	_, err = writer.RLock(ctx)
	fmt.Println("downgrade:", errors.Is(err, rwlock.ErrDowngrade))
	w.Unlock(ctx)
	// Output:
	// second reader: <nil>
	// writer while reading: true
	// writer: <nil>
	// downgrade: true
}
