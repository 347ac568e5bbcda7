package chaos

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// Scenario 6: a client process holding the lock is paused (SIGSTOP) for
// longer than its session timeout while it writes, then resumed. Its
// session has expired and another client holds the lock and has written;
// the resumed process goes on writing with its old token, as a process
// paused by a GC or a VM migration would. Not one of those stale writes
// may be accepted: the fence refuses them, and ZooKeeper refuses its
// guarded writes (its lock node is gone).
func processPause(t *testing.T, e *env) Summary {
	const timeout = 2 * time.Second
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	admin := e.admin(t)
	prog := NewProgress()
	sum := Summary{}
	var loads []*lockLoad
	staleRefused := 0
	for range pick(1, 5) {
		ctx := testContext(t, 2*time.Minute)
		const helperID = 0
		c := e.worker(t, 1, 10*time.Second)
		l := newLockLoad(t, admin, "lock", []*worker{c}, 0, NewHistory(), prog)
		loads = append(loads, l)
		addr, stopFence, err := l.fence.Serve(l.h, helperID)
		if err != nil {
			t.Fatal(err)
		}
		defer stopFence()

		// The helper: this test binary, run as a lock holder.
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), helperEnv+"=lockholder",
			helperServers+"="+strings.Join(e.z.Servers(), ","),
			helperTimeout+"="+zktest.Scale(timeout).String(),
			helperLock+"="+l.dir, helperData+"="+l.data, helperFence+"="+addr)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		call := l.h.Invoke(helperID, LockInput{Op: Acquire})
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		t.Cleanup(func() {
			syscall.Kill(pid, syscall.SIGKILL) // the helper we started, by its PID
			cmd.Wait()
		})
		lines := bufio.NewScanner(out)
		if !lines.Scan() || !strings.HasPrefix(lines.Text(), "held ") {
			t.Fatalf("helper: %q, want held TOKEN", lines.Text())
		}
		token, _ := strconv.ParseInt(strings.TrimPrefix(lines.Text(), "held "), 10, 64)
		call.Return(LockOutput{Token: token})
		heldAt := l.h.Now()
		var zkOK, zkRefused atomic.Int64
		go func() {
			for lines.Scan() {
				switch {
				case lines.Text() == "zk ok":
					zkOK.Add(1)
				case strings.HasPrefix(lines.Text(), "zk refused"):
					zkRefused.Add(1)
				}
			}
		}()
		waitFor(t, 20*time.Second, "the helper writes", func() bool { return l.fence.Token(token).Accepted >= 3 && zkOK.Load() >= 3 })

		// The contender queues; the helper is paused past its timeout.
		got := make(chan *held, 1)
		go func() { got <- takeOrNil(t, ctx, l, c, false) }()
		waitFor(t, 20*time.Second, "the contender queues", func() bool { return len(children(t, admin, l.dir)) == 2 })
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		sum.Faults++
		paused := time.Now()
		hd := waitHeld(t, got, "the contender, once the paused helper's session expired")
		sum.Recovery = max(sum.Recovery, time.Since(paused))
		hd.write(ctx) // the fence and the data node now carry the contender's token
		_, st, err := syncedGet(ctx, admin, l.data)
		if err != nil {
			t.Fatal(err)
		}
		before := l.fence.Token(token)
		zkBefore := zkRefused.Load()
		time.Sleep(time.Until(paused.Add(2 * zktest.Scale(timeout))))
		if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		// The resumed helper writes on with its old token.
		waitFor(t, 30*time.Second, "the resumed helper tries 10 more writes", func() bool {
			tc := l.fence.Token(token)
			return tc.Accepted+tc.Refused >= before.Accepted+before.Refused+10 && zkRefused.Load() >= zkBefore+10
		})
		after := l.fence.Token(token)
		if after.Accepted != before.Accepted {
			t.Errorf("the fence accepted %d stale writes", after.Accepted-before.Accepted)
			sum.Violations += after.Accepted - before.Accepted
		}
		_, st2, err := syncedGet(ctx, admin, l.data)
		if err != nil {
			t.Fatal(err)
		}
		if st2.Version != st.Version {
			t.Errorf("ZooKeeper accepted %d stale guarded writes", st2.Version-st.Version)
			sum.Violations += int(st2.Version - st.Version)
		}
		staleRefused += after.Refused - before.Refused + int(zkRefused.Load()-zkBefore)
		syscall.Kill(pid, syscall.SIGKILL)
		cmd.Wait()
		// The helper never saw its loss: its hold ended somewhere between
		// its last write and the resume.
		l.h.Record(helperID, LockInput{Op: Release, Token: token}, LockOutput{}, heldAt, l.h.At(time.Now()))
		hd.release()
	}
	for _, l := range loads {
		sum.Ops += l.h.Len()
		sum.Violations += checkHistory(t, l.name, l.h, LockModel)
	}
	sum.Recipes = []string{"lock"}
	sum.Held = fmt.Sprintf("0 stale writes accepted; %d stale writes refused (fence and guard) after the resume", staleRefused)
	return sum
}

// syncedGet reads path after a sync: the admin client may be connected to
// a server that has not yet applied a write made through another.
func syncedGet(ctx context.Context, c *client.Client, path string) ([]byte, *client.Stat, error) {
	if err := c.Sync(ctx, path); err != nil {
		return nil, nil, err
	}
	return c.Get(ctx, path)
}
