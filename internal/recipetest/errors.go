package recipetest

import (
	"strings"
	"testing"
)

// NamesPath fails the test unless err is an error whose message names
// path exactly once, and op when op is not empty: what every error of a
// recipe's exported calls owes its reader.
func NamesPath(t *testing.T, what string, err error, op, path string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s: no error", what)
	case strings.Count(err.Error(), path) != 1:
		t.Errorf("%s: %q does not name %s exactly once", what, err, path)
	case op != "" && !strings.Contains(err.Error(), op+" "):
		t.Errorf("%s: %q does not name the call %s", what, err, op)
	}
}
