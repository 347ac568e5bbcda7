package recipes_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// AcquireAll takes the parts in the order of their paths, whatever the
// order they are given in: the global order that keeps two joint
// acquisitions over overlapping sets from deadlocking.
func TestAcquireAllTakesPartsInPathOrder(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		base := recipetest.LockDir(t, c)
		var taken []string
		var parts []recipes.Part
		for _, name := range []string{"c", "a", "b"} {
			dir := base + "-" + name
			parts = append(parts, recipes.Part{Path: dir, Acquire: func(ctx context.Context) (*recipes.Lease, error) {
				taken = append(taken, dir)
				return recipes.NewQueue(c, dir, nil, recipes.MutexKind).Acquire(ctx, mutex)
			}})
		}
		j, err := recipes.AcquireAll(ctx, c, parts)
		require.NoError(t, err)
		require.Equal(t, []string{base + "-a", base + "-b", base + "-c"}, taken, "the order the parts were taken in")
		require.NoError(t, j.Unlock(ctx))
	})
}
