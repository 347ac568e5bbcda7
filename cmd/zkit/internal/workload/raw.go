package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/zkit-dev/zkit/client"
)

// Raw is W4_createdelete through zkit's client: each client creates and
// then deletes its own persistent znode, in a loop. It is the raw write
// baseline every recipe's figures are read against.
func Raw() Spec {
	return Spec{Workload: "W4_createdelete", Impl: "zkit.raw", Setup: func(ctx context.Context, p Point) (*Instance, error) {
		cs, path, closeAll, err := connectAt(ctx, p, "raw")
		if err != nil {
			return nil, err
		}
		return &Instance{
			Op: func(ctx context.Context, i int) (time.Duration, error) {
				c, node := cs[i%len(cs)], fmt.Sprintf("%s/%d", path, i)
				t0 := time.Now()
				if _, err := c.Create(ctx, node, nil, client.Persistent); err != nil {
					return 0, err
				}
				err := c.Delete(ctx, node, -1)
				return time.Since(t0), err
			},
			Close: closeAll,
		}, nil
	}}
}
