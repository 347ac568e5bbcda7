package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/zktest"
)

// lockEnv is a reference server and a client on it.
func lockEnv(t *testing.T) (servers string, c *client.Client, ctx context.Context) {
	t.Helper()
	srv := zktest.NewServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
	t.Cleanup(cancel)
	c, err := client.Connect(ctx, srv.Servers())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return srv.Addr(), c, ctx
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLockRunsCommandWithNodeAndToken(t *testing.T) {
	servers, c, ctx := lockEnv(t)
	var out syncBuffer
	status, err := runLock(ctx, []string{"/jobs/nightly", "--servers", servers, "--",
		"sh", "-c", `echo "$ZKIT_LOCK_NODE $ZKIT_FENCING_TOKEN"; exit 3`}, nil, &out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if status != 3 {
		t.Fatalf("status %d, want CMD's 3", status)
	}
	f := strings.Fields(out.String())
	if len(f) != 2 || !strings.HasPrefix(f[0], "/jobs/nightly/_c_") || !strings.Contains(f[0], "-lock-") {
		t.Fatalf("CMD saw %q", out.String())
	}
	if tok, err := strconv.ParseInt(f[1], 10, 64); err != nil || tok <= 0 {
		t.Fatalf("fencing token %q", f[1])
	}
	if ch, _, err := c.Children(ctx, "/jobs/nightly"); err != nil || len(ch) != 0 {
		t.Fatalf("after CMD: nodes %v, %v", ch, err)
	}
}

func TestLockExcludes(t *testing.T) {
	servers, c, ctx := lockEnv(t)
	held, err := lock.New(c, "/jobs/x").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = runLock(ctx, []string{"/jobs/x", "--try", "--servers", servers, "--", "true"}, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "held by another") {
		t.Fatalf("--try on a held lock: %v", err)
	}
	_, err = runLock(ctx, []string{"--wait", "200ms", "--servers", servers, "/jobs/x", "--", "true"}, nil, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "not acquired within") {
		t.Fatalf("--wait on a held lock: %v", err)
	}
	// Waiting without a bound gets it once the holder lets go.
	done := make(chan error, 1)
	go func() {
		_, err := runLock(ctx, []string{"/jobs/x", "--servers", servers, "--", "true"}, nil, io.Discard, io.Discard)
		done <- err
	}()
	waitNodes(t, c, "/jobs/x", 2)
	held.Unlock(ctx)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestLockReadWrite(t *testing.T) {
	servers, c, ctx := lockEnv(t)
	r, err := rwlock.New(c, "/cfg").RLock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runLock(ctx, []string{"/cfg", "--read", "--try", "--servers", servers, "--", "true"}, nil, io.Discard, io.Discard); err != nil {
		t.Fatalf("--read next to a reader: %v", err)
	}
	if _, err := runLock(ctx, []string{"/cfg", "--write", "--try", "--servers", servers, "--", "true"}, nil, io.Discard, io.Discard); err == nil {
		t.Fatal("--write next to a reader succeeded")
	}
	r.Unlock(ctx)
	if _, err := runLock(ctx, []string{"/cfg", "--write", "--try", "--servers", servers, "--", "true"}, nil, io.Discard, io.Discard); err != nil {
		t.Fatalf("--write on a free lock: %v", err)
	}
}

func TestLockLostTerminatesCommand(t *testing.T) {
	servers, c, ctx := lockEnv(t)
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		_, err := runLock(ctx, []string{"/jobs/y", "--servers", servers, "--", "sh", "-c",
			`trap 'echo got-term; exit 0' TERM; echo started; while :; do sleep 0.02; done`}, nil, &out, io.Discard)
		done <- err
	}()
	deadline := time.Now().Add(zktest.Scale(20 * time.Second))
	for !strings.Contains(out.String(), "started") {
		if time.Now().After(deadline) {
			t.Fatal("CMD did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	nodes, _, err := c.Children(ctx, "/jobs/y")
	if err != nil || len(nodes) != 1 {
		t.Fatalf("lock nodes %v, %v", nodes, err)
	}
	// Someone deletes the lock node: the lock is lost.
	if err := c.Delete(ctx, "/jobs/y/"+nodes[0], -1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "lost") {
			t.Fatalf("zkit lock after losing the lock: %v, want an error", err)
		}
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatal("zkit lock did not stop CMD when the lock was lost")
	}
	if !strings.Contains(out.String(), "got-term") {
		t.Fatalf("CMD did not get SIGTERM: %q", out.String())
	}
}

func TestLockBadArguments(t *testing.T) {
	ctx := context.Background()
	for _, args := range [][]string{
		{},
		{"/x"},
		{"/x", "--"},
		{"relative", "--", "true"},
		{"/x", "--read", "--write", "--", "true"},
		{"/x", "--try", "--wait", "1s", "--", "true"},
		{"/x", "--bogus", "--", "true"},
		{"/x", "/y", "--", "true"},
	} {
		if _, err := runLock(ctx, args, nil, io.Discard, io.Discard); err == nil {
			t.Errorf("zkit lock %q: no error", args)
		}
	}
}

// The binary exits with CMD's status, and prints errors as one line.
func TestLockBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	servers, c, ctx := lockEnv(t)
	bin := buildZkit(t)
	cmd := exec.Command(bin, "lock", "/b", "--servers", servers, "--", "sh", "-c", "exit 7")
	if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != 7 {
		t.Fatalf("exit: %v, want status 7", err)
	}
	held, err := lock.New(c, "/b").Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock(ctx)
	var stderr bytes.Buffer
	cmd = exec.Command(bin, "lock", "/b", "--try", "--", "true")
	cmd.Env = append(cmd.Environ(), "ZKIT_SERVERS="+servers)
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("--try on a held lock: %v, want status 1", err)
	}
	if s := stderr.String(); strings.Count(s, "\n") != 1 || !strings.Contains(s, "held by another") {
		t.Fatalf("stderr %q: want one line saying the lock is held", s)
	}
}

func waitNodes(t *testing.T, c *client.Client, dir string, n int) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(20 * time.Second))
	for {
		ch, _, err := c.Children(context.Background(), dir)
		if err == nil && len(ch) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %v (%v), want %d nodes", dir, ch, err, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
