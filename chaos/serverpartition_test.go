package chaos

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/zktest"
)

// Scenario 11: the leader is cut from both followers while clients are
// connected to it and to the followers, with every recipe under load. The
// old leader loses its quorum within syncLimit and stops serving; the
// followers elect a new leader. Its clients' leases and terms must end
// before anyone on the majority side acquires or leads (the lock and
// election models check it), and their late fenced writes are refused (the
// fence). After the heal the old leader rejoins as a follower.
func leaderIsolated(t *testing.T, e *env) Summary {
	return isolatedUnderLoad(t, e, 10*time.Second, false, func(leader int) int { return leader })
}

// Scenario 12: a follower is cut from the other two. It leaves the quorum
// and closes its clients' connections; they move to the majority within
// their session timeout, so no session is lost, and every recipe goes on.
func followerIsolated(t *testing.T, e *env) Summary {
	return isolatedUnderLoad(t, e, 15*time.Second, true, func(leader int) int { return (leader + 1) % len(e.z.Servers()) })
}

// isolatedUnderLoad cuts the member victim picks (given the leader) from
// the others under load, until it has stopped serving and every recipe has
// made progress without it, then heals; once quick, four times long.
// Recovery is from the cut to that progress.
func isolatedUnderLoad(t *testing.T, e *env, timeout time.Duration, keepSessions bool, victim func(leader int) int) Summary {
	return underLoad(t, e, timeout, keepSessions, func(prog *Progress, sum *Summary) {
		for range pick(1, 4) {
			leader, err := e.z.Leader()
			if err != nil {
				t.Fatal(err)
			}
			i := victim(leader)
			cut := prog.Now()
			e.z.Isolate(i)
			t.Cleanup(e.z.Heal)
			sum.Faults++
			e.outOfQuorum(t, i)
			waitProgress(t, prog, prog.Now())
			sum.Recovery = max(sum.Recovery, prog.Recovery(cut))
			e.z.Heal()
			e.healthy(t)
			waitProgress(t, prog, prog.Now())
		}
	})
}

// Scenario 13 (long mode only): the leader's partition flaps, cut and
// healed every few hundred milliseconds for a minute. No violation, and
// every recipe makes progress once it stops. Quick mode leaves it out:
// under flapping, ZooKeeper 3.8.0 itself loses acknowledged writes in
// most runs (see docs/reliability.md), and such a run is skipped with the
// witness's proof (see underLoad) rather than judged.
func flappingPartition(t *testing.T, e *env) Summary {
	if !long {
		t.Skipf("long mode only (%s=1)", LongEnv)
	}
	const timeout = 10 * time.Second
	return underLoad(t, e, timeout, false, func(prog *Progress, sum *Summary) {
		t.Cleanup(e.z.Heal)
		end := time.Now().Add(time.Minute)
		for i := 0; time.Now().Before(end); i++ {
			leader, err := e.z.Leader()
			if err != nil {
				leader = i % len(e.z.Servers()) // mid-election: cut anyone
			}
			e.z.Isolate(leader)
			sum.Faults++
			time.Sleep(zktest.Scale(300 * time.Millisecond))
			e.z.Heal()
			time.Sleep(zktest.Scale(300 * time.Millisecond))
		}
		at := prog.Now()
		e.healthy(t)
		waitProgress(t, prog, at)
		sum.Recovery = max(sum.Recovery, prog.Recovery(at))
	})
}

// outOfQuorum waits until node i, cut from the others, has left the quorum
// and stopped serving its clients.
func (e *env) outOfQuorum(t *testing.T, i int) {
	t.Helper()
	waitFor(t, 30*time.Second, fmt.Sprintf("node %d stops serving", i), func() bool {
		_, err := e.z.Mode(i)
		return err != nil
	})
}
