package configwatch_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

type service struct {
	Workers int    `json:"workers"`
	DB      string `json:"db"`
	Debug   bool   `json:"debug,omitempty"`
}

// Set changes the keys it names (nil deletes), Publish replaces them all;
// both modes store the same layout.
func TestSetAndPublish(t *testing.T) {
	for _, mode := range []string{"flag", "atomic"} {
		t.Run(mode, func(t *testing.T) {
			zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
				ctx := recipetest.Context(t)
				c := b.Connect(t)
				path := zktest.UniquePath(t) + "/a/config"
				var opts []configwatch.Option
				if mode == "atomic" {
					opts = append(opts, configwatch.WithAtomic())
				}
				cfg := configwatch.New(c, path, configwatch.JSON[service], opts...)
				vals, err := configwatch.Encode(service{Workers: 4, DB: "primary", Debug: true})
				if err != nil {
					t.Fatal(err)
				}
				z1, err := cfg.Publish(ctx, vals)
				if err != nil {
					t.Fatal(err)
				}
				if got := recipetest.Children(t, c, path); !slices.Equal(sorted(got), []string{"db", "debug", "ready", "workers"}) {
					t.Fatalf("layout: %v", got)
				}
				z2, err := cfg.Set(ctx, configwatch.Values{"workers": []byte("8"), "debug": nil})
				if err != nil {
					t.Fatal(err)
				}
				if z2 <= z1 {
					t.Fatalf("second publish zxid %d not above the first's %d", z2, z1)
				}
				s, err := cfg.Get(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if want := (service{Workers: 8, DB: "primary"}); s.Value != want || s.Zxid != z2 {
					t.Fatalf("after Set: %+v at %d, want %+v at %d", s.Value, s.Zxid, want, z2)
				}
				if _, err := cfg.Publish(ctx, configwatch.Values{"db": []byte(`"replica"`)}); err != nil {
					t.Fatal(err)
				}
				raw, err := configwatch.New(c, path, configwatch.Raw).Get(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if len(raw.Value) != 1 || !bytes.Equal(raw.Value["db"], []byte(`"replica"`)) {
					t.Fatalf("after Publish: %q", raw.Value)
				}
			})
		})
	}
}

func sorted(s []string) []string { slices.Sort(s); return s }

// A value that is not JSON (written by a publisher that does not encode)
// reads as a string; one that does not fit the caller's type is a decode
// error with the zero value (never half a configuration), delivered
// without ending the watch.
func TestDecoding(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		cfg := configwatch.New(c, zktest.UniquePath(t)+"/config", configwatch.JSON[service])
		if _, err := cfg.Publish(ctx, configwatch.Values{"db": []byte("primary host"), "workers": []byte("2")}); err != nil {
			t.Fatal(err)
		}
		s, err := cfg.Get(ctx)
		if err != nil || s.Value != (service{Workers: 2, DB: "primary host"}) {
			t.Fatalf("Get = %+v, %v", s.Value, err)
		}
		doc, err := configwatch.Document(configwatch.Values{"db": []byte("primary host"), "workers": []byte("2")})
		if err != nil || string(doc) != `{"db":"primary host","workers":2}` {
			t.Fatalf("Document = %s, %v", doc, err)
		}

		feed := cfg.Watch(ctx)
		if s := <-feed.Values(); s.Err != nil {
			t.Fatal(s.Err)
		}
		if _, err := cfg.Set(ctx, configwatch.Values{"workers": []byte(`"many"`)}); err != nil {
			t.Fatal(err)
		}
		if s := <-feed.Values(); s.Err == nil || s.Value != (service{}) {
			t.Fatalf("a string for an int: %+v, %v; want the zero value and an error", s.Value, s.Err)
		}
		if s, err := cfg.Get(ctx); err == nil || s.Err != err || s.Value != (service{}) {
			t.Fatalf("Get of a string for an int: %+v, %v (snapshot: %v); want the zero value and an error", s.Value, err, s.Err)
		}
		if _, err := cfg.Set(ctx, configwatch.Values{"workers": []byte("3")}); err != nil {
			t.Fatal(err)
		}
		if s := <-feed.Values(); s.Err != nil || s.Value.Workers != 3 {
			t.Fatalf("after the repair: %+v, %v", s.Value, s.Err)
		}
	})
}

// Bad input is refused before anything is written.
func TestBadInput(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		base := zktest.UniquePath(t)
		path := base + "/config"
		bad := map[string]configwatch.Values{
			"ready key":    {"ready": []byte("1")},
			"slash":        {"a/b": []byte("1")},
			"empty key":    {"": []byte("1")},
			"dot":          {"..": []byte("1")},
			"control char": {"a\x01": []byte("1")},
			"too large":    {"big": make([]byte, client.DefaultMaxBuffer)},
		}
		for name, vals := range bad {
			for _, opts := range [][]configwatch.Option{nil, {configwatch.WithAtomic()}} {
				cfg := configwatch.New(c, path, configwatch.Raw, opts...)
				if _, err := cfg.Set(ctx, vals); !isInputError(err) {
					t.Errorf("%s: Set = %v, want an *client.InputError", name, err)
				}
				if _, err := cfg.Publish(ctx, vals); !isInputError(err) {
					t.Errorf("%s: Publish = %v, want an *client.InputError", name, err)
				}
			}
		}
		// Each value fits a request, but not all of them one transaction.
		big := configwatch.Values{}
		for _, k := range []string{"a", "b", "c"} {
			big[k] = bytes.Repeat([]byte("x"), client.DefaultMaxBuffer/2)
		}
		if _, err := configwatch.New(c, path, configwatch.Raw, configwatch.WithAtomic()).Set(ctx, big); !isInputError(err) || !strings.Contains(err.Error(), "without WithAtomic") {
			t.Errorf("oversized atomic publish: %v, want an *client.InputError", err)
		}
		// An invalid path, and a nil decoder for the calls that decode.
		for name, cfg := range map[string]*configwatch.Config[service]{
			`""`:         configwatch.New(c, "", configwatch.JSON[service]),
			"relative":   configwatch.New(c, "relative", configwatch.JSON[service]),
			"/":          configwatch.New(c, "/", configwatch.JSON[service]),
			"//":         configwatch.New(c, base+"//x", configwatch.JSON[service]),
			"trailing /": configwatch.New(c, base+"/x/", configwatch.JSON[service]),
			"no decoder": configwatch.New[service](c, path, nil),
		} {
			if name != "no decoder" {
				if _, err := cfg.Set(ctx, configwatch.Values{"a": []byte("1")}); !isInputError(err) {
					t.Errorf("%s: Set = %v, want an *client.InputError", name, err)
				}
				if _, err := cfg.Publish(ctx, configwatch.Values{"a": []byte("1")}); !isInputError(err) {
					t.Errorf("%s: Publish = %v, want an *client.InputError", name, err)
				}
			}
			if _, err := cfg.Get(ctx); !isInputError(err) {
				t.Errorf("%s: Get = %v, want an *client.InputError", name, err)
			}
			feed := cfg.Watch(ctx)
			for range feed.Values() {
				t.Errorf("%s: Watch delivered a snapshot", name)
			}
			if !isInputError(feed.Err()) {
				t.Errorf("%s: Watch ended with %v, want an *client.InputError", name, feed.Err())
			}
		}
		if _, err := configwatch.Encode([]int{1}); err == nil {
			t.Error("Encode of a JSON array succeeded")
		}
		// Nothing was created: no configuration node, no key, no ready.
		if ok, _, err := c.Exists(ctx, path); err != nil || ok {
			t.Fatalf("bad input created %s (%v)", path, err)
		}
		if !c.Session().Alive() {
			t.Fatal("bad input cost the session")
		}
	})
}

// An atomic publish refused as too large for one transaction, the first
// at its path, leaves nothing behind: the path still holds no
// configuration, so Get says so (ErrNoConfig) instead of waiting for a
// publish that will never complete, and a Watch waits for the first one.
func TestRefusedAtomicPublishLeavesNoConfig(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		path := zktest.UniquePath(t) + "/app/config"
		big := configwatch.Values{}
		for _, k := range []string{"a", "b", "c"} {
			big[k] = bytes.Repeat([]byte("x"), client.DefaultMaxBuffer/2)
		}
		if _, err := configwatch.New(c, path, configwatch.Raw, configwatch.WithAtomic()).Publish(ctx, big); !isInputError(err) {
			t.Fatalf("oversized atomic publish: %v, want an *client.InputError", err)
		}
		if ok, _, err := c.Exists(ctx, path); err != nil || ok {
			t.Fatalf("after a refused publish the configuration node exists (%v, %v)", ok, err)
		}
		gctx, cancel := context.WithTimeout(ctx, zktest.Scale(5*time.Second))
		defer cancel()
		if _, err := configwatch.New(c, path, configwatch.Raw).Get(gctx); !errors.Is(err, configwatch.ErrNoConfig) {
			t.Fatalf("Get after a refused first publish: %v, want ErrNoConfig", err)
		}
		// The same publish, small enough, goes through.
		for k := range big {
			big[k] = []byte(`"` + k + `"`)
		}
		if _, err := configwatch.New(c, path, configwatch.Raw, configwatch.WithAtomic()).Publish(ctx, big); err != nil {
			t.Fatal(err)
		}
		s, err := configwatch.New(c, path, configwatch.Raw).Get(ctx)
		if err != nil || len(s.Value) != 3 || string(s.Value["a"]) != `"a"` {
			t.Fatalf("after the first publish: %q, %v", s.Value, err)
		}
	})
}

func isInputError(err error) bool {
	var ie *client.InputError
	return errors.As(err, &ie) && errors.Is(err, client.ErrInvalidInput)
}

// A publish whose reply is lost is completed, not doubled or abandoned.
func TestLostReply(t *testing.T) {
	for _, mode := range []string{"flag", "atomic"} {
		t.Run(mode, func(t *testing.T) {
			zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
				ctx := recipetest.Context(t)
				admin := b.Connect(t)
				path := zktest.UniquePath(t) + "/config"
				if err := admin.EnsurePath(ctx, path); err != nil {
					t.Fatal(err)
				}
				var opts []configwatch.Option
				if mode == "atomic" {
					opts = append(opts, configwatch.WithAtomic())
				}
				c := b.Connect(t, b.CutNextCreate(t, path)...)
				if _, err := configwatch.New(c, path, configwatch.Raw, opts...).Set(ctx, gen(3)); err != nil {
					t.Fatal(err)
				}
				s, err := configwatch.New(admin, path, configwatch.JSON[generation]).Get(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if g, err := uniform(s.Value); err != nil || g != 3 {
					t.Fatalf("after a lost reply: %v (%v)", s.Value, err)
				}
			})
		})
	}
}

// The nodes a publish creates get the caller's ACL.
func TestACL(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t, client.WithDigestAuth("zkit", "secret"))
		acl := client.DigestACL(client.PermAll, "zkit", "secret")
		for _, mode := range []string{"flag", "atomic"} {
			path := zktest.UniquePath(t) + "/config"
			opts := []configwatch.Option{configwatch.WithACL(acl...)}
			if mode == "atomic" {
				opts = append(opts, configwatch.WithAtomic())
			}
			if _, err := configwatch.New(c, path, configwatch.Raw, opts...).Set(ctx, configwatch.Values{"k": []byte("1")}); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{path, path + "/k", path + "/ready"} {
				got, _, err := c.GetACL(ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != 1 || got[0].Scheme != "digest" {
					t.Errorf("%s: %s has ACL %v", mode, p, got)
				}
			}
		}
	})
}
