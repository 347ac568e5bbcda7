package refserver_test

import (
	"os"
	"testing"

	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// TestKazooCreatorACL runs what kazoo 2.8's own
// test_create_makepath_incompatible_acls checks, with kazoo, on ZooKeeper
// and on the reference server: kazoo sends CREATOR_ALL_ACL's empty id as a
// null string, which ZooKeeper accepts for the "auth" scheme.
func TestKazooCreatorACL(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Python client")
	}
	script, err := os.ReadFile("testdata/interop/kazoo_creator_acl.py")
	if err != nil {
		t.Fatal(err)
	}
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		t.Parallel()
		out := recipetest.RunKazoo(t, b.Servers, string(script))
		if want := "created digest\nother refused\nok\n"; out != want {
			t.Errorf("kazoo on %s printed:\n%s\nwant:\n%s", b.Name, out, want)
		}
	})
}
