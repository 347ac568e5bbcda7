//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// openPTY opens a pseudo-terminal, closed when the test ends; out has
// what is written to its slave side.
func openPTY(t *testing.T) (master, slave *os.File, out *syncBuffer) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	var unlock int32
	var n uint32
	if err := ioctl(m, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Fatal(err)
	}
	if err := ioctl(m, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	out = &syncBuffer{}
	go io.Copy(out, m) // the terminal's output
	return m, s, out
}

func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); e != 0 {
		return e
	}
	return nil
}

// zkitOnTerminal starts the built zkit with args as the foreground job of
// a terminal of its own (the session leader, as a login shell would be),
// and returns the terminal's master side, what the terminal shows, and
// zkit's exit status channel.
func zkitOnTerminal(t *testing.T, bin string, args ...string) (master *os.File, out *syncBuffer, status <-chan int) {
	t.Helper()
	m, s, out := openPTY(t)
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s, s, s
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := make(chan int, 1)
	go func() {
		cmd.Wait()
		ch <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return m, out, ch
}

func exitWithin(t *testing.T, status <-chan int) int {
	t.Helper()
	select {
	case s := <-status:
		return s
	case <-time.After(zktest.Scale(20 * time.Second)):
		t.Fatal("zkit did not exit (CMD stopped by the terminal?)")
		return 0
	}
}

// On zkit's terminal, CMD is the foreground job: it reads the terminal
// (rather than being stopped as a background job would be), and ^C goes
// to it.
func TestCommandGetsTheTerminal(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, _, _ := env(t)
	dir := t.TempDir()

	m, _, status := zkitOnTerminal(t, bin, "lock", "/tty", "--servers", servers, "--", "sh", "-c",
		`touch `+dir+`/reading; read line; echo "got $line" > `+dir+`/out.tmp && mv `+dir+`/out.tmp `+dir+`/out`)
	waitFile(t, filepath.Join(dir, "reading"))
	m.WriteString("hello\n")
	if got := waitFile(t, filepath.Join(dir, "out")); got != "got hello" {
		t.Fatalf("CMD read %q from the terminal", got)
	}
	if s := exitWithin(t, status); s != 0 {
		t.Fatalf("zkit exited %d, want 0", s)
	}

	m, _, status = zkitOnTerminal(t, bin, "lock", "/tty", "--servers", servers, "--", "sh", "-c",
		// No touch: sh, waiting for a touch that ^C reaches too late to
		// kill, would carry on.
		`echo > `+dir+`/sleeping; exec sleep 300`)
	waitFile(t, filepath.Join(dir, "sleeping"))
	m.Write([]byte{3}) // ^C
	if s := exitWithin(t, status); s != 128+int(syscall.SIGINT) {
		t.Fatalf("zkit exited %d after ^C, want CMD's 130", s)
	}
}

// delete --recursive on a terminal asks first, naming how many nodes lie
// below: "n" (or just Enter) deletes nothing, "y" deletes the subtree.
func TestDeleteRecursiveAsksOnTerminal(t *testing.T) {
	t.Parallel()
	bin := buildZkit(t)
	servers, c, ctx := env(t)
	root := zktest.UniquePath(t)
	for _, p := range []string{root + "/a", root + "/a/b", root + "/c"} {
		if err := c.EnsurePath(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		answer string
		status int
		gone   bool
	}{{"n", exitFailed, false}, {"", exitFailed, false}, {"y", exitOK, true}} {
		m, out, status := zkitOnTerminal(t, bin, "delete", root, "--recursive", "--servers", servers)
		prompt := "delete " + root + " and the 3 node(s) below it? [y/N] "
		recipetest.Eventually(t, "the prompt", func() bool { return strings.Contains(out.String(), prompt) })
		m.WriteString(tc.answer + "\n")
		if s := exitWithin(t, status); s != tc.status {
			t.Fatalf("answer %q: zkit exited %d, want %d; terminal %q", tc.answer, s, tc.status, out.String())
		}
		if ok, _, err := c.Exists(ctx, root+"/a/b"); err != nil || ok == tc.gone {
			t.Fatalf("answer %q: %s/a/b exists %v (%v)", tc.answer, root, ok, err)
		}
	}
}
