package chaos

import (
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/zktest"
)

// Scenario 7: a follower is paused (SIGSTOP) for longer than the clients'
// session timeout, resumed, then the leader is. Clients on the paused
// server move to the others; the leader's pause makes the followers elect
// a new one. Safety must hold throughout; sessions may be lost (a client
// cut off for longer than its timeout loses it), and are counted.
func serverPause(t *testing.T, e *env) Summary {
	const timeout = 4 * time.Second
	return underLoad(t, e, timeout, false, func(prog *Progress, sum *Summary) {
		for range pick(1, 3) {
			for _, role := range []string{"follower", "leader"} {
				leader, err := e.z.Leader()
				if err != nil {
					t.Fatal(err)
				}
				victim := leader
				if role == "follower" {
					victim = (leader + 1) % len(e.z.Servers())
				}
				pid := e.z.PID(victim) // a JVM zktest started
				at := prog.Now()
				if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
				sum.Faults++
				time.Sleep(zktest.Scale(timeout) * 5 / 4)
				if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
					t.Fatal(err)
				}
				waitProgress(t, prog, at)
				sum.Recovery = max(sum.Recovery, prog.Recovery(at))
				e.healthy(t)
				waitProgress(t, prog, prog.Now())
			}
		}
	})
}
