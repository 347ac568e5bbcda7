package discovery_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/zktest"
)

// basePath returns a fresh registry base for the test, with its parent
// made.
func basePath(t *testing.T, c *client.Client) string {
	t.Helper()
	p := zktest.UniquePath(t)
	if err := c.EnsurePath(recipetest.Context(t), p); err != nil {
		t.Fatal(err)
	}
	return p + "/services"
}

// show renders instances as "id@address:port,..." in their order.
func show(instances []discovery.Instance) string {
	var parts []string
	for _, i := range instances {
		parts = append(parts, fmt.Sprintf("%s@%s:%d", i.ID, i.Address, i.Port))
	}
	return strings.Join(parts, ",")
}

// awaitSnapshot receives snapshots from feed until show(snapshot) is want,
// and returns it; it fails the test at a scaled deadline with the last one
// seen.
func awaitSnapshot(t *testing.T, feed *recipes.Feed[[]discovery.Instance], want string) []discovery.Instance {
	t.Helper()
	return awaitFeed(t, feed, want, func(s []discovery.Instance) bool { return show(s) == want })
}

// awaitFeed receives snapshots from feed until ok(snapshot), and returns
// it; it fails the test at a scaled deadline, saying what.
func awaitFeed(t *testing.T, feed *recipes.Feed[[]discovery.Instance], what string, ok func([]discovery.Instance) bool) []discovery.Instance {
	t.Helper()
	deadline := time.After(zktest.Scale(30 * time.Second))
	last := "(none)"
	for {
		select {
		case s, open := <-feed.Values():
			if !open {
				t.Fatalf("feed ended: %v (last %q, waiting for %s)", feed.Err(), last, what)
			}
			if last = show(s); ok(s) {
				return s
			}
		case <-deadline:
			t.Fatalf("watch: last snapshot %q, waiting for %s", last, what)
		}
	}
}

// eventuallyInstances waits until Instances renders as want.
func eventuallyInstances(t *testing.T, d *discovery.Discovery, service, want string) []discovery.Instance {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(30 * time.Second))
	for {
		got, err := d.Instances(recipetest.Context(t), service)
		if err != nil {
			t.Fatal(err)
		}
		if show(got) == want {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("Instances(%s) = %q, want %q", service, show(got), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// instance is an instance of service "api" with id, at 10.0.0.n:8000+n.
func instance(id string, n int) discovery.Instance {
	return discovery.Instance{Name: "api", ID: id, Address: fmt.Sprintf("10.0.0.%d", n), Port: 8000 + n}
}

// eventuallyPicks waits until p picks the instance id (none: "" and
// ErrNoInstance).
func eventuallyPicks(t *testing.T, p *discovery.Provider, id string) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(30 * time.Second))
	for {
		inst, err := p.Pick(recipetest.Context(t))
		switch {
		case err == nil && inst.ID == id, id == "" && errors.Is(err, discovery.ErrNoInstance):
			return
		case err != nil && !errors.Is(err, discovery.ErrNoInstance):
			t.Fatal(err)
		case time.Now().After(deadline):
			t.Fatalf("Pick = %v, %v; want %q", inst.ID, err, id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// eventuallyUsable waits until the ids of p.Instances are want.
func eventuallyUsable(t *testing.T, p *discovery.Provider, want string) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(30 * time.Second))
	for {
		got, err := p.Instances(recipetest.Context(t))
		if err != nil {
			t.Fatal(err)
		}
		var have []string
		for _, i := range got {
			have = append(have, i.ID)
		}
		if strings.Join(have, ",") == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("provider's instances %v, want %s", have, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
