package counter_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
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

	hits := counter.New(c, "/app/hits") // created on the first Add
	n, err := hits.Add(ctx, 1)
	fmt.Println("after one hit:", n, err)

	// Goroutines sharing the client combine their increments into fewer
	// writes; each still gets its own value.
	var mu sync.Mutex
	var got []int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := hits.Add(ctx, 1)
			if err != nil {
				fmt.Println(err)
				return
			}
			mu.Lock()
			got = append(got, n)
			mu.Unlock()
		}()
	}
	wg.Wait()
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	fmt.Println("four more hits returned:", got)

	swapped, err := hits.CompareAndSet(ctx, 5, 0)
	fmt.Println("reset from 5:", swapped, err)

	// A 4-byte counter (Curator's SharedCount layout) refuses to wrap.
	small := counter.New(c, "/app/small", counter.WithEncoding(counter.Int))
	if err := small.Set(ctx, 1<<31-1); err != nil {
		fmt.Println(err)
		return
	}
	_, err = small.Add(ctx, 1)
	fmt.Println("overflow:", errors.Is(err, counter.ErrOverflow))
	// Output:
	// after one hit: 1 <nil>
	// four more hits returned: [2 3 4 5]
	// reset from 5: true <nil>
	// overflow: true
}
