package zktest_test

import (
	"errors"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

// CutNextCreate cuts the reply of the next create under dir, and only that:
// the requests before it (a read, a create elsewhere) go through, on both
// backends.
func TestBackendCutNextCreateOnlyUnderDir(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := testCtx(t)
		admin := b.Connect(t)
		dir := zktest.UniquePath(t)
		if err := admin.EnsurePath(ctx, dir); err != nil {
			t.Fatal(err)
		}
		c := b.Connect(t, b.CutNextCreate(t, dir)...)
		if _, err := c.Create(ctx, dir+"-sibling", nil, client.Persistent); err != nil {
			t.Fatalf("a create outside %s lost its reply: %v", dir, err)
		}
		if ok, _, err := c.Exists(ctx, dir); !ok || err != nil {
			t.Fatalf("exists %s = %v, %v", dir, ok, err)
		}
		_, err := c.Create(ctx, dir+"/node", nil, client.Persistent)
		var ou *client.OutcomeUnknownError
		if !errors.As(err, &ou) {
			t.Fatalf("the create under %s was not cut: err %v", dir, err)
		}
		if ok, _, err := admin.Exists(ctx, dir+"/node"); !ok || err != nil {
			t.Fatalf("the cut create was not applied: %v, %v", ok, err)
		}
	})
}
