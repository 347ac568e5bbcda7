//go:build unix

package main

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// A waiting lock, elect or semaphore whose session is lost while it waits
// (the server paused for longer than its session timeout, but not the
// holder's) has lost its place in line, nothing else: it queues again under
// its next session, and runs CMD once the holder is done, within --wait,
// instead of failing with "no longer held" about something it never held.
// On real ZooKeeper the server is a JVM of the test's own, stopped with
// SIGSTOP; on the reference server, Pause.
func TestWaiterRidesOutSessionLoss(t *testing.T) {
	t.Parallel()
	t.Run("zookeeper", func(t *testing.T) {
		z := zktest.StartZooKeeper(t)
		waitersRideOutPause(t, z.Servers(), func(d time.Duration) {
			pid := z.PID(0) // the JVM this test started
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			defer syscall.Kill(pid, syscall.SIGCONT)
			time.Sleep(d)
		})
	})
	t.Run("reference", func(t *testing.T) {
		b := zktest.ReferenceBackend(t)
		waitersRideOutPause(t, b.Servers, func(d time.Duration) {
			b.Reference().Pause()
			defer b.Reference().Resume()
			time.Sleep(d)
		})
	})
}

// waitersRideOutPause runs a waiting zkit lock, elect and semaphore
// against servers behind holders of a client of the test's own, and
// pauses the server (pause) for longer than the waiters' session timeout.
func waitersRideOutPause(t *testing.T, servers []string, pause func(time.Duration)) {
	ctx := recipetest.Context(t)
	b := zktest.Backend{Name: "paused", Servers: servers}
	// The holders' session outlives the pause, and their holds tolerate
	// the suspension that comes with it.
	holders := b.Connect(t, client.WithSessionTimeout(zktest.Scale(30*time.Second)))
	type waiter struct {
		name    string
		dir     string // where its node queues
		holder  string // the holder's node there, if any
		old     string // its node before the pause
		release func()
		done    chan result
	}
	var ws []*waiter
	for _, name := range []string{"lock", "elect", "semaphore"} {
		path := zktest.UniquePath(t)
		w := &waiter{name: name, dir: path, done: make(chan result, 1)}
		args := []string{name, path}
		switch name {
		case "lock":
			l, err := lock.New(holders, path, lock.WithSuspendTolerance(time.Hour)).Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			w.release, w.holder = func() { l.Unlock(ctx) }, l.Node()
		case "elect":
			term, err := election.New(holders, path, "holder", election.WithSuspendTolerance(time.Hour)).Campaign(ctx)
			if err != nil {
				t.Fatal(err)
			}
			w.release, w.holder = func() { term.Resign(ctx) }, term.Node()
		case "semaphore":
			l, err := semaphore.New(holders, path, 1, semaphore.WithSuspendTolerance(time.Hour)).Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			w.release = func() { l.Unlock(ctx) }
			w.dir = path + "/locks" // the waiter holds the mutex, waiting for room
			args = append(args, "--max", "1")
		}
		go func() {
			w.done <- zkit(t, append(args, "--servers", strings.Join(servers, ","),
				"--session-timeout", zktest.Scale(2*time.Second).String(),
				"--wait", zktest.Scale(60*time.Second).String(), "--", "echo", "ran")...)
		}()
		recipetest.Eventually(t, name+": the waiter queued", func() bool {
			w.old = waiting(t, holders, w.dir, w.holder)
			return w.old != ""
		})
		ws = append(ws, w)
	}

	pause(zktest.Scale(5 * time.Second))

	for _, w := range ws {
		recipetest.Eventually(t, w.name+": the waiter queued again under its next session", func() bool {
			select {
			case r := <-w.done:
				t.Fatalf("zkit %s, waiting, ended when its session was lost: %+v", w.name, r)
			default:
			}
			now := waiting(t, holders, w.dir, w.holder)
			return now != "" && now != w.old
		})
	}
	for _, w := range ws {
		w.release()
		select {
		case r := <-w.done:
			if r.status != 0 || r.stdout != "ran\n" || r.stderr != "" {
				t.Errorf("zkit %s whose session was lost while it waited: %+v, want CMD run and status 0", w.name, r)
			}
		case <-ctx.Done():
			t.Fatalf("zkit %s does not run CMD once the holder is done", w.name)
		}
	}
}

// waiting returns the one node in dir other than holder's, or "" when
// there is not exactly one.
func waiting(t *testing.T, c *client.Client, dir, holder string) string {
	nodes := slices.DeleteFunc(recipetest.Children(t, c, dir), func(n string) bool { return dir+"/"+n == holder })
	if len(nodes) != 1 {
		return ""
	}
	return nodes[0]
}
