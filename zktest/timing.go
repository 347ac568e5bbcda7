package zktest

import (
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"
)

// TimeScaleEnv is the environment variable that Scale reads: a positive
// decimal factor of at most 1e6 (for example "2" or "0.5") applied to every
// test timing.
const TimeScaleEnv = "ZKIT_TIME_SCALE"

var timeScale = sync.OnceValue(func() float64 {
	s := os.Getenv(TimeScaleEnv)
	f, ok := parseScale(s)
	if !ok {
		slog.Warn("zktest: ignoring invalid time scale", "env", TimeScaleEnv, "value", s)
	}
	return f
})

// parseScale parses a time scale; "" is 1, and so (with ok false) is
// anything that is not a positive number of at most 1e6.
func parseScale(s string) (f float64, ok bool) {
	if s == "" {
		return 1, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0) || f > 1e6 {
		return 1, false
	}
	return f, true
}

// Scale multiplies d by the factor in ZKIT_TIME_SCALE (default 1), so that a
// slow or loaded machine can stretch every timeout and deadline of a test run
// with one setting. All timings in zktest go through it, and tests built on
// zktest should do the same for theirs. The factor is read once per process;
// a value that TimeScaleEnv does not allow is ignored (with a warning) and 1
// is used, but Main refuses to run the tests with it.
func Scale(d time.Duration) time.Duration {
	f := timeScale()
	if f == 1 {
		return d
	}
	return time.Duration(float64(d) * f)
}
