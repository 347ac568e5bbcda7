package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/configwatch"
)

type configFlags struct {
	wait    time.Duration
	atomic  bool
	deletes []string
}

func newConfigCmd(a *app) *cobra.Command {
	var f configFlags
	cmd := &cobra.Command{
		Use:   "config PATH get [--wait D] | set KEY=VALUE... [--delete KEY] [--atomic] | watch",
		Short: "Read, publish or follow a configuration, never half of a publish",
		Long: `A configuration of one node per key under PATH, published with ZooKeeper's "ready"
protocol: readers never see half of a publish.

  get     prints the configuration as one JSON object. While a publish is in
          progress it waits for it, at most --wait (then status 4).
  set     publishes KEY=VALUE pairs (and deletes the --delete keys); the other keys
          keep their values. A VALUE that is valid JSON is stored as is (8, true,
          "text", {"a":1}); anything else is stored as a JSON string. Without
          --atomic it takes the ready flag down, writes, and puts it back up; with
          --atomic it writes everything in one transaction.
  watch   prints one JSON object per line, for every complete configuration, until
          interrupted: the current one first, then each publish. After a lost
          connection it prints the configuration of the moment if it changed.

Java and Python services can publish and read the same configuration: see the
configwatch package documentation for the layout. get and watch print JSON whatever
-o says.`,
		Example: `  zkit config /app/config set workers=8 db=primary
  zkit config /app/config get
  zkit config /app/config watch | while read -r cfg; do echo "$cfg" | jq .workers; done`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usagef("missing %s (zkit config PATH get|set|watch)", []string{"PATH and get, set or watch", "get, set or watch"}[len(args)])
			}
			path, verb, rest := args[0], args[1], args[2:]
			if err := recipePath(path, "configuration"); err != nil {
				return err
			}
			if err := a.writablePath(path); err != nil && verb == "set" {
				return err
			}
			if verb != "set" && (len(f.deletes) > 0 || f.atomic) {
				return usagef("--delete and --atomic go with set")
			}
			if verb != "get" && cmd.Flags().Changed("wait") {
				return usagef("--wait goes with get")
			}
			switch verb {
			case "get", "watch":
				if len(rest) > 0 {
					return usagef("unexpected argument %q after %s", rest[0], verb)
				}
				if verb == "get" {
					return a.configGet(cmd.Context(), path, f.wait)
				}
				return a.configWatch(cmd.Context(), path)
			case "set":
				vals, err := assignments(rest, f.deletes)
				if err != nil {
					return err
				}
				for k := range vals {
					if err := configwatch.CheckKey(path, k); err != nil {
						return usagef("%s", oneLine(err))
					}
				}
				return a.configSet(cmd.Context(), path, vals, f.atomic)
			}
			return usagef("unknown %q: want get, set or watch", verb)
		},
	}
	fl := cmd.Flags()
	f.wait = 10 * time.Second
	waitFlag(fl, &f.wait, "get: how long to wait for a publish in progress")
	fl.BoolVar(&f.atomic, "atomic", false, "set: publish in one transaction instead of with the ready flag")
	fl.StringArrayVar(&f.deletes, "delete", nil, "set: delete this key (repeatable)")
	return cmd
}

// assignments turns KEY=VALUE arguments and --delete keys into the values
// of a publish.
func assignments(args, deletes []string) (configwatch.Values, error) {
	if len(args) == 0 && len(deletes) == 0 {
		return nil, usagef("missing KEY=VALUE (zkit config PATH set KEY=VALUE... [--delete KEY])")
	}
	vals := configwatch.Values{}
	for _, arg := range args {
		k, v, ok := strings.Cut(arg, "=")
		if !ok {
			return nil, usagef("%q is not KEY=VALUE", arg)
		}
		if _, dup := vals[k]; dup {
			return nil, usagef("key %q given twice", k)
		}
		vals[k] = jsonValue(v)
	}
	for _, k := range deletes {
		if _, dup := vals[k]; dup {
			return nil, usagef("key %q both set and deleted", k)
		}
		vals[k] = nil
	}
	return vals, nil
}

// jsonValue stores v as is when it is JSON, and as a JSON string otherwise.
// JSON is UTF-8 (RFC 8259; json.Valid does not check it): a v that is not
// is stored as a string, with U+FFFD for what is not UTF-8, so that no
// reader gets a configuration that is not JSON.
func jsonValue(v string) []byte {
	if json.Valid([]byte(v)) && utf8.ValidString(v) {
		return []byte(v)
	}
	b, _ := json.Marshal(v)
	return b
}

func (a *app) configSet(ctx context.Context, path string, vals configwatch.Values, atomic bool) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var opts []configwatch.Option
	if atomic {
		opts = append(opts, configwatch.WithAtomic())
	}
	_, err = configwatch.New(c, path, configwatch.Raw, opts...).Set(ctx, vals)
	var ie *client.InputError
	switch {
	case errors.As(err, &ie):
		return usagef("%s", ie.Reason)
	case err != nil:
		return failf("%v", err)
	}
	return nil
}

func (a *app) configGet(ctx context.Context, path string, wait time.Duration) error {
	c, err := a.connectToRead(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	gctx := ctx
	if wait > 0 {
		var cancel context.CancelFunc
		gctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	snap, err := configwatch.New(c, path, configwatch.Raw).Get(gctx)
	switch {
	case errors.Is(err, configwatch.ErrNoConfig):
		return failf("no configuration at %s; publish one with 'zkit config %s set KEY=VALUE'", path, path)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return timeoutf("configuration at %s not complete within %v: a publish is in progress, or one was interrupted (%s/ready is missing)", path, wait, path)
	case err != nil:
		return failf("%v", err)
	}
	return a.printConfig(path, snap.Value)
}

func (a *app) configWatch(ctx context.Context, path string) error {
	c, err := a.connectToWait(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	feed := configwatch.New(c, path, configwatch.Raw).Watch(ctx)
	for snap := range feed.Values() {
		if err := a.printConfig(path, snap.Value); err != nil {
			fmt.Fprintf(a.stderr, "zkit config: %s\n", oneLine(err))
		}
	}
	if err := feed.Err(); err != nil && ctx.Err() == nil {
		return failf("watching %s: %v", path, err)
	}
	return nil
}

// printConfig writes the configuration as one line of JSON.
func (a *app) printConfig(path string, vals configwatch.Values) error {
	doc, err := configwatch.Document(vals)
	if err != nil {
		return failf("%s", about(path, path, err))
	}
	_, err = fmt.Fprintf(a.stdout, "%s\n", doc)
	return err
}
