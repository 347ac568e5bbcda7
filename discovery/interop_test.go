package discovery_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zkit-dev/zkit/discovery"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// curator is the Java peer's ServiceDiscovery "j" (and ServiceProvider,
// once started) on one base.
type curator struct {
	t    *testing.T
	java *recipetest.CuratorPeer
}

func startCurator(t *testing.T, b zktest.Backend, base string) *curator {
	t.Helper()
	cur := &curator{t: t, java: recipetest.StartDiscovery(t, b.Servers)}
	cur.do("j start "+base, "j started")
	return cur
}

// do sends line and expects want.
func (c *curator) do(line, want string) {
	c.t.Helper()
	c.java.Send("%s", line)
	c.java.Expect(want)
}

// ask sends "ID op args" and returns the answer after "ID op' ".
func (c *curator) ask(id, line, answer string) string {
	c.t.Helper()
	c.java.Send("%s %s", id, line)
	got := c.java.Next()
	prefix := id + " " + answer
	if !strings.HasPrefix(got, prefix) {
		c.t.Fatalf("curator peer said %q to %q, want %q...", got, line, prefix)
	}
	return strings.TrimPrefix(strings.TrimPrefix(got, prefix), " ")
}

// instances is Curator's queryForInstances, as Curator writes them.
func (c *curator) instances(service string) []discovery.Instance {
	c.t.Helper()
	var out []discovery.Instance
	if err := json.Unmarshal([]byte(c.ask("j", "instances "+service, "instances")), &out); err != nil {
		c.t.Fatal(err)
	}
	return out
}

// eventually asks until Curator's instances of service render as want.
func (c *curator) eventually(service, want string) []discovery.Instance {
	c.t.Helper()
	deadline := time.Now().Add(zktest.Scale(30 * time.Second))
	for {
		got := c.instances(service)
		if show(got) == want {
			return got
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("Curator's queryForInstances(%s) = %q, want %q", service, show(got), want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// expire expires the Java peer's session.
func (c *curator) expire(ctx context.Context, b zktest.Backend) int64 {
	c.t.Helper()
	f := strings.Fields(c.ask("j", "session", "session"))
	id, err := strconv.ParseUint(f[0], 16, 64)
	if err != nil {
		c.t.Fatal(err)
	}
	pw, err := hex.DecodeString(f[1])
	if err != nil {
		c.t.Fatal(err)
	}
	if err := zktest.ExpireSession(ctx, b.Addr(), int64(id), pw); err != nil {
		c.t.Fatal(err)
	}
	return int64(id)
}

// details is the Java peer's payload class.
type details struct {
	Zone   string `json:"zone"`
	Weight int    `json:"weight"`
}

// A Go-registered instance is found by Curator with every field equal,
// and a Curator-registered one by zkit; each side's providers pick the
// other's instances (never a disabled one); unregistering is seen by both;
// a session expiry removes an instance and registering it again brings it
// back, on either side.
func TestCuratorInterop(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		cur := startCurator(t, b, base)
		opts, cut, heal := b.Blackhole(t)
		gc := b.Connect(t, opts...)
		d := discovery.New(gc, base, discovery.WithSuspendTolerance(time.Hour))
		reader := discovery.New(admin, base)
		feed := reader.Watch(ctx, "api")

		// zkit registers, Curator finds it with every field as registered.
		payload, err := discovery.JavaPayload(recipetest.DiscoveryPeerDetails, details{"eu", 3})
		if err != nil {
			t.Fatal(err)
		}
		spec, _ := discovery.ParseURISpec("{scheme}://{address}:{ssl-port}/{name}")
		goInst := discovery.Instance{Name: "api", ID: "go-1", Address: "10.0.0.1", Port: 8080, SSLPort: 8443,
			Payload: payload, URISpec: spec, Extra: map[string]json.RawMessage{"zkitOnly": json.RawMessage(`{"x":1}`), `odd "name"`: json.RawMessage(`2`)}}
		goReg, err := d.Register(ctx, goInst)
		if err != nil {
			t.Fatal(err)
		}
		seen := cur.eventually("api", "go-1@10.0.0.1:8080")[0]
		want := goReg.Instance()
		want.Extra = nil // Curator drops members it does not know; zkit keeps them
		if !seen.Equal(want) {
			t.Fatalf("Curator read\n%v\nzkit registered\n%v", seen, want)
		}
		if got := cur.ask("j", "payload api go-1", "payload"); got != recipetest.DiscoveryPeerDetails+" eu/3" {
			t.Fatalf("Curator's payload of the zkit instance: %q", got)
		}
		if got := cur.ask("j", "uri api go-1", "uri"); got != "https://10.0.0.1:8443/api" || got != want.URI(nil) {
			t.Fatalf("Curator's URI %q, zkit's %q", got, want.URI(nil))
		}

		// Curator registers, zkit finds it with every field as Curator has it.
		cur.do("j register api java-1 10.1.1.1 9090 - {scheme}://{address}:{port} us 7", "j registered")
		javaInst := cur.eventually("api", "go-1@10.0.0.1:8080,java-1@10.1.1.1:9090")[1]
		awaitSnapshot(t, feed, "go-1@10.0.0.1:8080,java-1@10.1.1.1:9090")
		found, err := reader.Instance(ctx, "api", "java-1")
		if err != nil {
			t.Fatal(err)
		}
		if !found.Equal(javaInst) || found.Type != discovery.Dynamic || found.Disabled || found.SSLPort != 0 ||
			found.Registered.IsZero() || found.Stat.EphemeralOwner == 0 || len(found.Extra) != 0 {
			t.Fatalf("zkit read\n%v\nCurator has\n%v", found, javaInst)
		}
		var p details
		if err := json.Unmarshal(found.Payload, &p); err != nil || p != (details{"us", 7}) {
			t.Fatalf("payload %s: %+v, %v", found.Payload, p, err)
		}
		if uri := cur.ask("j", "uri api java-1", "uri"); found.URI(nil) != uri || uri != "http://10.1.1.1:9090" {
			t.Fatalf("zkit's URI %q, Curator's %q", found.URI(nil), uri)
		}
		if names, err := reader.Services(ctx); err != nil || strings.Join(names, ",") != "api" {
			t.Fatalf("Services = %v, %v", names, err)
		}
		if got := cur.ask("j", "names", "names"); got != "api" {
			t.Fatalf("Curator's names: %q", got)
		}

		// A disabled zkit instance: listed by both, picked by neither.
		off := discovery.Instance{Name: "api", ID: "go-off", Address: "10.0.0.2", Port: 8080, Disabled: true}
		offReg, err := d.Register(ctx, off)
		if err != nil {
			t.Fatal(err)
		}
		listed := cur.eventually("api", "go-1@10.0.0.1:8080,go-off@10.0.0.2:8080,java-1@10.1.1.1:9090")
		if !listed[1].Disabled {
			t.Fatal("Curator reads the disabled zkit instance as enabled")
		}
		cur.do("j provider api roundrobin", "j provider")
		curatorPicks(t, cur, "go-1,java-1")
		zp := reader.Provider(ctx, "api")
		eventuallyUsable(t, zp, "go-1,java-1")
		picked := map[string]bool{}
		for range 4 {
			inst, err := zp.Pick(ctx)
			if err != nil {
				t.Fatal(err)
			}
			picked[inst.ID] = true
		}
		if len(picked) != 2 || !picked["go-1"] || !picked["java-1"] {
			t.Fatalf("zkit's provider picked %v", picked)
		}

		// Unregistering, seen by both.
		if err := offReg.Unregister(ctx); err != nil {
			t.Fatal(err)
		}
		if err := goReg.Unregister(ctx); err != nil {
			t.Fatal(err)
		}
		cur.eventually("api", "java-1@10.1.1.1:9090")
		curatorPicks(t, cur, "java-1")
		cur.do("j unregister", "j unregistered")
		awaitSnapshot(t, feed, "")
		eventuallyPicks(t, zp, "")
		curatorPicks(t, cur, "")

		// zkit's session expires: Curator sees the instance gone, then back.
		goReg, err = d.Register(ctx, goInst)
		if err != nil {
			t.Fatal(err)
		}
		cur.eventually("api", "go-1@10.0.0.1:8080")
		cut() // so that it comes back only once Curator has seen it gone
		b.ExpireSession(t, goReg.Session())
		cur.eventually("api", "")
		heal()
		if _, err := goReg.Present(ctx); err != nil {
			t.Fatal(err)
		}
		cur.eventually("api", "go-1@10.0.0.1:8080")
		curatorPicks(t, cur, "go-1")

		// Curator's session expires: its instance is gone, and Curator
		// registers it again under its new session, as zkit sees.
		cur.do("j register api java-2 10.1.1.2 9090 - - - 0", "j registered")
		before := awaitSnapshot(t, feed, "go-1@10.0.0.1:8080,java-2@10.1.1.2:9090")[1]
		old := cur.expire(ctx, b)
		after := awaitFeed(t, feed, "java-2 registered again", func(s []discovery.Instance) bool {
			return show(s) == "go-1@10.0.0.1:8080,java-2@10.1.1.2:9090" && s[1].Stat.Czxid != before.Stat.Czxid
		})[1]
		if after.Stat.EphemeralOwner == old || after.Stat.Czxid <= before.Stat.Czxid || !after.Equal(before) {
			t.Fatalf("java-2 again: owner 0x%x (was 0x%x), czxid %d (was %d)\n%v\n%v",
				after.Stat.EphemeralOwner, old, after.Stat.Czxid, before.Stat.Czxid, after, before)
		}
		eventuallyUsable(t, zp, "go-1,java-2")

		// Curator's close unregisters; zkit's registration is untouched.
		cur.do("j close", "j closed")
		awaitSnapshot(t, feed, "go-1@10.0.0.1:8080")
		if goReg.Err() != nil {
			t.Fatalf("zkit's registration disturbed: %v", goReg.Err())
		}
	})
}

// zkit does not take an id Curator holds. Curator, registering an id that
// a zkit instance holds, deletes its node and creates its own, which zkit
// meanwhile may have created again (it keeps its node present): either
// ends up holding the id, never both, and zkit never deletes a node it
// does not own.
func TestCuratorSameID(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		admin := b.Connect(t)
		base := basePath(t, admin)
		cur := startCurator(t, b, base)
		cur.do("j register api java-1 10.1.1.1 9090 - - - 0", "j registered")
		cur.eventually("api", "java-1@10.1.1.1:9090")
		d := discovery.New(b.Connect(t), base)
		if _, err := d.Register(ctx, instance("java-1", 1)); !isConflict(err) {
			t.Fatalf("zkit Register of Curator's id = %v, want ErrConflict", err)
		}
		cur.eventually("api", "java-1@10.1.1.1:9090")

		r, err := d.Register(ctx, instance("go-1", 1))
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(cur.ask("j", "session", "session"))
		javaSession, _ := strconv.ParseUint(f[0], 16, 64)
		cur.do("k start "+base, "k started")
		cur.do("k register api go-1 10.9.9.9 9999 - - - 0", "k registered")
		deadline := time.Now().Add(zktest.Scale(30 * time.Second))
		for {
			ok, st, err := admin.Exists(ctx, r.Node())
			if err != nil {
				t.Fatal(err)
			}
			zkitHolds := ok && st.EphemeralOwner == r.Session().ID() && r.Err() == nil
			curatorHolds := ok && st.EphemeralOwner == int64(javaSession) && isConflict(r.Err())
			if zkitHolds || curatorHolds {
				t.Logf("after the fight over go-1: zkit holds it %v, Curator %v", zkitHolds, curatorHolds)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("go-1 not settled: exists %v, owner %v, zkit's registration: %v", ok, st, r.Err())
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

func isConflict(err error) bool {
	var ce *discovery.ConflictError
	return errors.As(err, &ce) && errors.Is(err, discovery.ErrConflict)
}

// curatorPicks waits until Curator's provider's getAllInstances are want
// (ids, comma separated), then checks that its round robin picks each.
func curatorPicks(t *testing.T, cur *curator, want string) {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(30 * time.Second))
	for {
		got := cur.ask("j", "all", "all")
		if got == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Curator's provider has %q, want %q", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	n, none := strings.Count(want, ",")+1, want == ""
	var picked []string
	for range n {
		picked = append(picked, cur.ask("j", "pick", "picked"))
	}
	slices.Sort(picked)
	if got := strings.Join(picked, ","); (none && got != "-") || (!none && got != want) {
		t.Fatalf("Curator's round robin picked %s of %q", got, want)
	}
}
