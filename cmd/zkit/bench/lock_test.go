package bench

import (
	"fmt"
	"testing"

	"github.com/zkit-dev/zkit/cmd/zkit/internal/workload"
)

var contenders = []int{1, 8, 32, 1000}

// BenchmarkLock is the anchors' W1_lock: contenders loop acquire then
// release, with nothing in between. One op is one handoff.
func BenchmarkLock(b *testing.B) {
	for _, n := range contenders {
		b.Run(fmt.Sprintf("contenders=%d", n), func(b *testing.B) { measure(b, workload.Lock(), n, "handoffs/s") })
	}
}

// BenchmarkRWLockWrite is the same loop on the write side of a read/write
// lock.
func BenchmarkRWLockWrite(b *testing.B) {
	for _, n := range contenders[:3] {
		b.Run(fmt.Sprintf("contenders=%d", n), func(b *testing.B) { measure(b, workload.RWLock(), n, "handoffs/s") })
	}
}

// BenchmarkLockShared is W1_lock_shared: 32 goroutines over 4 sessions,
// those of one session sharing one Lock with combining.
func BenchmarkLockShared(b *testing.B) {
	b.Run("goroutines=32", func(b *testing.B) { measure(b, workload.LockShared(), 32, "handoffs/s") })
}

// BenchmarkLockSharedGozk is the same on zk.Lock, one a goroutine.
func BenchmarkLockSharedGozk(b *testing.B) {
	b.Run("goroutines=32", func(b *testing.B) { measure(b, workload.GozkLockShared(), 32, "handoffs/s") })
}
