package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print zkit's version and what it was built with",
		Long: `Prints zkit's version: the module version (a tag when installed with go install,
else "(devel)"), the VCS revision it was built from and whether the tree had
uncommitted changes ("modified"), when go build stamped them, and the versions of
go-zookeeper and Go. With -o json: {"version":..,"revision":..,"modified":true,
"time":..,"go_zookeeper":..,"go":..}, "revision" and "time" only when stamped and
"modified" only when true.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := buildVersion()
			return a.emit(v.line(), v)
		},
	}
}

// version is what zkit was built from.
type version struct {
	Version     string `json:"version"`            // the module version, or "(devel)"
	Revision    string `json:"revision,omitempty"` // vcs.revision, when stamped
	Modified    bool   `json:"modified,omitempty"` // vcs.modified: uncommitted changes (unknown without a revision)
	Time        string `json:"time,omitempty"`     // vcs.time: the revision's commit time
	GoZookeeper string `json:"go_zookeeper"`
	Go          string `json:"go"`
}

// buildVersion reads zkit's version from its build information.
func buildVersion() version {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(bi)
}

func versionOf(bi *debug.BuildInfo) version {
	v := version{Version: "(devel)", GoZookeeper: "?", Go: runtime.Version()}
	if bi == nil {
		return v
	}
	if bi.Main.Version != "" {
		v.Version = bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/go-zookeeper/zk" {
			v.GoZookeeper = d.Version
		}
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "vcs.time":
			v.Time = s.Value
		}
	}
	return v
}

// line is "zkit VERSION (revision REV[, modified], go-zookeeper VERSION,
// GOVERSION)"; the revision is left out when the build has none.
func (v version) line() string {
	var parts []string
	if v.Revision != "" {
		rev := "revision " + v.Revision
		if v.Modified {
			rev += ", modified"
		}
		parts = append(parts, rev)
	}
	parts = append(parts, "go-zookeeper "+v.GoZookeeper, v.Go)
	return fmt.Sprintf("zkit %s (%s)", v.Version, strings.Join(parts, ", "))
}

// versionLine is zkit's version on one line, for headers (bench).
func versionLine() string { return buildVersion().line() }
