package counter_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// kazooCounter increments a kazoo Counter N times; with "curator" it uses
// kazoo's support_curator (4-byte big-endian, as SharedCount).
const kazooCounter = `
import sys
from kazoo.client import KazooClient
from kazoo.recipe.counter import Counter
servers, path, mode, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
zk = KazooClient(hosts=servers)
zk.start()
c = Counter(zk, path, support_curator=(mode == "curator"))
for _ in range(n):
    c += 1
print("done", c.value)
zk.stop()
`

// kazoo's Counter (decimal text, or 4 bytes with support_curator) and zkit
// with the matching encoding reach the exact total on one path.
func TestKazooInterop(t *testing.T) {
	if err := exec.Command("/usr/bin/python3", "-c", "import kazoo").Run(); err != nil {
		if os.Getenv(zktest.RequireZooKeeperEnv) == "1" {
			t.Fatalf("kazoo interop: python3-kazoo missing (%s is set): %v", zktest.RequireZooKeeperEnv, err)
		}
		t.Skipf("skipping kazoo interop: python3-kazoo missing: %v", err)
	}
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		const kazooEach, sessions, zkitEach = 50, 4, 15
		for _, tc := range []struct {
			mode string
			enc  counter.Encoding
		}{{"text", counter.Text}, {"curator", counter.Int}} {
			ctx := recipetest.Context(t)
			path := counterPath(t) + "-" + tc.mode
			var out []byte
			var kerr error
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				out, kerr = exec.Command("/usr/bin/python3", "-c", kazooCounter,
					strings.Join(b.Servers, ","), path, tc.mode, fmt.Sprint(kazooEach)).CombinedOutput()
			}()
			for range sessions {
				k := counter.New(b.Connect(t), path, counter.WithEncoding(tc.enc))
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range zkitEach {
						if _, err := k.Add(ctx, 1); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			if kerr != nil || !strings.HasPrefix(string(out), "done ") {
				t.Fatalf("kazoo (%s): %v\n%s", tc.mode, kerr, out)
			}
			want := int64(kazooEach + sessions*zkitEach)
			if v, err := counter.New(b.Connect(t), path, counter.WithEncoding(tc.enc)).Get(ctx); err != nil || v != want {
				t.Fatalf("%s: counter %d, %v; want %d", tc.mode, v, err, want)
			}
		}
	})
}
