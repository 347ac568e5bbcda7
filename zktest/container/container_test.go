package container

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	docker "github.com/moby/moby/api/types/container"
	dockernet "github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/zktest"
)

func TestNodeEnv(t *testing.T) {
	c := newConfig(nil)
	if c.image != DefaultImage {
		t.Errorf("image = %q", c.image)
	}
	solo := nodeEnv(c, 1, 1)
	if _, ok := solo["ZOO_MY_ID"]; ok {
		t.Errorf("standalone node has ZOO_MY_ID: %v", solo)
	}
	if solo["ZOO_TICK_TIME"] != "200" || !strings.Contains(solo["ZOO_CFG_EXTRA"], "minSessionTimeout=400") ||
		solo["ZOO_4LW_COMMANDS_WHITELIST"] != "*" {
		t.Errorf("standalone env = %v", solo)
	}

	c = newConfig([]Option{WithEnv("ZOO_TICK_TIME", "2000"), WithImage("zookeeper:3.9")})
	env := nodeEnv(c, 2, 3)
	want := "server.1=zk1:2888:3888;2181 server.2=zk2:2888:3888;2181 server.3=zk3:2888:3888;2181"
	if env["ZOO_MY_ID"] != "2" || env["ZOO_SERVERS"] != want || env["ZOO_TICK_TIME"] != "2000" || c.image != "zookeeper:3.9" {
		t.Errorf("ensemble node 2 env = %v (image %s)", env, c.image)
	}
}

func TestStandalone(t *testing.T) {
	z := Run(t) // skipped without Docker
	if len(z.Servers()) != 1 || len(z.Containers()) != 1 {
		t.Fatalf("Servers %v, %d containers", z.Servers(), len(z.Containers()))
	}
	if m, err := z.Mode(0); err != nil || m != "standalone" {
		t.Fatalf("Mode = %q, %v", m, err)
	}
	if i, err := z.Leader(); err != nil || i != 0 {
		t.Fatalf("Leader = %d, %v", i, err)
	}
}

// A 3-node ensemble from the official image: one leader, two followers.
// The leader is killed; another takes over, and a client's session and
// writes go on. The killed node is restarted on the same port, rejoins as
// a follower, and has the writes made without it.
func TestEnsembleFailover(t *testing.T) {
	z := RunEnsemble(t, 3) // skipped without Docker
	if len(z.Servers()) != 3 || z.ConnectString() != strings.Join(z.Servers(), ",") {
		t.Fatalf("Servers %v, ConnectString %q", z.Servers(), z.ConnectString())
	}
	old := waitLeader(t, z, -1)
	for i := range 3 {
		if m, err := z.Mode(i); i != old && (err != nil || m != "follower") {
			t.Fatalf("node %d: Mode %q, %v; want follower", i, m, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(2*time.Minute))
	defer cancel()
	c, err := client.Connect(ctx, z.Servers(), client.WithSessionTimeout(zktest.Scale(20*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sess := c.Session()
	const path = "/failover"
	if _, err := c.Create(ctx, path, []byte("before"), client.Persistent); err != nil {
		t.Fatal(err)
	}

	z.Kill(old)
	if _, err := z.Mode(old); err == nil {
		t.Fatalf("node %d answers after Kill", old)
	}
	next := waitLeader(t, z, old)
	for { // setting the same data again is harmless
		_, err = c.Set(ctx, path, []byte("after"), -1)
		if !client.IsRetryable(err) && !client.IsOutcomeUnknown(err) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("write after the leader's death: %v", err)
	}
	if c.Session() != sess {
		t.Fatal("the session did not survive the failover")
	}

	z.Restart(old)
	if m, err := z.Mode(old); err != nil || m != "follower" {
		t.Fatalf("restarted node %d: Mode %q, %v; want follower (node %d leads)", old, m, err, next)
	}
	only, err := client.Connect(ctx, z.Servers()[old:old+1])
	if err != nil {
		t.Fatal(err)
	}
	defer only.Close()
	if err := only.Sync(ctx, path); err != nil {
		t.Fatal(err)
	}
	if data, _, err := only.Get(ctx, path); err != nil || string(data) != "after" {
		t.Fatalf("the restarted node has %q (%v), want the write made without it", data, err)
	}
}

// waitLeader waits until a node other than not leads, and returns it.
func waitLeader(t *testing.T, z *ZooKeeper, not int) int {
	t.Helper()
	deadline := time.Now().Add(zktest.Scale(time.Minute))
	for {
		i, err := z.Leader()
		if err == nil && i != not {
			return i
		}
		if time.Now().After(deadline) {
			t.Fatalf("no leader other than node %d: %d, %v", not, i, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// What Docker is asked for, checked without Docker: the client port
// published on 127.0.0.1 at the chosen port (so that it survives Restart),
// and the node's environment.
func TestNodeRequest(t *testing.T) {
	var req testcontainers.GenericContainerRequest
	for _, c := range nodeCustomizers(newConfig(nil), 2, 3, 34567, nil) {
		if err := c.Customize(&req); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Contains(req.ExposedPorts, clientPort) || req.Env["ZOO_MY_ID"] != "2" || req.WaitingFor == nil {
		t.Fatalf("request: exposed %v, env %v, wait %v", req.ExposedPorts, req.Env, req.WaitingFor)
	}
	var hc docker.HostConfig
	req.HostConfigModifier(&hc)
	b := hc.PortBindings[dockernet.MustParsePort(clientPort)]
	if len(b) != 1 || b[0].HostIP.String() != "127.0.0.1" || b[0].HostPort != "34567" {
		t.Fatalf("port bindings %v", hc.PortBindings)
	}
}

// Mode with an index out of range is an error, not a panic (no Docker
// needed: no node is asked).
func TestModeBadIndexIsAnError(t *testing.T) {
	z := &ZooKeeper{servers: []string{"127.0.0.1:1"}}
	for _, i := range []int{-1, 1} {
		if m, err := z.Mode(i); err == nil || !strings.Contains(err.Error(), "no node") {
			t.Errorf("Mode(%d) = %q, %v; want an error naming the bad index", i, m, err)
		}
	}
}
