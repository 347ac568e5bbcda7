package main

import (
	"encoding/json"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionNamesRevision(t *testing.T) {
	t.Parallel()
	bi := &debug.BuildInfo{
		Main: debug.Module{Path: "github.com/zkit-dev/zkit", Version: "v1.2.3"},
		Deps: []*debug.Module{{Path: "github.com/go-zookeeper/zk", Version: "v1.0.4"}},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-11-26T12:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	v := versionOf(bi)
	if got, want := v.line(), "zkit v1.2.3 (revision 0123456789abcdef0123456789abcdef01234567, modified, go-zookeeper v1.0.4, "+v.Go+")"; got != want {
		t.Fatalf("line %q, want %q", got, want)
	}
	b, _ := json.Marshal(v)
	if want := `{"version":"v1.2.3","revision":"0123456789abcdef0123456789abcdef01234567","modified":true,"time":"2026-11-26T12:00:00Z","go_zookeeper":"v1.0.4","go":"` + v.Go + `"}`; string(b) != want {
		t.Fatalf("json %s, want %s", b, want)
	}
	if got := versionOf(&debug.BuildInfo{}).line(); !strings.HasPrefix(got, "zkit (devel) (go-zookeeper ?, go") {
		t.Fatalf("without build settings: %q", got)
	}
	// Without VCS stamps nothing says whether the tree was modified: JSON
	// must not claim it was not.
	if b, _ := json.Marshal(versionOf(&debug.BuildInfo{})); strings.Contains(string(b), "modified") {
		t.Fatalf("without build settings: json %s", b)
	}
}

// The command prints what the binary's build information says.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	want := buildVersion()
	if r := zkit(t, "version"); r.status != exitOK || r.stdout != want.line()+"\n" {
		t.Fatalf("zkit version: %+v, want %q", r, want.line())
	}
	var got version
	if r := zkit(t, "version", "-o", "json"); json.Unmarshal([]byte(r.stdout), &got) != nil || got != want {
		t.Fatalf("zkit version -o json: %q, want %+v", r.stdout, want)
	}
}
