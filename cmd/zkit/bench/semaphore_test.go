package bench

import (
	"fmt"
	"testing"

	"github.com/zkit-dev/zkit/cmd/zkit/internal/workload"
)

// BenchmarkSemaphore is W6_semaphore: contenders loop acquire then release
// on one semaphore of 4 leases, with nothing in between. One op is one
// acquire/release pair; the anchors' Java program runs the same workload
// on Curator's InterProcessSemaphoreV2 (BenchCurator --workloads W6).
func BenchmarkSemaphore(b *testing.B) {
	for _, n := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("contenders=%d", n), func(b *testing.B) { measure(b, workload.Semaphore(), n, "pairs/s") })
	}
}
