package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/barrier"
	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/configwatch"
	"github.com/zkit-dev/zkit/counter"
	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/lock"
	"github.com/zkit-dev/zkit/membership"
	"github.com/zkit-dev/zkit/recipes"
	"github.com/zkit-dev/zkit/rendezvous"
	"github.com/zkit-dev/zkit/rwlock"
	"github.com/zkit-dev/zkit/semaphore"
	"github.com/zkit-dev/zkit/zktest"
)

// recipeUse is one recipe in use on a path: ok says whether it still works as
// it did (held, its value or members as they were), release ends it.
type recipeUse struct {
	ok      func(ctx context.Context) error
	release func(ctx context.Context) error
}

// recipeKind is one recipe as a user puts it on a path: take starts using it
// (acquire, campaign, add, set, enter, publish, join, register, open).
type recipeKind struct {
	name string
	take func(ctx context.Context, c *client.Client, path string) (recipeUse, error)
}

// heldUse is the use of something that is held while its Err is nil.
func heldUse(err func() error, release func(context.Context) error) recipeUse {
	return recipeUse{func(context.Context) error { return err() }, release}
}

func noop(context.Context) error { return nil }

// recipeKinds are every recipe, in the role of the first one on a path and of
// the second.
var recipeKinds = []recipeKind{
	{"lock", func(ctx context.Context, c *client.Client, p string) (recipeUse, error) {
		l, err := lock.New(c, p).Lock(ctx)
		if err != nil {
			return recipeUse{}, err
		}
		return heldUse(l.Err, l.Unlock), nil
	}},
	{"rwlock write", func(ctx context.Context, c *client.Client, p string) (recipeUse, error) {
		l, err := rwlock.New(c, p).Lock(ctx)
		if err != nil {
			return recipeUse{}, err
		}
		return heldUse(l.Err, l.Unlock), nil
	}},
	{"rwlock read", func(ctx context.Context, c *client.Client, p string) (recipeUse, error) {
		l, err := rwlock.New(c, p).RLock(ctx)
		if err != nil {
			return recipeUse{}, err
		}
		return heldUse(l.Err, l.Unlock), nil
	}},
	{"election", func(ctx context.Context, c *client.Client, p string) (recipeUse, error) {
		term, err := election.New(c, p, "p").Campaign(ctx)
		if err != nil {
			return recipeUse{}, err
		}
		return heldUse(term.Err, term.Resign), nil
	}},
	{"semaphore", func(ctx context.Context, c *client.Client, p string) (recipeUse, error) {
		l, err := semaphore.New(c, p, 2).Acquire(ctx)
		if err != nil {
			return recipeUse{}, err
		}
		return heldUse(l.Err, l.Unlock), nil
	}},
	{"counter", func(ctx context.Context, c *client.Client, p string) (recipeUse, error) {
		k := counter.New(c, p)
		v, err := k.Add(ctx, 5)
		if err != nil {
			return recipeUse{}, err
		}
		return recipeUse{func(ctx context.Context) error {
			if got, err := counter.New(c, p).Get(ctx); err != nil || got != v {
				return fmt.Errorf("counter reads %d (%v), want %d", got, err, v)
			}
			return nil
		}, noop}, nil
	}},
	{"barrier", func(ctx context.Context, c *client.Client, p string) (recipeUse, error) {
		b := barrier.New(c, p)
		if err := b.Set(ctx); err != nil {
			return recipeUse{}, err
		}
		return recipeUse{func(ctx context.Context) error {
			if ok, _, err := c.Exists(ctx, p); err != nil || !ok {
				return fmt.Errorf("barrier no longer set (%v)", err)
			}
			return nil
		}, b.Remove}, nil
	}},
	{"double barrier", func(ctx context.Context, c *client.Client, p string) (recipeUse, error) {
		d := barrier.NewDouble(c, p, 1)
		if err := d.Enter(ctx); err != nil {
			return recipeUse{}, err
		}
		return recipeUse{noop, d.Leave}, nil
	}},
	{"rendezvous", func(ctx context.Context, c *client.Client, p string) (recipeUse, error) {
		pub, err := rendezvous.New(c, p).PublishEphemeral(ctx, []byte("10.0.0.1:80"))
		if err != nil {
			return recipeUse{}, err
		}
		return recipeUse{func(ctx context.Context) error {
			if err := pub.Err(); err != nil {
				return err
			}
			if data, err := rendezvous.New(c, p).Wait(ctx); err != nil || string(data) != "10.0.0.1:80" {
				return fmt.Errorf("zr reads %q (%v)", data, err)
			}
			return nil
		}, pub.Remove}, nil
	}},
	{"configwatch", func(ctx context.Context, c *client.Client, p string) (recipeUse, error) {
		k := configwatch.New(c, p, configwatch.Raw)
		if _, err := k.Publish(ctx, configwatch.Values{"workers": []byte("8")}); err != nil {
			return recipeUse{}, err
		}
		return recipeUse{func(ctx context.Context) error {
			s, err := k.Get(ctx)
			if err != nil || len(s.Value) != 1 || string(s.Value["workers"]) != "8" {
				return fmt.Errorf("configuration reads %q (%v)", s.Value, err)
			}
			return nil
		}, noop}, nil
	}},
	{"membership", func(ctx context.Context, c *client.Client, p string) (recipeUse, error) {
		g := membership.New(c, p)
		m, err := g.Join(ctx, "m1", []byte("a"))
		if err != nil {
			return recipeUse{}, err
		}
		return recipeUse{func(ctx context.Context) error {
			if err := m.Err(); err != nil {
				return err
			}
			if l, err := g.List(ctx); err != nil || len(l) != 1 {
				return fmt.Errorf("group lists %d members (%v), want 1", len(l), err)
			}
			return nil
		}, m.Leave}, nil
	}},
	{"discovery", func(ctx context.Context, c *client.Client, p string) (recipeUse, error) {
		// The path is a service's directory: the base is its parent.
		base, service := client.SplitPath(p)
		d := discovery.New(c, base)
		r, err := d.Register(ctx, discovery.Instance{Name: service, ID: "i1", Address: "10.0.0.1", Port: 80})
		if err != nil {
			return recipeUse{}, err
		}
		return recipeUse{func(ctx context.Context) error {
			if err := r.Err(); err != nil {
				return err
			}
			if l, err := d.Instances(ctx, service); err != nil || len(l) != 1 {
				return fmt.Errorf("service lists %d instances (%v), want 1", len(l), err)
			}
			return nil
		}, r.Unregister}, nil
	}},
	{"cache", func(ctx context.Context, c *client.Client, p string) (recipeUse, error) {
		k, err := cache.OpenTree(ctx, c, p)
		if err != nil {
			return recipeUse{}, err
		}
		return recipeUse{noop, func(context.Context) error { k.Close(); return nil }}, nil
	}},
}

// The outcomes of a second recipe put on a path that a first one uses.
const (
	shareRefused  = "refused"  // errors.Is(err, recipes.ErrOtherRecipe), nothing left of the attempt
	shareConflict = "conflict" // errors.Is(err, recipes.ErrConflict), nothing left of the attempt
	shareCoexist  = "coexist"  // both work, neither touches the other's nodes (see shareCoexisting)
	shareGap      = "gap"      // not detected, and not harmless: see shareGaps
)

// shareCoexisting are the pairs that share a path harmlessly, and why. The
// first recipe's nodes are untouched, and it works on; the second works
// too. Any pair not listed here, in shareGaps or by shareOutcome's rules is
// expected to be refused.
//
// A lock, read/write lock, election, semaphore, group member or service
// instance on a configuration's path, or on a double barrier's while its
// round is open (the barrier of one here), is refused because of the
// persistent ready node there (recipes.ReadyName), and so is a counter on
// an open barrier (recipes.OpenBarrierOf). Before a barrier's round opens,
// its directory holds only its members' nodes, UUIDs that nothing tells
// from another recipe's names (a member's, an instance's), and those
// recipes go ahead beside it: each queue ignores the other's children, a
// new group lists the barrier's members, discovery skips them, and a
// counter writes its value into the directory's data, which the barrier's
// loss accounting reads; the barrier refuses the path from its next Enter
// on.
var shareCoexisting = map[string]string{
	// Directories whose recipes ignore each other's children: no node of
	// either is touched. They do not exclude each other either, and
	// neither layout marks its directory, so nothing tells them apart.
	"lock>semaphore":           "each ignores the other's children (lock nodes; locks and leases)",
	"rwlock>semaphore":         "each ignores the other's children",
	"election>semaphore":       "each ignores the other's children",
	"semaphore>lock":           "each ignores the other's children",
	"semaphore>rwlock":         "each ignores the other's children",
	"semaphore>election":       "each ignores the other's children",
	"semaphore>double barrier": "each ignores the other's children (UUIDs and ready; locks and leases)",
	"discovery>double barrier": "the barrier ignores the instance's node",
	// A counter keeps its value in the data of a node whose data the first
	// recipe does not use; its node's children are no matter to it.
	"semaphore>counter":   "the semaphore does not use its node's data",
	"configwatch>counter": "a configuration does not use its node's data",
	"membership>counter":  "a group does not use its node's data",
	"discovery>counter":   "a service directory's data is not used",
	"counter>configwatch": "the keys and ready become children of the counter's node, " +
		"which a counter ignores; the configuration does not read its node's data",
	"counter>lock":       "the counter ignores its node's children but its deltas; a lock its directory's data",
	"counter>rwlock":     "as counter>lock",
	"counter>election":   "as counter>lock",
	"counter>semaphore":  "as counter>lock",
	"counter>membership": "as counter>lock",
	"counter>discovery":  "as counter>lock",
	"lock>discovery":     "the lock ignores the instance's node",
	"rwlock>discovery":   "as lock>discovery",
	"election>discovery": "as lock>discovery",
	// A group's members are ephemeral children that are not a queue
	// recipe's protected nodes: a lock's, read/write lock's or election's
	// node and a semaphore's persistent directories are no members.
	"lock>membership":      "the lock ignores the member's node; the group leaves out the lock's node",
	"rwlock>membership":    "as lock>membership",
	"election>membership":  "as lock>membership",
	"semaphore>membership": "the semaphore ignores the member's node; the group leaves out its persistent locks and leases",
	"membership>lock":      "as lock>membership",
	"membership>rwlock":    "as lock>membership",
	"membership>election":  "as lock>membership",
	"membership>semaphore": "as semaphore>membership",
	// A second recipe that reads every child as one of its own (a group
	// lists each ephemeral node as a member) is misled by the first one's
	// nodes, but touches none of them.
	"discovery>membership": "discovery leaves out the member's node, whose data is no instance; the new group lists the instance",
	"discovery>lock":       "the lock ignores the instance's node; discovery skips the lock's node, which is no instance",
	"discovery>rwlock":     "as discovery>lock",
	"discovery>election":   "as discovery>lock",
	"discovery>semaphore":  "the semaphore's directories sit beside the instance; each ignores the other's",
	"semaphore>discovery":  "the semaphore ignores the instance's node",
}

// shareGaps are the pairs that are neither refused nor harmless today: the
// second recipe cannot tell the first one's nodes from its own, and it
// changes them or is refused only later. They run, to show that nothing
// hangs, but their outcome is not checked.
var shareGaps = map[string]string{
	"counter>barrier": "a simple barrier's node is any persistent node without children: " +
		"Set finds the counter's node set, and Remove deletes it, value and all",
	"barrier>counter": "the counter writes its value into the barrier's node, which the barrier does not read: " +
		"a set barrier is a persistent node without data or children, which is what a fresh counter is " +
		"(empty data reads as 0, as Curator and kazoo read it), so nothing tells them apart",
	"membership>double barrier": "the group lists the barrier's members (ephemeral UUIDs, which any member id may be) while they are there",
	"membership>discovery": "the group lists the instance (an ephemeral node whose name any member id may be) while it is there; " +
		"discovery does not list the service's directory before it registers",
	"barrier>lock": "a set barrier is a persistent node without data or children, which nothing tells from an empty " +
		"directory: the lock goes ahead, and the barrier's node becomes a directory: Wait and Remove refuse it " +
		"(recipes.ErrOtherRecipe) while the other recipe's nodes are in it",
	"barrier>rwlock":         "as barrier>lock",
	"barrier>election":       "as barrier>lock",
	"barrier>semaphore":      "as barrier>lock, for good: the semaphore's directories stay",
	"barrier>double barrier": "as barrier>lock",
	"barrier>configwatch":    "as barrier>lock, for good: the keys stay",
	"barrier>membership":     "as barrier>lock",
	"barrier>discovery":      "as barrier>lock",
}

// shareOutcome is what a careful user may expect of second on first's
// path.
func shareOutcome(first, second string) string {
	first, second = recipeOf(first), recipeOf(second)
	pair := first + ">" + second
	switch {
	case second == "cache":
		return shareCoexist // a cache only reads, whatever it mirrors
	case second == "rendezvous":
		return shareConflict // zr exists, and is not the rendezvous's own
	case shareCoexisting[pair] != "":
		return shareCoexist
	case shareGaps[pair] != "":
		return shareGap
	}
	return shareRefused
}

// recipeOf is the recipe of a kind: a read/write lock's modes are one.
func recipeOf(kind string) string {
	return strings.TrimSuffix(strings.TrimSuffix(kind, " write"), " read")
}

// Two kinds of recipe on one path. A careful user expects the second one
// to be refused at once, with recipes.ErrOtherRecipe (or, for a
// rendezvous, whose zr is taken, recipes.ErrConflict), leaving nothing
// behind, while the first recipe's nodes stay as they were and it works
// on; or, where the layouts let both share the path harmlessly, both to
// work (shareCoexisting says why). Every pair runs, in every order, on both
// servers, and no call may hang.
func TestRecipeKindsDoNotSharePath(t *testing.T) {
	known := map[string]bool{}
	for _, k := range recipeKinds {
		known[recipeOf(k.name)] = true
	}
	for pair := range maps.Keys(shareCoexisting) {
		if first, second, _ := strings.Cut(pair, ">"); !known[first] || !known[second] || shareGaps[pair] != "" {
			t.Fatalf("shareCoexisting: %q is no pair of recipes, or is a gap too", pair)
		}
	}
	for pair := range maps.Keys(shareGaps) {
		if first, second, _ := strings.Cut(pair, ">"); !known[first] || !known[second] {
			t.Fatalf("shareGaps: %q is no pair of recipes", pair)
		}
	}
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		first, second := b.Connect(t), b.Connect(t)
		for _, k1 := range recipeKinds {
			if k1.name == "cache" {
				continue // it leaves nothing on the path for another to find
			}
			for _, k2 := range recipeKinds {
				if recipeOf(k1.name) == recipeOf(k2.name) {
					continue // one recipe's own participants share its path
				}
				t.Run(k1.name+">"+k2.name, func(t *testing.T) {
					sharePath(t, first, second, k1, k2)
				})
			}
		}
	})
}

func sharePath(t *testing.T, c1, c2 *client.Client, k1, k2 recipeKind) {
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(30*time.Second))
	defer cancel()
	path := zktest.UniquePath(t) + "/p"
	want := shareOutcome(k1.name, k2.name)
	u1, err := k1.take(ctx, c1, path)
	if err != nil {
		t.Fatalf("%s: %v", k1.name, err)
	}
	before := subtree(t, ctx, c1, path)
	quick, stop := context.WithTimeout(ctx, zktest.Scale(5*time.Second))
	u2, err := k2.take(quick, c2, path)
	stop()
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s on the path of a %s: hung (%v)", k2.name, k1.name, err)
	}
	after := subtree(t, ctx, c1, path)
	if err == nil {
		if rerr := u2.release(ctx); rerr != nil && want != shareGap {
			t.Errorf("%s on the path of a %s: release: %v", k2.name, k1.name, rerr)
		}
	}
	switch want {
	case shareGap:
		t.Logf("known shareGap, not checked (%v): %s", err, shareGaps[recipeOf(k1.name)+">"+recipeOf(k2.name)])
		_ = u1.release(ctx)
		return
	case shareRefused, shareConflict:
		target := map[string]error{shareRefused: recipes.ErrOtherRecipe, shareConflict: recipes.ErrConflict}[want]
		if !errors.Is(err, target) {
			t.Fatalf("%s on the path of a %s: %v, want an error matching %v", k2.name, k1.name, err, target)
		}
		if !maps.Equal(before, after) {
			t.Errorf("%s shareRefused on the path of a %s changed it:\n before %v\n after  %v", k2.name, k1.name, before, after)
		}
	case shareCoexist:
		if err != nil {
			t.Fatalf("%s on the path of a %s: %v, want both to work (%s)", k2.name, k1.name, err, shareCoexisting[recipeOf(k1.name)+">"+recipeOf(k2.name)])
		}
		for node, was := range before {
			if node == path && k2.name == "counter" {
				continue // the counter's value, in data the first does not use
			}
			if after[node] != was {
				t.Errorf("%s beside a %s changed %s: %s, was %s", k2.name, k1.name, node, after[node], was)
			}
		}
	}
	if err := u1.ok(ctx); err != nil {
		t.Errorf("the %s, after a %s on its path: %v", k1.name, k2.name, err)
	}
	if err := u1.release(ctx); err != nil {
		t.Errorf("the %s, after a %s on its path: release: %v", k1.name, k2.name, err)
	}
}

// subtree maps every node under path, path included, to its data and
// version, as c sees them after a sync.
func subtree(t *testing.T, ctx context.Context, c *client.Client, path string) map[string]string {
	t.Helper()
	if err := c.Sync(ctx, path); err != nil && !errors.Is(err, client.ErrNoNode) {
		t.Fatal(err)
	}
	nodes := map[string]string{}
	var walk func(string)
	walk = func(p string) {
		data, st, err := c.Get(ctx, p)
		if errors.Is(err, client.ErrNoNode) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		nodes[p] = fmt.Sprintf("%q@v%d", data, st.Version)
		children, _, err := c.Children(ctx, p)
		if err != nil && !errors.Is(err, client.ErrNoNode) {
			t.Fatal(err)
		}
		slices.Sort(children)
		for _, ch := range children {
			walk(client.JoinPath(p, ch))
		}
	}
	walk(path)
	return nodes
}
