package refserver_test

import (
	"os"
	"testing"

	"github.com/zkit-dev/zkit/zktest"
)

// TestMain stops the shared real ZooKeeper the benchmarks use.
func TestMain(m *testing.M) { os.Exit(zktest.Main(m)) }
