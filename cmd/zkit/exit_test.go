package main

import (
	"path/filepath"
	"testing"

	"github.com/zkit-dev/zkit/zktest"
)

// --exit-base N moves zkit's own statuses 1-5 to N+1..N+5, wherever the
// flag is on the line and whatever found the error; CMD's own status is
// passed on as it is.
func TestExitBaseMovesZkitsOwnStatuses(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		servers := b.Addr()
		c := b.Connect(t)
		path := heldPath(t, c)
		for _, tc := range []struct {
			args []string
			want int
		}{
			{[]string{"--exit-base", "100", "lock", path, "--try", "--servers", servers, "--", "true"}, 104},
			{[]string{"lock", path, "--try", "--exit-base=100", "--servers", servers, "--", "true"}, 104},
			{[]string{"lock", path + "-free", "--exit-base", "100", "--servers", servers, "--", "sh", "-c", "exit 4"}, 4},
			{[]string{"lock", path + "-free", "--exit-base", "100", "--servers", servers, "--", "sh", "-c", "exit 104"}, 104},
			{[]string{"lock", path + "-free", "--exit-base", "100", "--servers", servers, "--", filepath.Join(t.TempDir(), "missing")}, 101},
			{[]string{"--exit-base", "100", "lock"}, 102},
			{[]string{"--exit-base", "100", "frob"}, 102},
			{[]string{"--exit-base", "100", "lock", "/x", "--bogus", "--", "true"}, 102},
			{[]string{"lock", "/x", "--exit-base", "100", "--servers", "127.0.0.1:1", "--connect-timeout", "200ms", "--", "true"}, 103},
			{[]string{"lock", "/x", "--exit-base", "251", "--servers", servers, "--", "true"}, exitUsage},
			{[]string{"lock", "/x", "--exit-base", "-1", "--servers", servers, "--", "true"}, exitUsage},
			{[]string{"lock", "/x", "--kill-after", "-1s", "--servers", servers, "--", "true"}, exitUsage},
			{[]string{"lock", path, "--try", "--servers", servers, "--", "--exit-base", "100"}, exitTimeout},
		} {
			if r := zkit(t, tc.args...); r.status != tc.want {
				t.Errorf("zkit %q: status %d, want %d (stderr %q)", tc.args, r.status, tc.want, r.stderr)
			}
		}

		// Lost: 5 becomes 105.
		lost := zktest.UniquePath(t)
		running := filepath.Join(t.TempDir(), "running")
		done := make(chan result, 1)
		go func() {
			done <- zkit(t, "lock", lost, "--exit-base", "100", "--servers", servers, "--", "sh", "-c", "touch "+running+"; exec sleep 60")
		}()
		waitFile(t, running)
		nodes, _, err := c.Children(t.Context(), lost)
		if err != nil || len(nodes) != 1 {
			t.Fatalf("lock nodes %v, %v", nodes, err)
		}
		if err := c.Delete(t.Context(), lost+"/"+nodes[0], -1); err != nil {
			t.Fatal(err)
		}
		if r := <-done; r.status != 100+exitLost {
			t.Fatalf("lost lock: status %d, want %d (stderr %q)", r.status, 100+exitLost, r.stderr)
		}
	})
}
