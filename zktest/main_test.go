package zktest_test

import (
	"os"
	"testing"

	"github.com/zkit-dev/zkit/zktest"
)

// TestMain is the only TestMain of package zktest's tests: it stops the
// shared servers after the tests, as every package using SharedZooKeeper
// should.
func TestMain(m *testing.M) { os.Exit(zktest.Main(m)) }
