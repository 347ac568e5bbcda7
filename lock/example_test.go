package lock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/lock"
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

	l := lock.New(c, "/app/locks/report")
	lease, err := l.Lock(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("held:", lease.Err() == nil)

	// A fenced write: applied only while the lock is held.
	if _, err := lease.Multi(ctx, client.CreateOp("/app/report", []byte("done"), client.Persistent)); err != nil {
		fmt.Println(err)
	}

	// Another attempt cannot take it meanwhile.
	_, err = lock.New(c, "/app/locks/report").TryLock(ctx)
	fmt.Println("second attempt:", errors.Is(err, lock.ErrLocked))

	lease.Unlock(ctx)
	<-lease.Done()
	fmt.Println("ended:", context.Cause(lease.Context()))
	// Output:
	// held: true
	// second attempt: true
	// ended: zkit: released
}

// Work that must stop when the lock is lost runs under the lease's context.
func ExampleLease_Context() {
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

	lease, err := lock.New(c, "/app/locks/job").Lock(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lease.Unlock(ctx)

	work := func(ctx context.Context) error {
		// ... long work, checking ctx ...
		return ctx.Err()
	}
	fmt.Println("work:", work(lease.Context()))
	fmt.Println("token > 0:", lease.Token() > 0)
	// Output:
	// work: <nil>
	// token > 0: true
}

// Several locks, all or nothing, in one order whatever the order given:
// two multi-locks over overlapping sets never deadlock.
func ExampleNewMulti() {
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

	transfer := lock.NewMulti(c, []string{"/app/locks/account-b", "/app/locks/account-a"})
	both, err := transfer.Lock(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("taken in order:", transfer.Paths())

	// Fenced by every part: applied only while both locks are held.
	if _, err := both.Multi(ctx, client.CreateOp("/app/transfer", []byte("a->b"), client.Persistent)); err != nil {
		fmt.Println(err)
	}
	both.Unlock(ctx)
	// Output:
	// taken in order: [/app/locks/account-a /app/locks/account-b]
}

// Goroutines of one process that share a Lock with combining hand it on
// without a round trip: here eight jobs run one at a time on one node of
// the queue, each with a token above the last.
func ExampleWithCombining() {
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

	l := lock.New(c, "/app/locks/jobs", lock.WithCombining(8)) // shared by the goroutines
	var (
		mu     sync.Mutex
		tokens []int64
		wg     sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			lease, err := l.Lock(ctx)
			if err != nil {
				fmt.Println(err)
				return
			}
			mu.Lock()
			tokens = append(tokens, lease.Token()) // appended in the order of holding
			mu.Unlock()
			lease.Unlock(ctx)
		})
	}
	wg.Wait()
	increasing := true
	for i := 1; i < len(tokens); i++ {
		increasing = increasing && tokens[i] > tokens[i-1]
	}
	fmt.Println("jobs:", len(tokens), "tokens increasing:", increasing)
	// Output:
	// jobs: 8 tokens increasing: true
}
