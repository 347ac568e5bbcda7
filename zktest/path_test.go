package zktest

import (
	"regexp"
	"strings"
	"testing"
)

func TestUniquePath(t *testing.T) {
	valid := regexp.MustCompile(`^/zktest/[A-Za-z0-9_.-]+-[0-9]+$`)
	seen := map[string]bool{}
	for range 3 {
		p := UniquePath(t)
		if !valid.MatchString(p) || !strings.HasPrefix(p, "/zktest/TestUniquePath-") {
			t.Errorf("UniquePath = %q", p)
		}
		if seen[p] {
			t.Errorf("UniquePath returned %q twice", p)
		}
		seen[p] = true
	}
	t.Run("sub test/with spaces#and ünïcode", func(t *testing.T) {
		p := UniquePath(t)
		if !valid.MatchString(p) {
			t.Errorf("UniquePath = %q: not a plain znode name", p)
		}
		if !strings.HasPrefix(p, "/zktest/TestUniquePath_sub_test_with_spaces_and__n_code-") {
			t.Errorf("UniquePath = %q", p)
		}
	})
}

func TestSanitizeName(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "test",
		"TestA":                  "TestA",
		"TestA/b c":              "TestA_b_c",
		"Test/../x":              "Test_.._x",
		"Test\x00\x7f":           "Test__",
		strings.Repeat("é", 150): strings.Repeat("_", 150),
		strings.Repeat("a", 300): strings.Repeat("a", 200),
	} {
		if got := sanitizeName(in); got != want {
			t.Errorf("sanitizeName(%q) = %q; want %q", in, got, want)
		}
	}
}
