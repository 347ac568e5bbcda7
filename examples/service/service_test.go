package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/zktest"
)

// runMainEnv makes the test binary run the service itself (TestSIGTERM).
const runMainEnv = "ZKIT_EXAMPLE_SERVICE_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(zktest.Main(m))
}

// instance is one Service of a test, on a client of its own.
type instance struct {
	c    *client.Client
	svc  *Service
	stop context.CancelFunc
	done chan struct{} // closed when Run has returned
	err  error         // what Run returned
}

func start(t *testing.T, b zktest.Backend, root, id string) *instance {
	c := b.Connect(t)
	ctx, stop := context.WithCancel(context.Background())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc := New(c, root, discovery.Instance{ID: id, Address: "127.0.0.1", Port: 8080}, log)
	in := &instance{c: c, svc: svc, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(in.done)
		in.err = svc.Run(ctx)
	}()
	t.Cleanup(func() { stop(); <-in.done })
	return in
}

// setup gives a test its context (ending with the test, within a
// deadline), an admin client, and a root holding the settings (a round
// every 20ms) and the work node.
func setup(t *testing.T, b zktest.Backend) (ctx context.Context, admin *client.Client, root string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
	t.Cleanup(cancel)
	admin = b.Connect(t)
	root = zktest.UniquePath(t)
	settings := configwatch.New(admin, root+"/config", configwatch.Raw)
	if _, err := settings.Publish(ctx, configwatch.Values{"interval_ms": []byte("20")}); err != nil {
		t.Fatal(err)
	}
	if err := admin.EnsurePath(ctx, root+"/work/assignment"); err != nil {
		t.Fatal(err)
	}
	return ctx, admin, root
}

// awaitAssignment waits until the recorded assignment satisfies ok.
func awaitAssignment(t *testing.T, ctx context.Context, c *client.Client, root string, ok func(Assignment) bool) Assignment {
	t.Helper()
	for {
		data, _, changed, err := c.GetW(ctx, root+"/work/assignment")
		if err != nil {
			t.Fatal(err)
		}
		var a Assignment
		if len(data) > 0 {
			if err := json.Unmarshal(data, &a); err != nil {
				t.Fatal(err)
			}
			if ok(a) {
				return a
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("waiting for an assignment, the last %+v: %v", a, ctx.Err())
		}
	}
}

// Three instances: one leads and assigns work to every peer. When its
// session expires, another takes over with a higher fencing token, and
// the old leader's fenced write is refused, by the server too. Every
// instance reads the new leader's write from its cache. A stopped
// instance resigns and unregisters.
func TestFailover(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		t.Parallel()
		ctx, admin, root := setup(t, b)
		ids := []string{"w-1", "w-2", "w-3"}
		byID := map[string]*instance{}
		for _, id := range ids {
			byID[id] = start(t, b, root, id)
		}

		// The leader finds its peers: in turn, every instance gets work.
		seen := map[string]bool{}
		first := awaitAssignment(t, ctx, admin, root, func(a Assignment) bool {
			seen[a.Peer] = true
			return len(seen) == len(ids)
		})
		old := byID[first.Leader]
		term := old.svc.Leading()
		if term == nil || term.Token() != first.Token {
			t.Fatalf("%s's term %v, want the token %d it recorded", first.Leader, term, first.Token)
		}

		// Its session expires on the server: another instance leads.
		b.ExpireSession(t, term.Session())
		next := awaitAssignment(t, ctx, admin, root, func(a Assignment) bool { return a.Leader != first.Leader })
		if next.Token <= first.Token {
			t.Fatalf("new leader %s has token %d, not above the old %d", next.Leader, next.Token, first.Token)
		}
		select {
		case <-term.Done():
		case <-ctx.Done():
			t.Fatal("the old term has not ended")
		}

		// The old leader's fenced write is refused: by its term at once,
		// and by the server when sent anyway with the term's guard.
		if _, err := old.svc.assign(ctx, term); !errors.Is(err, election.ErrLost) {
			t.Fatalf("old leader's assign: %v, want ErrLost", err)
		}
		stale := []byte(`{"leader":"stale"}`)
		err := old.c.Retry(ctx, func(ctx context.Context) error { // through the reconnect
			_, err := old.c.Multi(ctx, term.Guard(), client.SetOp(root+"/work/assignment", stale, -1))
			return err
		})
		var me *client.MultiError
		if !errors.As(err, &me) || me.Index != 0 || !errors.Is(err, client.ErrNoNode) {
			t.Fatalf("old leader's guarded write: %v, want the guard refused (no node)", err)
		}

		// Read-your-writes: every cache serves the new leader's write once
		// given the zxid its client last saw.
		zxid := byID[next.Leader].c.LastZxid()
		for _, id := range ids {
			a, err := byID[id].svc.Current(ctx, zxid)
			if err != nil || a.Leader != next.Leader || a.Token != next.Token {
				t.Fatalf("%s reads %+v (%v) at zxid %#x, want %s's assignment", id, a, err, zxid, next.Leader)
			}
		}

		// Stopped instances resign and unregister while their clients
		// stay open: nothing of theirs is left.
		for _, id := range ids {
			in := byID[id]
			in.stop()
			<-in.done
			if in.err != nil {
				t.Fatalf("%s stopped with %v", id, in.err)
			}
		}
		assertGone(t, ctx, admin, root)
	})
}

// assertGone fails unless root holds no candidate and no instance.
func assertGone(t *testing.T, ctx context.Context, c *client.Client, root string) {
	t.Helper()
	if leader, err := election.New(c, root+"/election", "").Leader(ctx); err != nil || leader != election.NoLeader {
		t.Errorf("leader after stopping: %v (%v), want none", leader, err)
	}
	left, err := discovery.New(c, root+"/instances").Instances(ctx, serviceName)
	if err != nil || len(left) != 0 {
		t.Errorf("instances after stopping: %v (%v), want none", left, err)
	}
}

// SIGTERM stops the service process gracefully: status 0, and its nodes
// are gone when it exits, not a session timeout later.
func TestSIGTERM(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		t.Parallel()
		ctx, admin, root := setup(t, b)

		cmd := exec.Command(os.Args[0], "-servers", strings.Join(b.Servers, ","), "-root", root, "-id", "w-sig", "-addr", "127.0.0.1:8080")
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		var logs strings.Builder
		cmd.Stderr = &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-exited
		})
		awaitAssignment(t, ctx, admin, root, func(a Assignment) bool { return a.Leader == "w-sig" })

		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			exited <- err
			if err != nil {
				t.Fatalf("service exited with %v, logs:\n%s", err, logs.String())
			}
		case <-ctx.Done():
			cmd.Process.Kill()
			exited <- <-exited
			t.Fatalf("service still running after SIGTERM, logs:\n%s", logs.String())
		}
		assertGone(t, ctx, admin, root)
		for _, want := range []string{`msg="left the election"`, "msg=unregistered"} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("no %s in the logs:\n%s", want, logs.String())
			}
		}
	})
}
