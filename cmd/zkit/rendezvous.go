package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/rendezvous"
)

type rendezvousFlags struct {
	own  bool
	wait time.Duration
}

func newRendezvousCmd(a *app) *cobra.Command {
	var f rendezvousFlags
	cmd := &cobra.Command{
		Use:   "rendezvous PATH create [-- CMD [ARGS]] | publish VALUE [--own] [-- CMD [ARGS]] | wait [--wait D]",
		Short: "Meet at a rendezvous node: create it, publish an address in it, or wait for one",
		Long: `The rendezvous of the ZooKeeper paper at PATH (zr): a launcher creates zr, ephemeral and
empty; the master publishes its address in it; workers wait until it is filled.

  create       the launcher: creates zr, prints it (-o json: {"node":NODE}) and holds
               it until SIGINT/SIGTERM, or, with
               -- CMD, while CMD runs (CMD gets ZKIT_RENDEZVOUS), then deletes it: master
               and workers see it vanish. If zr is lost, CMD gets SIGTERM (status 5).
  publish VAL  the master: fills zr with VAL. With -- CMD it then runs CMD for as long
               as zr exists: when the launcher ends, CMD gets SIGTERM (status 5).
               With --own there is no launcher: the master creates zr itself, filled,
               and keeps it published (again after a lost session) while CMD runs,
               or, printing zr (-o json: {"node":NODE}), until SIGINT/SIGTERM; if
               another process writes zr, publishing ends for good (status 5).
  wait         a worker: prints zr's data once it is filled, waiting for zr to be
               created and filled. Fails if zr vanishes meanwhile (the launcher ended).
               Data that is not printable text is quoted as a Go string; with -o json
               it prints {"path":PATH,"data":DATA}.`,
		Example: `  zkit rendezvous /jobs/42/zr create -- ./start-job.sh
  zkit rendezvous /jobs/42/zr publish "$(hostname):7000" -- ./master
  zkit rendezvous /jobs/42/zr wait --wait 60s
  zkit rendezvous /services/master publish 10.0.0.7:7000 --own -- ./master`,
		RunE: func(cmd *cobra.Command, args []string) error {
			before, argv := args, []string(nil)
			if i := cmd.ArgsLenAtDash(); i >= 0 {
				before, argv = args[:i], args[i:]
			}
			if len(before) < 2 {
				return usagef("missing PATH and action (zkit rendezvous PATH create | publish VALUE | wait)")
			}
			path, action := before[0], before[1]
			if err := recipePath(path, "rendezvous"); err != nil {
				return err
			}
			fl := cmd.Flags()
			switch {
			case action == "create" && len(before) == 2 && !fl.Changed("own") && !fl.Changed("wait"):
				return a.rendezvousCreate(cmd.Context(), path, argv)
			case action == "publish" && len(before) == 3 && before[2] != "" && !fl.Changed("wait"):
				return a.rendezvousPublish(cmd.Context(), path, before[2], argv, f.own)
			case action == "publish" && len(before) == 3 && before[2] == "":
				return usagef("empty VALUE: an empty rendezvous node means not filled yet")
			case action == "wait" && len(before) == 2 && argv == nil && !fl.Changed("own"):
				return a.rendezvousWait(cmd.Context(), path, f.wait)
			case action == "create" || action == "publish" || action == "wait":
				return usagef("usage: zkit rendezvous PATH create [-- CMD] | publish VALUE [--own] [-- CMD] | wait [--wait D]")
			}
			return usagef("unknown action %q (want create, publish or wait)", action)
		},
	}
	cmd.Flags().BoolVar(&f.own, "own", false, "publish: create zr yourself and keep it (no launcher)")
	waitFlag(cmd.Flags(), &f.wait, "wait: give up (status 4) if zr is not filled within D")
	return cmd
}

func (a *app) rendezvousCreate(ctx context.Context, path string, argv []string) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	launch, err := rendezvous.New(c, path).Create(ctx)
	if err != nil {
		return failf("%v", err) // it names the path
	}
	defer removeZr(launch.Remove)
	if len(argv) == 0 {
		a.emit(printable(launch.Node()), nodeJSON{launch.Node()})
		select {
		case <-ctx.Done():
			return nil
		case <-launch.Done():
			return lostf("%s lost: %s", path, cause(path, launch.Err()))
		}
	}
	status, lost, err := a.runWhileHeld(ctx, launch, argv, "ZKIT_RENDEZVOUS="+path)
	switch {
	case err != nil:
		return err
	case lost != nil && !errors.Is(lost, errStopped):
		return lostf("%s lost while %s ran: %s", path, argv[0], cause(path, lost))
	}
	return cmdStatus(status)
}

func (a *app) rendezvousPublish(ctx context.Context, path, value string, argv []string, own bool) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	zr := rendezvous.New(c, path)
	var h held
	if own {
		pub, err := zr.PublishEphemeral(ctx, []byte(value))
		if err != nil {
			return failf("%v", err) // it names the path
		}
		defer removeZr(pub.Remove)
		if len(argv) == 0 {
			a.emit(printable(pub.Node()), nodeJSON{pub.Node()})
			return a.stayPublished(ctx, pub) // published, and again after a lost session, until stopped
		}
		h = pub.Presence() // CMD runs while this presence lasts
	} else {
		err := zr.Publish(ctx, []byte(value))
		switch {
		case errors.Is(err, rendezvous.ErrGone):
			return failf("%s does not exist: start the launcher first ('zkit rendezvous %s create'), or publish with --own", path, path)
		case err != nil:
			return failf("%v", err) // it names the path
		case len(argv) == 0:
			return nil
		}
		h = whileExists(ctx, zr)
	}
	status, lost, err := a.runWhileHeld(ctx, h, argv, "ZKIT_RENDEZVOUS="+path)
	switch {
	case err != nil:
		return err
	case lost != nil && !errors.Is(lost, errStopped):
		return lostf("%s while %s ran: %s", path, argv[0], cause(path, lost))
	}
	return cmdStatus(status)
}

// stayPublished keeps zr published until zkit is stopped, saying on
// stderr when it is not and published again. It fails when publishing
// ends for good (another process wrote zr: a conflict).
func (a *app) stayPublished(ctx context.Context, pub *rendezvous.Publication) error {
	return a.stay(ctx, pub.Present, "rendezvous", pub.Node(), "not published", "published again")
}

// zrWatch is held while zr keeps the creation it had when the master
// published: it ends when zr vanishes or is created anew.
type zrWatch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

func (w *zrWatch) Done() <-chan struct{} { return w.ctx.Done() }
func (w *zrWatch) Err() error            { return context.Cause(w.ctx) }

func whileExists(ctx context.Context, zr *rendezvous.Rendezvous) *zrWatch {
	w := &zrWatch{}
	w.ctx, w.cancel = context.WithCancelCause(context.Background())
	feed := zr.Watch(ctx)
	go func() {
		var czxid int64
		for v := range feed.Values() {
			switch {
			case !v.Exists:
				w.cancel(fmt.Errorf("%w: the launcher ended", rendezvous.ErrGone))
				return
			case czxid == 0:
				czxid = v.Stat.Czxid
			case v.Stat.Czxid != czxid:
				w.cancel(fmt.Errorf("%w: created anew by another launcher", rendezvous.ErrGone))
				return
			}
		}
		w.cancel(feed.Err())
	}()
	return w
}

func (a *app) rendezvousWait(ctx context.Context, path string, wait time.Duration) error {
	wctx := ctx
	if wait > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	c, err := a.connectToWait(wctx)
	if err != nil {
		return err
	}
	defer c.Close()
	data, err := rendezvous.New(c, path).Wait(wctx)
	switch {
	case err == nil:
		return a.emit(printable(string(data)), struct {
			Path string `json:"path"`
			dataJSON
		}{path, newDataJSON(data)})
	case errors.Is(err, rendezvous.ErrGone):
		return failf("%s vanished before it was filled: the launcher ended", path)
	case wctx.Err() != nil && ctx.Err() == nil:
		return timeoutf("%s not filled within %v", path, wait)
	}
	return failf("%v", err) // it names the path
}

// removeZr deletes zr, waiting a bounded time.
func removeZr(remove func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	remove(ctx)
}
