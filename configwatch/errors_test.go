package configwatch_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// Every error of Set, Publish, Get and Watch names the path once, and
// matches what callers test for: bad input, nothing published, ctx ended
// while a publish was in progress, a value that does not decode, no
// permission, a closed client.
func TestErrorsNamePathOnce(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		owner := b.Connect(t, client.WithDigestAuth("zkit", "secret"))
		c := b.Connect(t)
		base := zktest.UniquePath(t)
		check := func(what, path string, err, want error) {
			t.Helper()
			switch {
			case err == nil:
				t.Errorf("%s: no error", what)
			case want != nil && !errors.Is(err, want):
				t.Errorf("%s: %v, want an error matching %v", what, err, want)
			case strings.Count(err.Error(), path) != 1:
				t.Errorf("%s: %q does not name %s once", what, err, path)
			default:
				t.Logf("%s: %v", what, err)
			}
		}
		every := func(what string, cfg *configwatch.Config[service], want error) {
			t.Helper()
			vals := configwatch.Values{"workers": []byte("1")}
			_, err := cfg.Set(ctx, vals)
			check(what+": Set", cfg.Path(), err, want)
			_, err = cfg.Publish(ctx, vals)
			check(what+": Publish", cfg.Path(), err, want)
			_, err = cfg.Get(ctx)
			check(what+": Get", cfg.Path(), err, want)
			check(what+": Watch", cfg.Path(), watchErr(t, ctx, cfg), want)
		}

		// Bad input.
		bad := configwatch.New(c, base+"/bad", configwatch.JSON[service])
		for _, vals := range []configwatch.Values{{"a/b": []byte("1")}, {"ready": []byte("1")}} {
			_, err := bad.Set(ctx, vals)
			check("Set of a bad key", bad.Path(), err, client.ErrInvalidInput)
			_, err = bad.Publish(ctx, vals)
			check("Publish of a bad key", bad.Path(), err, client.ErrInvalidInput)
		}
		noDecoder := configwatch.New[service](c, base+"/bad", nil)
		_, err := noDecoder.Get(ctx)
		check("Get without a decoder", noDecoder.Path(), err, client.ErrInvalidInput)
		check("Watch without a decoder", noDecoder.Path(), watchErr(t, ctx, noDecoder), client.ErrInvalidInput)

		// Nothing published.
		none := configwatch.New(c, base+"/none", configwatch.JSON[service])
		_, err = none.Get(ctx)
		check("Get of nothing", none.Path(), err, configwatch.ErrNoConfig)

		// A publish in progress (keys, no ready) until ctx ends.
		half := configwatch.New(c, base+"/half", configwatch.JSON[service])
		if err := c.EnsurePath(ctx, half.Path()+"/workers"); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, zktest.Scale(200*time.Millisecond))
		_, err = half.Get(short)
		cancel()
		check("Get during a publish", half.Path(), err, context.DeadlineExceeded)

		// A value that does not decode.
		undecodable := configwatch.New(c, base+"/undecodable", configwatch.JSON[service])
		if _, err := undecodable.Set(ctx, configwatch.Values{"workers": []byte(`"many"`)}); err != nil {
			t.Fatal(err)
		}
		s, err := undecodable.Get(ctx)
		check("Get of an undecodable value", undecodable.Path(), err, nil)
		check("the snapshot of an undecodable value", undecodable.Path(), s.Err, nil)
		feed := undecodable.Watch(ctx)
		check("a watched snapshot of an undecodable value", undecodable.Path(), (<-feed.Values()).Err, nil)

		// No permission: a configuration only its publisher may read.
		private := configwatch.New(owner, base+"/private", configwatch.JSON[service],
			configwatch.WithACL(client.DigestACL(client.PermAll, "zkit", "secret")...))
		if _, err := private.Set(ctx, configwatch.Values{"workers": []byte("1")}); err != nil {
			t.Fatal(err)
		}
		every("no permission", configwatch.New(c, private.Path(), configwatch.JSON[service]), client.ErrNoAuth)

		// A closed client.
		closed := b.Connect(t)
		closed.Close()
		every("a closed client", configwatch.New(closed, base+"/closed", configwatch.JSON[service]), client.ErrClosed)
	})
}

// watchErr is why cfg's feed stopped, which it must without a snapshot.
func watchErr(t *testing.T, ctx context.Context, cfg *configwatch.Config[service]) error {
	t.Helper()
	feed := cfg.Watch(ctx)
	for s := range feed.Values() {
		t.Errorf("%s: Watch delivered %+v", cfg.Path(), s)
	}
	return feed.Err()
}
