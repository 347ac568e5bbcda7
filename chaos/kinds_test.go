package chaos

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/zktest"
)

// Recipe kinds do not share a path: a mutex, a read/write lock and an
// election on one path would be queues that exclude nothing. Whichever
// kind holds the path first, the other is refused with ErrOtherRecipe,
// in both orders, and leaves no node.
func TestRecipeKindsDoNotSharePath(t *testing.T) {
	type acquire func(ctx context.Context, c *client.Client, path string) (func(context.Context) error, error)
	kinds := map[string]acquire{
		"lock": func(ctx context.Context, c *client.Client, path string) (func(context.Context) error, error) {
			l, err := lock.New(c, path).Lock(ctx)
			if err != nil {
				return nil, err
			}
			return l.Unlock, nil
		},
		"rwlock write": func(ctx context.Context, c *client.Client, path string) (func(context.Context) error, error) {
			l, err := rwlock.New(c, path).Lock(ctx)
			if err != nil {
				return nil, err
			}
			return l.Unlock, nil
		},
		"rwlock read": func(ctx context.Context, c *client.Client, path string) (func(context.Context) error, error) {
			l, err := rwlock.New(c, path).RLock(ctx)
			if err != nil {
				return nil, err
			}
			return l.Unlock, nil
		},
		"election": func(ctx context.Context, c *client.Client, path string) (func(context.Context) error, error) {
			term, err := election.New(c, path, "p").Campaign(ctx)
			if err != nil {
				return nil, err
			}
			return term.Resign, nil
		},
	}
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(60*time.Second))
		defer cancel()
		c := b.Connect(t)
		for first, takeFirst := range kinds {
			for second, takeSecond := range kinds {
				if strings.Fields(first)[0] == strings.Fields(second)[0] {
					continue // one recipe's own modes share a path by design
				}
				path := zktest.UniquePath(t) + "/p"
				release, err := takeFirst(ctx, c, path)
				if err != nil {
					t.Fatalf("%s: %v", first, err)
				}
				if _, err := takeSecond(ctx, c, path); !errors.Is(err, recipes.ErrOtherRecipe) {
					t.Fatalf("%s after %s on one path: %v, want ErrOtherRecipe", second, first, err)
				}
				if err := release(ctx); err != nil {
					t.Fatal(err)
				}
				if children, _, err := c.Children(ctx, path); err != nil && !errors.Is(err, client.ErrNoNode) || len(children) != 0 {
					t.Fatalf("%s after %s: nodes left %v (%v)", second, first, children, err)
				}
			}
		}
	})
}
