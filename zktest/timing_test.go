package zktest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestParseScale(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"", 1, true},
		{"1", 1, true},
		{"2.5", 2.5, true},
		{"0.5", 0.5, true},
		{"0", 1, false},
		{"-3", 1, false},
		{"NaN", 1, false},
		{"Inf", 1, false},
		{"fast", 1, false},
	} {
		got, ok := parseScale(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseScale(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestScale(t *testing.T) {
	f := timeScale()
	if got, want := Scale(2*time.Second), time.Duration(float64(2*time.Second)*f); got != want {
		t.Fatalf("Scale(2s) = %v with factor %v; want %v", got, f, want)
	}
}

// A bad ZKIT_TIME_SCALE is refused by Main, which does not run the tests:
// Scale's warning alone goes unseen when the tests pass (go test shows a
// passing package's output only with -v), so a typo would silently run
// them unstretched.
func TestMainRefusesBadTimeScale(t *testing.T) {
	for _, tc := range []struct {
		value  string
		refuse bool
	}{{"fast", true}, {"0", true}, {"2", false}} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestParseScale$", "-test.count=1")
		cmd.Env = append(os.Environ(), TimeScaleEnv+"="+tc.value)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		refused := errors.As(err, &ee) && ee.ExitCode() == 2 && strings.Contains(string(out), TimeScaleEnv)
		if err != nil && !refused {
			t.Fatalf("%s=%s: %v\n%s", TimeScaleEnv, tc.value, err, out)
		}
		if refused != tc.refuse {
			t.Errorf("%s=%s: refused = %v; want %v. Output:\n%s", TimeScaleEnv, tc.value, refused, tc.refuse, out)
		}
		if refused && strings.Contains(string(out), "PASS") {
			t.Errorf("%s=%s: the tests ran:\n%s", TimeScaleEnv, tc.value, out)
		}
	}
}
