// Command zkit is zkit's command-line tool.
//
//	zkit [--servers host:port,...] [--session-timeout D] COMMAND [ARGS]
//	zkit demo                    every recipe on the embedded reference server, checked
//	zkit serve [--listen ADDR]   run the bundled reference server
//	zkit lock PATH -- CMD        hold a lock while CMD runs
//
// Every subcommand lives in its own file and has the signature of run:
// it gets its arguments (after the subcommand's name) and returns an error,
// which main prints as one line on stderr before exiting with status 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/zkit-dev/zkit/client"
)

// Global flags, given before COMMAND. Commands that talk to an ensemble
// use them as the defaults of their own --servers and --session-timeout.
var (
	globalServers        string // "" means $ZKIT_SERVERS, else 127.0.0.1:2181
	globalSessionTimeout = client.DefaultSessionTimeout
)

// errUsage makes main print the usage and exit with status 2.
var errUsage = errors.New("usage")

const usage = `usage: zkit [--servers host:port,...] [--session-timeout D] COMMAND [ARGS]

  --servers            default $ZKIT_SERVERS, else 127.0.0.1:2181
  --session-timeout    default 10s

commands:
  demo [--workers N] [--rounds N]
                          main job: every recipe against the embedded reference
                          server, with concurrent workers, faults and invariant checks
  serve [--listen ADDR]   run the bundled reference ZooKeeper server until
                          SIGINT or SIGTERM (default 127.0.0.1:2181)
  lock PATH [--read|--write] [--try] [--wait D] -- CMD [ARGS]
                          hold the lock while CMD runs; exit with CMD's status
`

func main() {
	gf := flag.NewFlagSet("zkit", flag.ContinueOnError)
	gf.SetOutput(io.Discard)
	gf.StringVar(&globalServers, "servers", "", "")
	gf.DurationVar(&globalSessionTimeout, "session-timeout", client.DefaultSessionTimeout, "")
	if err := gf.Parse(os.Args[1:]); err != nil || gf.NArg() == 0 || globalSessionTimeout <= 0 {
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(os.Stderr, "zkit: %v\n", err)
		}
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch cmd, args := gf.Arg(0), gf.Args()[1:]; cmd {
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
		fmt.Fprintf(os.Stderr, "zkit %s: %v\n", gf.Arg(0), err)
		os.Exit(1)
	}
}
