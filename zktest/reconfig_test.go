package zktest

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// An ensemble started WithReconfig holds its members, with their client
// ports, in /zookeeper/config; a server that Join starts serves clients
// before it is a member, and a super user's reconfiguration adds it as a
// participant and removes it again, which nobody else may do.
func TestReconfigEnsemble(t *testing.T) {
	z := StartEnsemble(t, 3, WithReconfig(), WithSuperUser("super", "secret"))
	c := connectProbe(t, z.Servers(), 10*time.Second)
	members := func() []string {
		t.Helper()
		if _, err := c.Sync("/"); err != nil {
			t.Fatal(err)
		}
		data, _, err := c.Get("/zookeeper/config")
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "server.") {
				lines = append(lines, l)
			}
		}
		slices.Sort(lines)
		return lines
	}
	initial := []string{z.ServerLine(0, "participant"), z.ServerLine(1, "participant"), z.ServerLine(2, "participant")}
	if got := members(); !slices.Equal(got, initial) {
		t.Fatalf("/zookeeper/config lists %q, want %q", got, initial)
	}

	j := z.Join()
	if j != 3 || len(z.Servers()) != 4 || z.PID(j) == 0 {
		t.Fatalf("Join = %d; servers %v", j, z.Servers())
	}
	if err := probe(z.Servers()[j]); err != nil {
		t.Fatalf("the joined server does not serve: %v", err)
	}
	if got := members(); !slices.Equal(got, initial) {
		t.Fatalf("after Join, before the reconfiguration: %q", got)
	}
	add := []string{z.ServerLine(j, "participant")}
	if _, err := c.IncrementalReconfig(add, nil, -1); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("reconfig without credentials: %v, want %v", err, zk.ErrNoAuth)
	}
	if err := c.AddAuth("digest", []byte("super:secret")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.IncrementalReconfig(add, nil, -1); err != nil {
		t.Fatalf("reconfig adding node %d: %v", j, err)
	}
	if got, want := members(), append(slices.Clone(initial), add...); !slices.Equal(got, want) {
		t.Fatalf("after adding node %d: %q, want %q", j, got, want)
	}
	if m, err := z.Mode(j); m != "follower" || err != nil {
		t.Errorf("node %d's mode %q, %v", j, m, err)
	}
	if _, err := c.IncrementalReconfig(nil, []string{"4"}, -1); err != nil {
		t.Fatalf("reconfig removing node %d: %v", j, err)
	}
	if got := members(); !slices.Equal(got, initial) {
		t.Fatalf("after removing node %d: %q", j, got)
	}
}

// Join refuses an ensemble that cannot be reconfigured.
func TestJoinNeedsReconfig(t *testing.T) {
	z := &ZooKeeper{}
	if _, err := z.join(); err == nil || !strings.Contains(err.Error(), "WithReconfig") {
		t.Fatalf("join: %v", err)
	}
}
