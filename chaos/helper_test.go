package chaos

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/lock"
)

// helperEnv, when set, makes the test binary run as a helper process
// instead of running tests: scenario 6 starts it, and pauses it.
const helperEnv = "ZKIT_CHAOS_HELPER"

// The helper's settings, passed in its environment.
const (
	helperServers = "ZKIT_CHAOS_SERVERS" // comma-separated
	helperTimeout = "ZKIT_CHAOS_TIMEOUT" // session timeout
	helperLock    = "ZKIT_CHAOS_LOCK"    // lock path
	helperData    = "ZKIT_CHAOS_DATA"    // node for the guarded writes
	helperFence   = "ZKIT_CHAOS_FENCE"   // the fence's address
)

func runHelper(role string) int {
	if role != "lockholder" {
		fmt.Fprintf(os.Stderr, "chaos helper: unknown role %q\n", role)
		return 2
	}
	if err := lockHolder(); err != nil {
		fmt.Fprintf(os.Stderr, "chaos helper: %v\n", err)
		return 1
	}
	return 0
}

// lockHolder takes the lock, says so on stdout ("held TOKEN"), then writes
// with its token, forever, to the fence and to ZooKeeper (a Multi guarded
// by its lock node), printing each verdict. It never checks whether it
// still holds the lock: it is the client that a pause at the wrong moment
// turns into a stale holder, and only fencing stops its writes. It exits
// when the fence or its stdout goes away.
func lockHolder() error {
	timeout, err := time.ParseDuration(os.Getenv(helperTimeout))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, strings.Split(os.Getenv(helperServers), ","), client.WithSessionTimeout(timeout))
	if err != nil {
		return err
	}
	defer c.Close()
	lease, err := lock.New(c, os.Getenv(helperLock)).Lock(ctx)
	if err != nil {
		return err
	}
	fence, err := net.Dial("tcp", os.Getenv(helperFence))
	if err != nil {
		return err
	}
	replies := bufio.NewReader(fence)
	fmt.Printf("held %d\n", lease.Token())
	data := os.Getenv(helperData)
	for i := 0; ; i++ {
		if _, err := fmt.Fprintf(fence, "%d\n", lease.Token()); err != nil {
			return nil
		}
		verdict, err := replies.ReadString('\n')
		if err != nil {
			return nil
		}
		fmt.Printf("fence %s", verdict)
		wctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = c.Multi(wctx, lease.Guard(), client.SetOp(data, fmt.Appendf(nil, "helper %d", i), -1))
		cancel()
		if err == nil {
			fmt.Println("zk ok")
		} else {
			fmt.Printf("zk refused: %v\n", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
