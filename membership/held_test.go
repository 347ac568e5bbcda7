package membership_test

import (
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/membership"
)

// A member fences writes like every held thing: Token, Guard and Multi
// are its current presence's, refused once its session has expired and
// until it is present again.
func TestMemberFencing(t *testing.T) {
	recipetest.RunKeptFencing(t, func(t *testing.T, c *client.Client, path string, tolerance time.Duration) recipetest.Kept {
		group, id := client.SplitPath(path)
		m, err := membership.New(c, group, membership.WithSuspendTolerance(tolerance)).Join(recipetest.Context(t), id, []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		return m
	})
}
