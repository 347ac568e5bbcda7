package discovery_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

func ids(instances []discovery.Instance) string {
	var out []string
	for _, i := range instances {
		out = append(out, i.ID)
	}
	return strings.Join(out, ",")
}

// Curator's strategies, on plain lists.
func TestStrategies(t *testing.T) {
	list := []discovery.Instance{{Name: "s", ID: "a"}, {Name: "s", ID: "b"}, {Name: "s", ID: "c"}}
	rr := discovery.RoundRobin()
	var got []string
	for range 6 {
		i, ok := rr.Pick(list)
		if !ok {
			t.Fatal("round robin picked none")
		}
		got = append(got, i.ID)
	}
	if strings.Join(got, "") != "abcabc" {
		t.Fatalf("round robin picked %v", got)
	}

	seen := map[string]int{}
	r := discovery.Random()
	for range 1000 {
		i, _ := r.Pick(list)
		seen[i.ID]++
	}
	if len(seen) != 3 {
		t.Fatalf("random picked only %v in 1000 picks", seen)
	}

	s := discovery.Sticky(discovery.RoundRobin())
	first, _ := s.Pick(list)
	for range 5 {
		if i, _ := s.Pick(list); i.ID != first.ID {
			t.Fatalf("sticky moved from %s to %s", first.ID, i.ID)
		}
	}
	rest := slices.DeleteFunc(slices.Clone(list), func(i discovery.Instance) bool { return i.ID == first.ID })
	next, ok := s.Pick(rest)
	if !ok || next.ID == first.ID {
		t.Fatalf("sticky without its instance picked %v", next)
	}
	if i, _ := s.Pick(list); i.ID != next.ID {
		t.Fatalf("sticky went back to %s from %s", i.ID, next.ID)
	}

	for _, st := range []discovery.Strategy{rr, r, s} {
		if _, ok := st.Pick(nil); ok {
			t.Errorf("%T picked from no instances", st)
		}
	}

	// A nil master is round robin, as for WithStrategy: no panic.
	if i, ok := discovery.Sticky(nil).Pick(list); !ok || i.ID == "" {
		t.Errorf("Sticky(nil) picked %v, %v", i, ok)
	}
}

// A provider picks from the live view: enabled instances that pass its
// filters and are not noted down, in turn; it follows registrations and
// unregistrations.
func TestProvider(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		d := discovery.New(b.Connect(t), base)
		regs := map[string]*discovery.Registration{}
		for n, id := range []string{"a", "b", "c", "off"} {
			inst := instance(id, n+1)
			inst.Disabled = id == "off"
			r, err := d.Register(ctx, inst)
			if err != nil {
				t.Fatal(err)
			}
			regs[id] = r
		}
		reader := discovery.New(b.Connect(t), base)
		down := zktest.Scale(500 * time.Millisecond)
		p := reader.Provider(ctx, "api", discovery.WithDownPolicy(down, 2))
		eventuallyUsable(t, p, "a,b,c")

		// Round robin: each once per round.
		count := map[string]int{}
		for range 9 {
			inst, err := p.Pick(ctx)
			if err != nil {
				t.Fatal(err)
			}
			count[inst.ID]++
		}
		if count["a"] != 3 || count["b"] != 3 || count["c"] != 3 {
			t.Fatalf("round robin over a stable view picked %v", count)
		}

		// Noted down twice, b is left out until the policy's timeout.
		b1 := regs["b"].Instance()
		p.NoteError(b1)
		if got, _ := p.Instances(ctx); ids(got) != "a,b,c" {
			t.Fatalf("after one error: %s", ids(got))
		}
		noted := time.Now()
		p.NoteError(b1)
		got, err := p.Instances(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(noted) < down && ids(got) != "a,c" {
			t.Fatalf("after two errors: %s", ids(got))
		}
		for range 4 {
			if inst, err := p.Pick(ctx); err != nil || (inst.ID == "b" && time.Since(noted) < down) {
				t.Fatalf("picked %s (%v) while it was noted down", inst.ID, err)
			}
		}
		eventuallyUsable(t, p, "a,b,c")
		if time.Since(noted) < down {
			t.Fatalf("b came back after %v, before the policy's %v", time.Since(noted), down)
		}

		// The view follows the registry.
		if err := regs["a"].Unregister(ctx); err != nil {
			t.Fatal(err)
		}
		if regs["e"], err = d.Register(ctx, instance("e", 5)); err != nil {
			t.Fatal(err)
		}
		eventuallyUsable(t, p, "b,c,e")
		if err := regs["e"].Unregister(ctx); err != nil {
			t.Fatal(err)
		}
		eventuallyUsable(t, p, "b,c")

		// A filter, and a sticky provider.
		filtered := reader.Provider(ctx, "api", discovery.WithFilter(func(i discovery.Instance) bool { return i.Port != 8002 }))
		eventuallyUsable(t, filtered, "c")
		eventuallyUsable(t, reader.Provider(ctx, "api", discovery.WithFilter(nil)), "b,c")
		sticky := reader.Provider(ctx, "api", discovery.WithStrategy(discovery.Sticky(discovery.Random())))
		eventuallyUsable(t, sticky, "b,c")
		first, err := sticky.Pick(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			if i, err := sticky.Pick(ctx); err != nil || i.ID != first.ID {
				t.Fatalf("sticky picked %v (%v) after %s", i.ID, err, first.ID)
			}
		}
		other := map[string]string{"b": "c", "c": "b"}[first.ID]
		if err := regs[first.ID].Unregister(ctx); err != nil {
			t.Fatal(err)
		}
		eventuallyPicks(t, sticky, other)

		// No instance left but a disabled one.
		if err := regs[other].Unregister(ctx); err != nil {
			t.Fatal(err)
		}
		eventuallyPicks(t, p, "")
		if all, err := reader.Instances(ctx, "api"); err != nil || ids(all) != "off" {
			t.Fatalf("Instances = %s, %v", ids(all), err)
		}
	})
}
