package recipetest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/zktest"
)

// RunKazoo runs script with /usr/bin/python3 (where Debian's python3-kazoo
// lives) and returns what it printed. The script finds the connect string
// in the environment variable ZK. It skips the test when kazoo is missing,
// unless ZKIT_REQUIRE_ZOOKEEPER is set, and fails it when the script
// fails.
func RunKazoo(t *testing.T, servers []string, script string) string {
	t.Helper()
	requireKazoo(t)
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-c", script)
	cmd.Env = append(os.Environ(), "ZK="+strings.Join(servers, ","))
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("kazoo script: %v\n%s%s", err, out, stderr)
	}
	return string(out)
}

// StartKazoo starts script with /usr/bin/python3 and args, as a peer
// like StartJava's: it finds the connect string in the environment
// variable ZK, must print "ready" once connected, answers the lines it
// reads on stdin with lines on stdout, and exits when stdin closes. It is
// stopped when the test ends. It skips the test when kazoo is missing,
// unless ZKIT_REQUIRE_ZOOKEEPER is set.
func StartKazoo(t *testing.T, servers []string, script string, args ...string) *CuratorPeer {
	t.Helper()
	requireKazoo(t)
	cmd := exec.Command(python, append([]string{"-c", script}, args...)...)
	cmd.Env = append(os.Environ(), "ZK="+strings.Join(servers, ","))
	p := startPeer(t, cmd)
	p.Expect("ready")
	return p
}

// python is where Debian's python3-kazoo is found.
const python = "/usr/bin/python3"

// requireKazoo skips the test when python cannot import kazoo, or fails
// it when ZKIT_REQUIRE_ZOOKEEPER is set.
func requireKazoo(t *testing.T) {
	t.Helper()
	if err := exec.Command(python, "-c", "import kazoo").Run(); err != nil {
		switch strings.ToLower(os.Getenv(zktest.RequireZooKeeperEnv)) {
		case "1", "true", "yes":
			t.Fatalf("kazoo interop: %s cannot import kazoo (%v); apt-get install python3-kazoo", python, err)
		}
		t.Skipf("skipping kazoo interop: %s cannot import kazoo: %v", python, err)
	}
}
