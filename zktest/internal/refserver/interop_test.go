package refserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The interop tests run other ZooKeeper clients' recipes against the
// reference server: kazoo 2.8 (Python) and Curator 5.4 (Java), the partners
// zkit shares ensembles with. They skip when those are not installed,
// unless ZKIT_REQUIRE_ZOOKEEPER=1.

func skipUnlessInstalled(t *testing.T, what string, ok bool) {
	t.Helper()
	if ok {
		return
	}
	if v := os.Getenv("ZKIT_REQUIRE_ZOOKEEPER"); v == "1" || v == "true" {
		t.Fatalf("%s not installed (ZKIT_REQUIRE_ZOOKEEPER is set)", what)
	}
	t.Skipf("%s not installed", what)
}

func runInterop(t *testing.T, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = filepath.Join("testdata", "interop")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
	t.Logf("%s output:\n%s", name, out)
	if !strings.HasSuffix(strings.TrimSpace(string(out)), "ok") {
		t.Fatalf("%s did not finish:\n%s", name, out)
	}
	return string(out)
}

func TestInteropKazoo(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Python client")
	}
	err := exec.Command("/usr/bin/python3", "-c", "import kazoo").Run()
	skipUnlessInstalled(t, "python3-kazoo", err == nil)
	s := startTest(t, Config{})
	out := runInterop(t, "/usr/bin/python3", "kazoo_interop.py", s.Addr())
	for _, want := range []string{"seq /kz/a/n-0000000000", "children ['m', 'n-0000000000']",
		"failed transaction ['RolledBackError', 'BadVersionError']", "secret b's' digest", "counter 3", "barrier done", "election [True]"} {
		if !strings.Contains(out, want) {
			t.Errorf("kazoo output lacks %q:\n%s", want, out)
		}
	}
}

func TestInteropCurator(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a JVM")
	}
	const dir = "/usr/share/java"
	var cp []string
	for _, jar := range []string{"curator-framework", "curator-client", "curator-recipes", "guava", "zookeeper",
		"zookeeper-jute", "slf4j-api", "slf4j-nop", "netty-handler", "netty-common", "netty-buffer",
		"netty-transport", "netty-codec", "netty-resolver", "netty-transport-native-epoll", "netty-transport-native-unix-common"} {
		p := filepath.Join(dir, jar+".jar")
		if _, err := os.Stat(p); err == nil {
			cp = append(cp, p)
		} else if strings.HasPrefix(jar, "curator") || jar == "zookeeper" {
			skipUnlessInstalled(t, "libcurator-recipes-java", false)
		}
	}
	_, err := exec.LookPath("java")
	skipUnlessInstalled(t, "java", err == nil)
	s := startTest(t, Config{})
	out := runInterop(t, "java", "-cp", strings.Join(cp, ":"), "CuratorInterop.java", s.Addr())
	for _, want := range []string{"locked 1", "protected 1", "cache create seen", "transaction 2",
		"shared count 7", "atomic long 3", "barrier done", "leader me"} {
		if !strings.Contains(out, want) {
			t.Errorf("Curator output lacks %q:\n%s", want, out)
		}
	}
}
