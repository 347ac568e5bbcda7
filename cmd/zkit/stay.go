package main

import (
	"context"
	"fmt"

	"github.com/zkit-dev/zkit/recipes"
)

// stay keeps a node present (a member, an instance, a published zr) until
// zkit is stopped, saying on stderr "zkit CMD: NODE GONE: why" when it is
// absent and "zkit CMD: NODE BACK" when it is present again. It fails when
// keeping the node ends for good (a conflict), with present's error, which
// names the node.
func (a *app) stay(ctx context.Context, present func(context.Context) (*recipes.Presence, error), cmd, node, gone, back string) error {
	for absent := false; ; absent = true {
		p, err := present(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			return lostf("%v", err)
		case absent:
			fmt.Fprintf(a.stderr, "zkit %s: %s %s\n", cmd, node, back)
		}
		select {
		case <-p.Done():
			fmt.Fprintf(a.stderr, "zkit %s: %s %s: %s\n", cmd, node, gone, oneLine(p.Err()))
		case <-ctx.Done():
			return nil
		}
	}
}
