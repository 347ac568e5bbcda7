package ensemble_test

import (
	"os"
	"testing"

	"github.com/zkit-dev/zkit/zktest"
)

func TestMain(m *testing.M) { os.Exit(zktest.Main(m)) }
