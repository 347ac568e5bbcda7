// Package chaos is zkit's reliability suite: every recipe under the faults
// that break coordination libraries in production, the way Jepsen tests
// ZooKeeper-like systems. It holds tests only, and the few helpers they
// share: a recorded history of operations on one monotonic clock
// ([History]), the porcupine models those histories are checked against
// ([LockModel], [CounterModel], [ElectionModel], [SemaphoreModel]), a
// fencing resource that refuses stale tokens and counts them ([Fence]), a
// per-worker fault router over zktest's proxies ([Router]), and the
// one-line summary every scenario prints ([Summary]).
//
// Every scenario runs on a real 3-node ZooKeeper ensemble and reports the
// operations it recorded, the faults it injected, the violations it found
// (always zero, or the test fails) and the worst time the system took to
// recover. The quick mode runs in CI; the long mode, for soak runs and for
// the figures in docs/reliability.md, is
//
//	ZKIT_CHAOS_LONG=1 ZKIT_REQUIRE_ZOOKEEPER=1 go test -count=1 -v -timeout 60m ./chaos
package chaos
