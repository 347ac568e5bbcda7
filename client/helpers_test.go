package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// connect opens a client to servers and closes it when the test ends.
func connect(t *testing.T, servers []string, opts ...client.Option) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(30*time.Second))
	defer cancel()
	c, err := client.Connect(ctx, servers, opts...)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
	t.Cleanup(cancel)
	return ctx
}

// nextState reads sub until a state change arrives, skipping watch events.
func nextState(t *testing.T, sub *client.Subscription, within time.Duration) client.Event {
	t.Helper()
	deadline := time.After(zktest.Scale(within))
	for {
		select {
		case ev, ok := <-sub.Events():
			require.True(t, ok, "subscription ended")
			if ev.State != client.StateNone {
				return ev
			}
		case <-deadline:
			t.Fatalf("no state change within %v", within)
		}
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(within))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
