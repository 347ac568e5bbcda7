package main

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/cache"
	"github.com/zkit-dev/zkit/client"
)

func newWatchCmd(a *app) *cobra.Command {
	var recursive bool
	var depth int
	cmd := &cobra.Command{
		Use:   "watch PATH [--recursive] [--depth N]",
		Short: "Print a node and its children (or subtree) and every change to them",
		Long: `Mirrors PATH and its children (--recursive: its whole subtree; --depth N: N levels
below PATH, 0 for PATH alone) and prints one line per node, then "initialized", then
one line per change until SIGINT/SIGTERM:

  created PATH version=N zxid=0x.. data="..."
  changed PATH version=N zxid=0x.. data="..."
  deleted PATH [zxid=0x..]
  initialized zxid=0x..
  reset zxid=0x..      the session expired: the tree was read again, its differences follow

A zxid is that of the transaction the line reports: a created or changed line's is
the node's last write (mZxid). A deleted line has one only where the server says it
(ZooKeeper 3.9 and later send it with the watch event); ZooKeeper 3.8 does not, and a
deleted node leaves nothing to read it from, so there the line has none.

With -o json each line is an object: {"type":"created|changed|deleted|initialized|reset",
"path":..,"data":TEXT,"zxid":N,"version":N}, with "data_base64" instead of "data" when
the data is not UTF-8, as every command prints data (no data and version on deleted,
and no zxid where it is unknown).
Changes come in zxid order. A consumer that falls behind (a slow pipe) skips
intermediate states, never the last one: a node changed twice meanwhile is one
"changed" line with the latest data. While the connection is lost zkit says so on
stderr and prints nothing; back, it prints what changed meanwhile.`,
		Example: `  zkit watch /app/config --recursive
  zkit watch /services -o json | jq -c 'select(.type != "initialized")'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			before, _, err := positional(cmd, args, 1, "PATH")
			if err != nil {
				return err
			}
			path := before[0]
			if reason := client.ValidatePath(path, false); reason != "" {
				return usagef("invalid PATH %q: %s", path, reason)
			}
			levels := 1
			switch {
			case cmd.Flags().Changed("depth") && depth < 0:
				return usagef("--depth %d: must not be negative", depth)
			case cmd.Flags().Changed("depth"):
				levels = depth
			case recursive:
				levels = math.MaxInt
			}
			return a.watch(cmd.Context(), path, levels)
		},
	}
	cmd.Flags().BoolVar(&recursive, "recursive", false, "the whole subtree below PATH")
	cmd.Flags().IntVar(&depth, "depth", 1, "how many levels below PATH (0: PATH alone; unlimited with --recursive unless given)")
	return cmd
}

func (a *app) watch(ctx context.Context, path string, depth int) error {
	c, err := a.connectToWait(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	cc, err := cache.Open(ctx, c, path, cache.WithDepth(depth))
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return failf("%v", err) // it names the path
	}
	defer cc.Close()
	go a.reportStale(ctx, cc)
	events := cc.Events()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				return failf("%v", cc.Err())
			}
			if err := a.printEvent(ev); err != nil {
				return failf("%s: %v", path, err)
			}
		}
	}
}

// eventJSON is one line of watch -o json: the data as every command
// prints it (dataJSON), on created and changed only.
type eventJSON struct {
	Type string `json:"type"`
	Path string `json:"path,omitempty"`
	*dataJSON
	Zxid    int64  `json:"zxid,omitempty"` // 0: unknown (a delete's, on ZooKeeper 3.8)
	Version *int32 `json:"version,omitempty"`
}

func (a *app) printEvent(ev cache.Event) error {
	if a.json() {
		out := eventJSON{Type: ev.Type.String(), Path: ev.Path, Zxid: ev.Zxid}
		if ev.Type == cache.Created || ev.Type == cache.Changed {
			data := newDataJSON(ev.Data)
			out.dataJSON, out.Version = &data, &ev.Stat.Version
		}
		return a.writeJSON(out)
	}
	var err error
	switch {
	case ev.Type == cache.Created || ev.Type == cache.Changed:
		_, err = fmt.Fprintf(a.stdout, "%s %s version=%d zxid=%#x data=%q\n", ev.Type, printable(ev.Path), ev.Stat.Version, ev.Zxid, ev.Data)
	case ev.Type == cache.Deleted && ev.Zxid == 0: // the server did not say
		_, err = fmt.Fprintf(a.stdout, "%s %s\n", ev.Type, printable(ev.Path))
	case ev.Type == cache.Deleted:
		_, err = fmt.Fprintf(a.stdout, "%s %s zxid=%#x\n", ev.Type, printable(ev.Path), ev.Zxid)
	default:
		_, err = fmt.Fprintf(a.stdout, "%s zxid=%#x\n", ev.Type, ev.Zxid)
	}
	return err
}

// reportStale says on stderr when the cache loses its connection and when
// it is back.
func (a *app) reportStale(ctx context.Context, cc *cache.Cache) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	was := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-cc.Done():
			return
		case <-t.C:
		}
		stale, since := cc.Stale()
		switch {
		case stale && !was:
			fmt.Fprintf(a.stderr, "zkit watch: connection lost at %s; the last state printed may be out of date\n", since.Format(time.TimeOnly))
		case !stale && was:
			fmt.Fprintf(a.stderr, "zkit watch: connected again\n")
		}
		was = stale
	}
}
