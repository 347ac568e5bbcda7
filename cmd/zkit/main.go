// Command zkit is zkit's command-line tool.
//
//	zkit demo                    every recipe on the embedded reference server, checked
//	zkit serve [--listen ADDR]   run the bundled reference server
//
// Every subcommand lives in its own file and has the signature of run:
// it gets its arguments (after the subcommand's name) and returns an error,
// which main prints as one line on stderr before exiting with status 1.
package main

import (
	"errors"
	"fmt"
	"os"
)

// errUsage makes main print the usage and exit with status 2.
var errUsage = errors.New("usage")

const usage = `usage: zkit COMMAND [ARGS]

commands:
  demo [--workers N] [--rounds N]
                          main job: every recipe against the embedded reference
                          server, with concurrent workers, faults and invariant checks
  serve [--listen ADDR]   run the bundled reference ZooKeeper server until
                          SIGINT or SIGTERM (default 127.0.0.1:2181)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch cmd, args := os.Args[1], os.Args[2:]; cmd {
	case "demo":
		err = demo(args)
	case "serve":
		err = serve(args)
	case "lock":
		err = lockCmd(args)
	case "help", "-h", "--help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "zkit: unknown command %q\n%s", cmd, usage)
		os.Exit(2)
	}
	if errors.Is(err, errUsage) {
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "zkit %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
