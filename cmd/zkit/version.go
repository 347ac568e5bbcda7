package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print zkit's version and what it was built with",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(a.stdout, versionLine())
			return nil
		},
	}
}

// versionLine is "zkit VERSION (go-zookeeper VERSION, GOVERSION)"; VERSION
// is the module version when installed with go install, else "(devel)".
func versionLine() string {
	version, wire := "(devel)", "?"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, d := range bi.Deps {
			if d.Path == "github.com/go-zookeeper/zk" {
				wire = d.Version
			}
		}
	}
	return fmt.Sprintf("zkit %s (go-zookeeper %s, %s)", version, wire, runtime.Version())
}
