package zktest

import (
	"log/slog"
	"os"
	"sync"
	"testing"
)

var exitHooks struct {
	mu    sync.Mutex
	hooks []func()
}

// atMainExit registers f to run when Main returns, after the tests: shared
// servers (real or in-process) use it to stop. Hooks run in reverse order of
// registration.
func atMainExit(f func()) {
	exitHooks.mu.Lock()
	defer exitHooks.mu.Unlock()
	exitHooks.hooks = append(exitHooks.hooks, f)
}

// Main runs the tests and then stops the servers shared by the test binary
// (SharedZooKeeper's, and any other shared server of this package). Use it as
//
//	func TestMain(m *testing.M) { os.Exit(zktest.Main(m)) }
//
// It returns m.Run's exit code. If ZKIT_TIME_SCALE holds anything but a
// factor that Scale takes (see TimeScaleEnv), Main logs an error and
// returns 2 without running the tests, rather than run them unstretched.
func Main(m *testing.M) int {
	if s := os.Getenv(TimeScaleEnv); s != "" {
		if _, ok := parseScale(s); !ok {
			slog.Error("zktest: not running the tests: invalid time scale (want a positive number of at most 1e6, such as 2 or 0.5)", "env", TimeScaleEnv, "value", s)
			return 2
		}
	}
	code := m.Run()
	exitHooks.mu.Lock()
	hooks := exitHooks.hooks
	exitHooks.hooks = nil
	exitHooks.mu.Unlock()
	for i := len(hooks) - 1; i >= 0; i-- {
		hooks[i]()
	}
	return code
}
