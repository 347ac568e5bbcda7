package bench

import (
	"fmt"
	"testing"

	"github.com/zkit-dev/zkit/cmd/zkit/internal/workload"
)

// counterSessions are the anchors' W2_counter points.
var counterSessions = []int{1, 8, 32}

// BenchmarkCounter is the anchors' W2_counter: each session (its own
// client) loops Add(1) on one shared counter. One op is one increment.
func BenchmarkCounter(b *testing.B) {
	for _, n := range counterSessions {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) { measure(b, workload.Counter(), n, "increments/s") })
	}
}

// BenchmarkCounterNaive is the in-run baseline: go-zookeeper's Get, then
// Set with the version read, again on ErrBadVersion (W2 in the anchors).
func BenchmarkCounterNaive(b *testing.B) {
	for _, n := range counterSessions {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) { measure(b, workload.GozkCounter(), n, "increments/s") })
	}
}

// BenchmarkCounterShared is 32 goroutines adding through one client:
// zkit combines their pending increments into one write.
func BenchmarkCounterShared(b *testing.B) {
	b.Run("goroutines=32", func(b *testing.B) { measure(b, workload.SharedCounter(), 32, "increments/s") })
}

// BenchmarkCounterSharedNaive is the naive loop with 32 goroutines on one
// go-zookeeper session.
func BenchmarkCounterSharedNaive(b *testing.B) {
	b.Run("goroutines=32", func(b *testing.B) { measure(b, workload.GozkSharedCounter(), 32, "increments/s") })
}
