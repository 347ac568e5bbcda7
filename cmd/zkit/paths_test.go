package main

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// An error names its path once, whether the command or the error it
// passes on names it.
func TestErrorsNamePathOnce(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		servers, c := b.Addr(), b.Connect(t)
		eph := zktest.UniquePath(t)
		if err := c.EnsurePath(t.Context(), eph[:strings.LastIndex(eph, "/")]); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Create(t.Context(), eph, nil, client.Ephemeral); err != nil {
			t.Fatal(err)
		}
		path := eph + "/x"
		for _, args := range [][]string{
			{"lock", path, "--", "true"},
			{"semaphore", path, "--max", "2", "--", "true"},
			{"elect", path, "--", "true"},
			{"barrier", path, "--count", "2", "--", "true"},
			{"counter", path, "add", "1"},
			{"create", path},
			{"config", path, "set", "a=1"},
			{"rendezvous", path, "create"},
		} {
			r := zkitOn(t, servers, exitFailed, args...)
			oneErrorLine(t, r, "ephemeral")
			if n := strings.Count(r.stderr, path); n != 1 {
				t.Errorf("zkit %q: %q names %s %d times", args, r.stderr, path, n)
			}
		}
	})
}

func TestAboutAndCause(t *testing.T) {
	t.Parallel()
	conflict := &recipes.ConflictError{Path: "/t/zr", Owner: 0x1a, Reason: "owned by another session"}
	for _, tc := range []struct{ got, want string }{
		{about("/a", "/a", errors.New(`create "/a": zk: node exists`)), `create "/a": zk: node exists`},
		{about("barrier /a", "/a", errors.New("zkit: barrier /a: a member was lost")), "barrier /a: a member was lost"},
		{about("/a", "/a", errors.New(`create "/ab": zk: node exists`)), `/a: create "/ab": zk: node exists`},
		{about("/a", "/a", errors.New("connection closed")), "/a: connection closed"},
		{cause("/t/zr", conflict), "owned by another session (owner session 0x1a)"},
		{cause("/t/zr", errors.New("no longer held: node deleted")), "no longer held: node deleted"},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}

// The root is no recipe's PATH: every recipe command refuses it with the
// usage status before it sends anything, whatever it was asked to do, and
// the root keeps its children and its data. (A lock there would queue its
// nodes among the root's children; members list would list /zookeeper.)
func TestRecipeCommandsRefuseRoot(t *testing.T) {
	t.Parallel()
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		c := b.Connect(t)
		proxy := zktest.NewProxy(t, b.Addr())
		kids, _, err := c.Children(t.Context(), "/")
		if err != nil {
			t.Fatal(err)
		}
		data, _, err := c.Get(t.Context(), "/")
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"lock", "/", "--", "true"},
			{"lock", "/", "--read", "--", "true"},
			{"lock", "/", "--try", "--", "true"},
			{"semaphore", "/", "--max", "1", "--", "true"},
			{"elect", "/", "--", "true"},
			{"elect", "/", "--leader"},
			{"elect", "/", "--participants"},
			{"counter", "/", "get"},
			{"counter", "/", "add", "1"},
			{"members", "/", "join", "x", "--", "true"},
			{"members", "/", "list"},
			{"barrier", "/", "--count", "1", "--", "true"},
			{"rendezvous", "/", "create"},
			{"config", "/", "get"},
		} {
			r := zkitOn(t, proxy.Addr(), exitUsage, args...)
			oneErrorLine(t, r, "/", "root")
		}
		if n := proxy.Requests(); n != 0 {
			t.Errorf("the refused commands sent %d requests", n)
		}
		after, _, err := c.Children(t.Context(), "/")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(kids, after) {
			t.Errorf("the root's children were %v, are %v", kids, after)
		}
		if d, _, err := c.Get(t.Context(), "/"); err != nil || string(d) != string(data) {
			t.Errorf("the root's data was %q, is %q (%v)", data, d, err)
		}
	})
}
