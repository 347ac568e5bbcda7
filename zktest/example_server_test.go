package zktest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// A test gets its own in-process ZooKeeper with one call; no Java needed.
// Its clock and its faults are under the test's control.
func ExampleNewServer() {
	t := &exampleT{} // in a real test, pass the test's *testing.T
	defer t.cleanup()

	srv := zktest.NewServer(t) // on 127.0.0.1, closed when the test ends
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Servers(), client.WithSessionTimeout(4*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	c.Create(ctx, "/workers", nil, client.Persistent)
	me, _ := c.Create(ctx, "/workers/w-", []byte("alive"), client.EphemeralSequential)
	fmt.Println("created", me)

	// Expire the session as if its timeout had passed: its ephemeral
	// node goes and the client learns that its session is lost.
	sess := c.Session()
	srv.ExpireSession(sess.ID())
	<-sess.Done()

	kids, _, _ := c.Children(ctx, "/workers")
	fmt.Println("after expiry:", kids)
	// Output:
	// created /workers/w-0000000000
	// after expiry: []
}

// exampleT stands in for *testing.T, which examples do not get.
type exampleT struct {
	testing.TB
	cleanups []func()
}

func (t *exampleT) Helper()                           {}
func (t *exampleT) Cleanup(f func())                  { t.cleanups = append(t.cleanups, f) }
func (t *exampleT) Fatal(args ...any)                 { panic(fmt.Sprint(args...)) }
func (t *exampleT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

func (t *exampleT) cleanup() {
	for i := len(t.cleanups) - 1; i >= 0; i-- {
		t.cleanups[i]()
	}
}
