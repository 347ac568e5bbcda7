package recipes

import (
	"slices"
	"testing"

	"github.com/zkit-dev/zkit/internal/layout"
)

// The queue recipes' kinds are their layouts' queue nodes in the registry:
// the same markers, recipes, and the same nodes exclusive.
func TestKindsAreTheRegistrys(t *testing.T) {
	kinds := []Kind{MutexKind, ReadKind, WriteKind, LatchKind}
	n := 0
	for _, l := range layout.All {
		for _, m := range l.Queue {
			n++
			i := slices.IndexFunc(kinds, func(k Kind) bool { return k.Marker == m })
			if i < 0 || kinds[i].Recipe != l.Name || kinds[i].Exclusive == slices.Contains(l.Shared, m) {
				t.Errorf("the registry's %s node %q: no kind, or not as %+v", l.Name, m, kinds)
			}
		}
	}
	if n != len(kinds) {
		t.Errorf("%d queue markers in the registry, %d kinds", n, len(kinds))
	}
}
