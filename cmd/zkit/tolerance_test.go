package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/zktest"
)

// --tolerance keeps a lock, a semaphore's lease or a leadership, and CMD,
// across a connection lost for less than D: CMD runs on and zkit exits
// with CMD's status. Without it the same outage ends CMD (status 5).
func TestToleranceKeepsCommandAcrossShortOutage(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		for _, cmd := range []string{"lock", "semaphore", "elect"} {
			for _, tolerance := range []time.Duration{zktest.Scale(5 * time.Second), 0} {
				t.Run(cmd+"_"+tolerance.String(), func(t *testing.T) {
					p := zktest.NewProxy(t, b.Addr())
					dir := t.TempDir()
					running, finish := filepath.Join(dir, "running"), filepath.Join(dir, "finish")
					done := make(chan result, 1)
					go func() {
						args := []string{cmd, zktest.UniquePath(t), "--tolerance", tolerance.String()}
						if cmd == "semaphore" {
							args = append(args, "--max", "1")
						}
						done <- zkit(t, append(args, "--servers", p.Addr(), "--session-timeout", zktest.Scale(10*time.Second).String(), "--",
							"sh", "-c", "touch "+running+"; while [ ! -e "+finish+" ]; do sleep 0.02; done 2>/dev/null; exit 7")...)
					}()
					waitFile(t, running)
					// An outage: the connection drops and no new one gets
					// through for a second (well within the session timeout).
					p.Blackhole()
					p.ResetAll()
					select {
					case r := <-done:
						if tolerance != 0 {
							t.Fatalf("zkit %s --tolerance %v ended during a 1s outage: %+v", cmd, tolerance, r)
						}
						if r.status != exitLost {
							t.Fatalf("zkit %s without --tolerance: %+v, want status %d", cmd, r, exitLost)
						}
						return
					case <-time.After(zktest.Scale(time.Second)):
					}
					p.Heal()
					if tolerance == 0 {
						if r := <-done; r.status != exitLost {
							t.Fatalf("zkit %s without --tolerance: %+v, want status %d", cmd, r, exitLost)
						}
						return
					}
					if err := os.WriteFile(finish, nil, 0o644); err != nil {
						t.Fatal(err)
					}
					if r := <-done; r.status != 7 || r.stderr != "" {
						t.Fatalf("zkit %s --tolerance %v after a 1s outage: %+v, want CMD's status 7 and no error", cmd, tolerance, r)
					}
				})
			}
		}
	})
}

func TestToleranceUsage(t *testing.T) {
	t.Parallel()
	expectUsage(t, "", [][]string{
		{"lock", "/x", "--tolerance", "-1s", "--", "true"},
		{"semaphore", "/x", "--max", "1", "--tolerance", "-1s", "--", "true"},
		{"elect", "/x", "--tolerance", "-1s", "--", "true"},
		{"elect", "/x", "--observe", "--tolerance", "1s"},
		{"members", "/x", "join", "a", "--tolerance", "-1s"},
		{"discover", "/x", "register", "api", "a", "--tolerance", "-1s"},
	})
}
