package recipes_test

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

func TestMain(m *testing.M) { os.Exit(zktest.Main(m)) }

func connect(t *testing.T, servers []string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(30*time.Second))
	defer cancel()
	c, err := client.Connect(ctx, servers, client.WithSessionTimeout(zktest.Scale(10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func increment(data []byte, _ *client.Stat) ([]byte, error) {
	return binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(data)+1), nil
}

func TestUpdateLosesNoIncrement(t *testing.T) {
	run := func(t *testing.T, servers []string) {
		const writers, each = 8, 20
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
		defer cancel()
		admin := connect(t, servers)
		path := zktest.UniquePath(t)
		if err := admin.EnsurePath(ctx, path); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Set(ctx, path, make([]byte, 8), -1); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for range writers {
			c := connect(t, servers)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range each {
					if _, _, err := recipes.Update(ctx, c, path, increment, nil); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		data, _, err := admin.Get(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if got := binary.BigEndian.Uint64(data); got != writers*each {
			t.Fatalf("counter = %d, want %d", got, writers*each)
		}
		stop := errors.New("stop")
		if _, _, err := recipes.Update(ctx, admin, path, func([]byte, *client.Stat) ([]byte, error) { return nil, stop }, nil); err != stop {
			t.Fatalf("fn's error: got %v", err)
		}
	}
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) { run(t, b.Servers) })
}

// A set whose reply is lost after it was applied is reported, not retried.
func TestUpdateAmbiguousWrite(t *testing.T) {
	srv := zktest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
	defer cancel()
	c := connect(t, srv.Servers())
	if _, err := c.Create(ctx, "/n", make([]byte, 8), client.Persistent); err != nil {
		t.Fatal(err)
	}
	srv.DropReplyAfterCommit(func(op, path string) bool { return strings.HasPrefix(op, "setData") && path == "/n" })
	_, _, err := recipes.Update(ctx, c, "/n", increment, nil)
	if !client.IsOutcomeUnknown(err) {
		t.Fatalf("Update with a lost reply: %v, want outcome unknown", err)
	}
	data, _, err := c.Get(ctx, "/n")
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.BigEndian.Uint64(data); got != 1 {
		t.Fatalf("counter = %d after one ambiguous increment, want 1 (applied once, not retried)", got)
	}
}
