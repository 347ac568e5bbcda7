package discovery_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// Inside a namespace the server gets the namespace's path too, so an
// instance whose JSON fits outside one may be over the limit inside it:
// Register refuses it with an *client.InputError before anything is sent,
// as outside (no service node, no base).
func TestRegisterOverLimitInNamespace(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t, client.WithNamespace(zktest.UniquePath(t)+"/a-namespace-of-some-length"))
		base := "/services"
		inst := discovery.Instance{Name: "api", ID: "a-1", Address: "10.0.0.5", Port: 8080,
			Type: discovery.Dynamic, Registered: time.UnixMilli(1700000000000).UTC()}
		// The largest payload CheckInstance lets through (outside a namespace).
		inst.Payload = largestPayload(t, base, inst)
		r, err := discovery.New(c, base).Register(ctx, inst)
		var ie *client.InputError
		if !errors.As(err, &ie) {
			if r != nil {
				r.Unregister(ctx)
			}
			t.Fatalf("Register of an instance over the limit in a namespace: %v, want an *client.InputError", err)
		}
		if ok, _, err := c.Exists(ctx, base); err != nil || ok {
			t.Fatalf("a refused Register created %s (exists %v, %v): something was sent", base, ok, err)
		}
	})
}

// CheckInstance refuses what Register would refuse, and nothing else: an
// instance whose registration time Register fills in is checked as
// Register writes it.
func TestCheckInstanceAsRegister(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		base := zktest.UniquePath(t) + "/services"
		inst := discovery.Instance{Name: "api", ID: "a-1", Address: "10.0.0.5", Port: 8080}
		// The largest payload CheckInstance lets through.
		inst.Payload = largestPayload(t, base, inst)
		r, err := discovery.New(c, base).Register(ctx, inst)
		if err != nil {
			t.Fatalf("CheckInstance accepted an instance of %d payload bytes, Register refused it: %v", len(inst.Payload), err)
		}
		if err := r.Unregister(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// largestPayload is the largest JSON string payload CheckInstance lets
// through for inst under base.
func largestPayload(t *testing.T, base string, inst discovery.Instance) []byte {
	t.Helper()
	n := 0
	for step := 1 << 20; step > 0; step /= 2 {
		inst.Payload = []byte(`"` + strings.Repeat("x", n+step) + `"`)
		if discovery.CheckInstance(base, inst) == nil {
			n += step
		}
	}
	inst.Payload = []byte(`"` + strings.Repeat("x", n) + `"`)
	if err := discovery.CheckInstance(base, inst); err != nil {
		t.Fatal(err)
	}
	return inst.Payload
}
