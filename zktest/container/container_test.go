package container

import (
	"context"
	"strings"
	"testing"
	"time"

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

func mode(t *testing.T, addr string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zktest.Scale(10*time.Second))
	defer cancel()
	out, err := zktest.FourLetterWord(ctx, addr, "srvr")
	if err != nil {
		t.Fatalf("srvr %s: %v", addr, err)
	}
	for _, line := range strings.Split(out, "\n") {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(m)
		}
	}
	t.Fatalf("srvr %s: no Mode in %q", addr, out)
	return ""
}

func TestStandalone(t *testing.T) {
	z := Run(t) // skipped without Docker
	if len(z.Servers()) != 1 || len(z.Containers()) != 1 {
		t.Fatalf("Servers %v, %d containers", z.Servers(), len(z.Containers()))
	}
	if m := mode(t, z.Servers()[0]); m != "standalone" {
		t.Fatalf("Mode = %q", m)
	}
}

func TestEnsemble(t *testing.T) {
	z := RunEnsemble(t, 3) // skipped without Docker
	if len(z.Servers()) != 3 || z.ConnectString() != strings.Join(z.Servers(), ",") {
		t.Fatalf("Servers %v, ConnectString %q", z.Servers(), z.ConnectString())
	}
	leaders := 0
	for _, addr := range z.Servers() {
		switch m := mode(t, addr); m {
		case "leader":
			leaders++
		case "follower":
		default:
			t.Errorf("%s: Mode %q", addr, m)
		}
	}
	if leaders != 1 {
		t.Fatalf("%d leaders", leaders)
	}
}
