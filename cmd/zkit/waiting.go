package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// waitingDelay is how long a command waits its turn before it says what it
// waits for: a lock that is free is taken sooner, silently.
const waitingDelay = 500 * time.Millisecond

// sayWaiting says once on stderr, if it is a terminal, what the command
// waits for: describe tells it ("" while there is nothing to say yet; it
// is asked again). stop, called once the wait is over, ends it. Scripts
// (stderr not a terminal) see nothing.
func (a *app) sayWaiting(ctx context.Context, name string, describe func(context.Context) string) (stop func()) {
	if !isTerminal(a.stderr) {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for delay := waitingDelay; ; delay = 200 * time.Millisecond {
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
			if s := describe(ctx); s != "" && ctx.Err() == nil {
				fmt.Fprintf(a.stderr, "zkit %s: %s\n", name, s)
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

// queuePlace describes this session's place among the nodes of kinds in
// dir (a lock's, an election's), in queue order (recipes.SortNodes):
// "waiting for DIR: Nth in line, behind NODE". It is "" until the
// session's node is there, or when it is first.
func queuePlace(c *client.Client, dir, what string, kinds ...recipes.Kind) func(context.Context) string {
	return func(ctx context.Context) string {
		kids, _, err := c.Children(ctx, dir)
		if err != nil {
			return ""
		}
		nodes := recipes.SortNodes(kids, kinds...)
		sess := c.Session().ID()
		for i, n := range nodes {
			_, st, err := c.Exists(ctx, client.JoinPath(dir, n.Name))
			if err != nil || st == nil || st.EphemeralOwner != sess {
				continue
			}
			if i == 0 {
				return ""
			}
			return fmt.Sprintf("waiting for %s: %s in line, behind %s", what, ordinal(i+1), client.JoinPath(dir, nodes[i-1].Name))
		}
		return ""
	}
}

// ordinal is 1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st, ...
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// countIn describes a wait for others in dir (a semaphore's leases, a
// barrier's members) with say(n), n being dir's children but ignore.
func countIn(c *client.Client, dir string, ignore []string, say func(n int) string) func(context.Context) string {
	return func(ctx context.Context) string {
		kids, _, err := c.Children(ctx, dir)
		if err != nil {
			return ""
		}
		n := 0
		for _, k := range kids {
			if !slices.Contains(ignore, k) {
				n++
			}
		}
		return say(n)
	}
}
