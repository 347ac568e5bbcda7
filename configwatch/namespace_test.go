package configwatch_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// Inside a namespace the server gets the namespace's path too: a value
// that fits a request outside one may not fit inside it. Such a value is
// input the publish can check, so it is refused before anything is sent
// (the package's contract): ready stays, and no key is written.
func TestValueOverLimitInNamespace(t *testing.T) {
	for _, mode := range []string{"flag", "atomic"} {
		t.Run(mode, func(t *testing.T) {
			zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
				ctx := recipetest.Context(t)
				c := b.Connect(t, client.WithNamespace(zktest.UniquePath(t)+"/a-namespace-of-some-length"))
				path := "/app/config"
				var opts []configwatch.Option
				if mode == "atomic" {
					opts = append(opts, configwatch.WithAtomic())
				}
				cfg := configwatch.New(c, path, configwatch.Raw, opts...)
				z1, err := cfg.Publish(ctx, configwatch.Values{"a": []byte("1")})
				if err != nil {
					t.Fatal(err)
				}
				// The largest value the limit allows outside a namespace.
				big := bytes.Repeat([]byte("x"), client.MaxData(client.JoinPath(path, "z")))
				_, err = cfg.Set(ctx, configwatch.Values{"a": []byte("2"), "z": big})
				if !isInputError(err) {
					t.Fatalf("Set of a value over the limit in a namespace: %v, want an *client.InputError", err)
				}
				if got := recipetest.Children(t, c, path); !slices.Equal(sorted(got), []string{"a", "ready"}) {
					t.Fatalf("after a refused publish the configuration holds %v, want [a ready]", got)
				}
				s, err := cfg.Get(ctx)
				if err != nil {
					t.Fatalf("Get after the refused publish: %v (ready deleted?)", err)
				}
				if s.Zxid != z1 || string(s.Value["a"]) != "1" {
					t.Fatalf("after a refused publish: %q at %#x, want a=1 at %#x", s.Value, s.Zxid, z1)
				}
			})
		})
	}
}
