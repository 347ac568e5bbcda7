package zktest

import (
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
