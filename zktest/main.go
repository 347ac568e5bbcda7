package zktest

import (
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
// It returns m.Run's exit code.
func Main(m *testing.M) int {
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
