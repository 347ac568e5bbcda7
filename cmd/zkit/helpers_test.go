package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/zktest"
)

// heldPath returns a fresh path whose lock c holds until the test ends.
func heldPath(t *testing.T, c *client.Client) string {
	t.Helper()
	path := zktest.UniquePath(t)
	held, err := lock.New(c, path).Lock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Unlock(context.Background()) })
	return path
}

// result is what one zkit run left behind.
type result struct {
	status         int
	stdout, stderr string
}

// zkit runs the command in-process with args and no stdin.
func zkit(t *testing.T, args ...string) result {
	t.Helper()
	return zkitIn(t, "", args...)
}

// zkitIn runs the command in-process with args and stdin.
func zkitIn(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb syncBuffer
	status := execute(args, strings.NewReader(stdin), &out, &errb)
	return result{status, out.String(), errb.String()}
}

// zkitOn runs the command against servers and checks its exit status.
func zkitOn(t *testing.T, servers string, want int, args ...string) result {
	t.Helper()
	r := zkit(t, append([]string{"--servers", servers}, args...)...)
	if r.status != want {
		t.Fatalf("zkit %q: status %d, want %d (stdout %q, stderr %q)", args, r.status, want, r.stdout, r.stderr)
	}
	return r
}

// env is a reference server for a test, a client on it, and a context.
func env(t *testing.T) (servers string, c *client.Client, ctx context.Context) {
	t.Helper()
	b := zktest.ReferenceBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
	t.Cleanup(cancel)
	return b.Addr(), b.Connect(t), ctx
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

var zkitBinary struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// buildZkit builds the command once per test binary.
func buildZkit(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	b := &zkitBinary
	b.once.Do(func() {
		dir, err := makeTempDir()
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "zkit")
		b.out, b.err = exec.Command("go", "build", "-o", b.path, ".").CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("go build: %v\n%s", b.err, b.out)
	}
	return b.path
}

// waitNodes waits until dir has n children.
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

// waitOutput waits until s says want.
func waitOutput(t *testing.T, s *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(20 * time.Second))
	for !strings.Contains(s.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in %q", want, s.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// oneErrorLine checks that stderr is exactly one line naming want.
func oneErrorLine(t *testing.T, r result, want ...string) {
	t.Helper()
	if strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") {
		t.Fatalf("stderr %q: want exactly one line", r.stderr)
	}
	for _, w := range want {
		if !strings.Contains(r.stderr, w) {
			t.Fatalf("stderr %q does not say %q", r.stderr, w)
		}
	}
}

// waitFile waits until path exists (CMD wrote it) and returns its content,
// trimmed. CMDs that write content write it elsewhere and rename.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(30 * time.Second))
	for {
		if b, err := os.ReadFile(path); err == nil {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatalf("CMD did not write %s", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
