package main

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/zktest"
)

// Every command answers --help and "help CMD" with status 0. The global
// flags and the exit statuses are in the root's help alone, with the
// advice for scripts that start zkit in the background; a subcommand's
// points there.
func TestHelpExitsZeroEverywhere(t *testing.T) {
	t.Parallel()
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string{}, path...), sub.Name()))
		}
	}
	walk(newRootCmd(&app{}), nil)
	if len(paths) < 5 {
		t.Fatalf("only %d commands found", len(paths))
	}
	for _, p := range paths {
		for _, args := range [][]string{append(append([]string{}, p...), "--help"), append([]string{"help"}, p...)} {
			r := zkit(t, args...)
			if r.status != 0 || !strings.Contains(r.stdout, "Usage:") {
				t.Errorf("zkit %q: status %d, stdout %q", args, r.status, r.stdout)
			}
			if len(p) == 0 || p[0] == "help" {
				continue
			}
			for _, once := range []string{"Exit status:", "Global Flags:", "--session-timeout duration", "ignored"} {
				if strings.Contains(r.stdout, once) {
					t.Errorf("zkit %q repeats the root's %q:\n%s", args, once, r.stdout)
				}
			}
			if !strings.Contains(r.stdout, "see 'zkit --help'") {
				t.Errorf("zkit %q does not point at the root's help for the global flags:\n%s", args, r.stdout)
			}
		}
	}
	r := zkit(t, "--help")
	for _, want := range []string{"Exit status:", "--session-timeout duration", "--servers string", "background job", "SIGINT and SIGQUIT ignored", "SIGTERM"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("zkit --help does not say %q:\n%s", want, r.stdout)
		}
	}
}

// With nothing listening, the error names the address and the fixes.
func TestUnreachableNamesAddressAndFix(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	r := zkit(t, "lock", "/x", "--servers", addr, "--connect-timeout", "500ms", "--", "true")
	if r.status != exitUnreachable {
		t.Fatalf("status %d, want %d (%q)", r.status, exitUnreachable, r.stderr)
	}
	oneErrorLine(t, r, "zkit lock: ", "no ZooKeeper reachable at "+addr+" within 500ms", "--servers", "ZKIT_SERVERS", "zkit serve")
	if strings.Contains(r.stderr, "zkit: ") {
		t.Fatalf("prefix said twice: %q", r.stderr)
	}
}

// Global flags work before the command, after it, and after its arguments.
func TestGlobalFlagsAnywhere(t *testing.T) {
	t.Parallel()
	servers, _, _ := env(t)
	for _, args := range [][]string{
		{"--servers", servers, "lock", "/g", "--", "true"},
		{"lock", "--servers", servers, "/g", "--", "true"},
		{"lock", "/g", "--servers=" + servers, "--session-timeout", "5s", "--", "true"},
	} {
		if r := zkit(t, args...); r.status != 0 {
			t.Errorf("zkit %q: status %d, %q", args, r.status, r.stderr)
		}
	}
}

func TestUnknownCommandIsUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"frobnicate"}, {"help", "frobnicate"}} {
		r := zkit(t, args...)
		if r.status != exitUsage || r.stdout != "" {
			t.Fatalf("zkit %q: status %d, want %d (stdout %q)", args, r.status, exitUsage, r.stdout)
		}
		oneErrorLine(t, r, "frobnicate")
	}
}

func TestVersionAndCompletion(t *testing.T) {
	t.Parallel()
	if r := zkit(t, "version"); r.status != 0 || !strings.HasPrefix(r.stdout, "zkit ") || !strings.Contains(r.stdout, "go-zookeeper") {
		t.Fatalf("zkit version: %+v", r)
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		if r := zkit(t, "completion", sh); r.status != 0 || !strings.Contains(r.stdout, "zkit") {
			t.Errorf("zkit completion %s: status %d, %d bytes", sh, r.status, len(r.stdout))
		}
	}
}

// With nothing listening, a --wait shorter than --connect-timeout does not
// turn "no ZooKeeper reachable" (status 3, with its fix) into a bare
// "context deadline exceeded" failure (status 1): the commands that take
// --wait say the servers are unreachable, within the time they waited.
func TestUnreachableWithShortWait(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	for _, args := range [][]string{
		{"lock", "/x", "--wait", "300ms", "--", "true"},
		{"lock", "/x", "--read", "--wait", "300ms", "--", "true"},
		{"elect", "/x", "--wait", "300ms", "--", "true"},
		{"semaphore", "/x", "--max", "1", "--wait", "300ms", "--", "true"},
		{"rendezvous", "/x", "wait", "--wait", "300ms"},
		{"barrier", "/x", "--count", "2", "--wait", "300ms", "--", "true"},
	} {
		begin := time.Now()
		r := zkit(t, append([]string{"--servers", addr, "--connect-timeout", "20s"}, args...)...)
		if took := time.Since(begin); took > zktest.Scale(10*time.Second) {
			t.Errorf("zkit %q: took %v with --wait 300ms", args, took)
		}
		if r.status != exitUnreachable {
			t.Errorf("zkit %q: status %d, want %d (%q)", args, r.status, exitUnreachable, r.stderr)
			continue
		}
		oneErrorLine(t, r, "no ZooKeeper reachable at "+addr+" within ", "ms;", "--servers") // about 300ms: what was left of --wait
	}
}

// Every command that runs CMD under the supervisor documents how CMD runs
// (its process group, which signals it gets, --kill-after): semaphore and
// discover register run CMD exactly as lock does.
func TestHelpOfEveryCommandThatRunsCMDSaysHowItRuns(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"lock", "elect", "semaphore", "members", "discover", "rendezvous", "barrier"} {
		r := zkit(t, "help", name)
		if r.status != exitOK || !strings.Contains(r.stdout, "How CMD runs:") || !strings.Contains(r.stdout, "--kill-after") {
			t.Errorf("zkit help %s does not say how CMD runs (status %d):\n%s", name, r.status, r.stdout)
		}
	}
}
