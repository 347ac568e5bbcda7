package main

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// statusJSON is ensemble status -o json's output.
type statusJSON struct {
	Servers []struct {
		Server      string `json:"server"`
		Mode        string `json:"mode"`
		Zxid        *int64 `json:"zxid"`
		Connections *int64 `json:"connections"`
		Watches     *int64 `json:"watches"`
		Version     string `json:"version"`
		Error       string `json:"error"`
	} `json:"servers"`
	Quorum bool `json:"quorum"`
}

func ensembleStatus(t *testing.T, servers string) (statusJSON, result) {
	t.Helper()
	r := zkit(t, "ensemble", "status", "-o", "json", "--servers", servers, "--connect-timeout", "5s")
	var got statusJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || strings.Count(r.stdout, "\n") != 1 {
		t.Fatalf("status %d, stdout %q: want one JSON line (%v)", r.status, r.stdout, err)
	}
	return got, r
}

// A standalone server is a quorum that answers: status 0, with its
// figures, as a table and in JSON, on both servers.
func TestEnsembleStatus(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		r := zkitOn(t, b.Addr(), exitOK, "ensemble", "status")
		lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "SERVER ") || !strings.Contains(lines[0], " WATCHES ") ||
			!strings.HasPrefix(lines[1], b.Addr()+" ") || !strings.Contains(lines[1], " standalone ") ||
			lines[2] != "quorum: yes (1 of 1 servers serve, 1 answer)" {
			t.Fatalf("status:\n%s", r.stdout)
		}
		got, r := ensembleStatus(t, b.Addr())
		s := got.Servers[0]
		if r.status != exitOK || !got.Quorum || len(got.Servers) != 1 || s.Server != b.Addr() || s.Mode != "standalone" ||
			s.Zxid == nil || s.Connections == nil || s.Watches == nil || !strings.HasPrefix(s.Version, "3.8.") || s.Error != "" {
			t.Fatalf("status %d: %s", r.status, r.stdout)
		}
	})
}

// With no server answering, the status says so for each and exits 3.
func TestEnsembleStatusNoneAnswers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := zkitOn(t, addr, exitUnreachable, "ensemble", "status")
	if !strings.Contains(r.stdout, addr+"  down ") || !strings.Contains(r.stdout, "refused") || !strings.Contains(r.stdout, "quorum: no") {
		t.Errorf("stdout %q", r.stdout)
	}
	oneErrorLine(t, r, "zkit ensemble status: no server answered")
}

// On a three-server ensemble: a leader and two followers; with the
// leader stopped, the two others elect one and the quorum answers (the
// stopped one down); with a second stopped, the last one does not serve
// and the status exits 1: no quorum.
func TestEnsembleStatusQuorum(t *testing.T) {
	z := zktest.StartEnsemble(t, 3)
	servers := z.ConnectString()
	modes := func(got statusJSON) map[string]int {
		m := map[string]int{}
		for _, s := range got.Servers {
			m[s.Mode]++
		}
		return m
	}
	got, r := ensembleStatus(t, servers)
	if m := modes(got); r.status != exitOK || !got.Quorum || m["leader"] != 1 || m["follower"] != 2 {
		t.Fatalf("status %d: %s", r.status, r.stdout)
	}
	leader, err := z.Leader()
	if err != nil {
		t.Fatal(err)
	}
	z.Kill(leader)
	recipetest.Eventually(t, "the two left elect a leader, and the status says so", func() bool {
		got, r = ensembleStatus(t, servers)
		m := modes(got)
		return r.status == exitOK && got.Quorum && m["leader"] == 1 && m["follower"] == 1 && m["down"] == 1 &&
			got.Servers[leader].Mode == "down"
	})
	text := zkitOn(t, servers, exitOK, "ensemble", "status")
	t.Logf("with one server down:\n%s", text.stdout)
	if !strings.Contains(text.stdout, "quorum: yes (2 of 3 servers serve, 2 answer)") {
		t.Errorf("status with one server down:\n%s", text.stdout)
	}
	next := (leader + 1) % 3
	z.Kill(next)
	recipetest.Eventually(t, "the last server stops serving, and the status exits 1", func() bool {
		got, r = ensembleStatus(t, servers)
		m := modes(got)
		return r.status == exitFailed && !got.Quorum && m["not serving"] == 1 && m["down"] == 2
	})
	oneErrorLine(t, r, "zkit ensemble status: no quorum: 1 of 3 servers answer, none serves")
}

func TestEnsembleUsage(t *testing.T) {
	expectUsage(t, "zkit ensemble", [][]string{
		{"ensemble"},
		{"ensemble", "what"},
		{"ensemble", "status", "extra"},
		{"ensemble", "status", "--admin-port", "-1"},
		{"ensemble", "status", "--admin-port", "65536"},
	})
}
