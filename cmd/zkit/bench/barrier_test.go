package bench

import (
	"testing"

	"github.com/zkit-dev/zkit/cmd/zkit/internal/workload"
)

// BenchmarkDoubleBarrier is the anchors' W3_dbarrier: 8 members run
// rounds of enter then leave, a fresh barrier path per round. One op is
// one round (every member's enter and leave).
func BenchmarkDoubleBarrier(b *testing.B) {
	measure(b, workload.DoubleBarrier(), 8, "rounds/s")
}

// BenchmarkDoubleBarrierReuse runs every round on one path, which zkit's
// barrier allows and Curator's does not.
func BenchmarkDoubleBarrierReuse(b *testing.B) {
	measure(b, workload.DoubleBarrierReuse(), 8, "rounds/s")
}
