package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/recipes"
)

type electFlags struct {
	id        string
	wait      time.Duration
	observe   bool
	leader    bool
	list      bool // --participants
	json      bool
	tolerance time.Duration
	requeue   bool
}

func newElectCmd(a *app) *cobra.Command {
	var f electFlags
	cmd := &cobra.Command{
		Use:   "elect PATH [--id ID] [--wait D] [--tolerance D] [--requeue] [-- CMD [ARGS]] | elect PATH --leader | --observe | --participants",
		Short: "Run CMD while leader of an election, or lead until interrupted; print the leader or the candidates",
		Long: `Campaigns in the leader election at PATH, runs CMD once this process leads, and
exits with CMD's status (resigning, so that the next candidate takes over).

Without CMD it leads until SIGINT or SIGTERM (then resigns and exits 0), printing
"ID NODE TOKEN" once it leads (-o json: {"leader":true,"id":...,"node":...,"token":...});
if the leadership is lost meanwhile it exits with status 5.

CMD gets ZKIT_LEADER_NODE (the leader's node), ZKIT_LEADER_ID (its id) and
ZKIT_FENCING_TOKEN (the node's czxid × 256, which only grows from one term to the next: pass
it to what CMD writes to, so that a deposed leader's writes can be refused). If the
leadership is lost while CMD runs (session expired, connection lost for longer than
--tolerance, node deleted), CMD gets SIGTERM and zkit exits with status 5.

--tolerance D keeps the leadership, and CMD, across a connection lost for up to D (a
ZooKeeper restart, a network blip); the default, 0, ends CMD as soon as the
connection is lost. Meanwhile the session may expire at the servers and another
candidate lead: CMD may run beside it for up to D, so fence what it writes.

--requeue campaigns again whenever a term ends (CMD exited, whatever its status, or the
leadership was lost), at least a second after it ended, and runs CMD again with each term
won, until SIGINT or SIGTERM: Curator's LeaderSelector with autoRequeue. Each end of a
term is one line on stderr. It needs CMD, and takes no --wait. Stopped between terms it
exits 0; while campaigning or running CMD, as without --requeue (128+N, or CMD's status).
A CMD that cannot be started (not found, not executable) ends no term: zkit exits 1.

--leader prints the current leader, "ID NODE TOKEN", and exits 0; with no candidate
in the election it prints "none" ({"leader":false}) and exits 1.

--observe prints the leader whenever it changes, one line each, until interrupted:
"ID NODE TOKEN" (an ID that is not printable text quoted as a Go string), or "none"
while no candidate is in the election. With -o json each line is an object:
{"leader":true,"id":...,"node":...,"token":...} or {"leader":false}.

--participants prints every candidate in line order, the leader first, one line each:
"ID NODE leader" for the leader, "ID NODE candidate" for the others; with -o json one
line, [{"id":...,"node":...,"leader":true},...]. It exits 0, printing nothing ([] with
-o json), when no candidate is in the election.

The election is Curator's LeaderLatch layout: Java and Go processes compete on the same
PATH.`,
		Example: `  zkit elect /services/scheduler --id "$(hostname)" -- ./scheduler
  zkit elect /services/scheduler --wait 30s -- ./scheduler --once
  zkit elect /services/scheduler --requeue -- ./scheduler --one-pass
  zkit elect /services/scheduler --leader
  zkit elect /services/scheduler --participants
  zkit elect /services/scheduler --observe -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			path, argv, err := electArgs(cmd, args, f)
			if err != nil {
				return err
			}
			switch {
			case f.leader:
				return a.printLeader(cmd.Context(), path)
			case f.list:
				return a.printParticipants(cmd.Context(), path)
			case f.observe:
				return a.observeLeader(cmd.Context(), path, a.json() || f.json)
			}
			return a.runElected(cmd.Context(), path, argv, f)
		},
	}
	fl := cmd.Flags()
	idFlag(fl, &f.id, "this candidate's id, written in its node (inspect, top, --leader show it)")
	waitFlag(fl, &f.wait, "give up (status 4) if not leading within D")
	fl.BoolVar(&f.leader, "leader", false, "print the current leader and exit (status 1 if none)")
	fl.BoolVar(&f.observe, "observe", false, "print the leader whenever it changes, until interrupted")
	fl.BoolVar(&f.list, "participants", false, "print every candidate, the leader first, and exit")
	fl.BoolVar(&f.json, "json", false, "with --observe: one JSON object per line")
	fl.MarkDeprecated("json", "use -o json")
	fl.DurationVar(&f.tolerance, "tolerance", 0, "keep the leadership across a connection lost for up to D")
	fl.BoolVar(&f.requeue, "requeue", false, "campaign again whenever a term ends, and run CMD with each term, until interrupted")
	return cmd
}

func electArgs(cmd *cobra.Command, args []string, f electFlags) (path string, argv []string, err error) {
	before, argv, err := positional(cmd, args, 1, "PATH (zkit elect PATH [-- CMD [ARGS]], or zkit elect PATH --leader|--observe|--participants)")
	if err != nil {
		return "", nil, err
	}
	path = before[0]
	idSet := cmd.Flags().Changed("id")
	reader := "" // the flag that reads the election instead of campaigning, if any
	for flag, set := range map[string]bool{"--leader": f.leader, "--observe": f.observe, "--participants": f.list} {
		if set && reader != "" {
			return "", nil, usagef("--leader, --observe and --participants exclude each other")
		}
		if set {
			reader = flag
		}
	}
	switch {
	case reader != "" && argv != nil:
		return "", nil, usagef("%s runs no CMD (drop what follows --)", reader)
	case reader != "" && (idSet || cmd.Flags().Changed("wait") || f.tolerance != 0):
		return "", nil, usagef("--id, --wait and --tolerance are for campaigning, not with %s", reader)
	case !f.observe && f.json:
		return "", nil, usagef("--json (deprecated: -o json) goes with --observe")
	case argv != nil && len(argv) == 0:
		return "", nil, usagef("missing CMD after -- (zkit elect PATH -- CMD [ARGS])")
	case f.requeue && (argv == nil || reader != ""):
		return "", nil, usagef("--requeue runs CMD with each term: give it CMD (zkit elect PATH --requeue -- CMD [ARGS])")
	case f.requeue && cmd.Flags().Changed("wait"):
		return "", nil, usagef("--requeue campaigns until interrupted: it takes no --wait")
	case f.tolerance < 0:
		return "", nil, usagef("--tolerance %v: must not be negative", f.tolerance)
	case idSet && f.id == "":
		return "", nil, usagef("--id is empty")
	}
	if err := recipePath(path, "election"); err != nil {
		return "", nil, err
	}
	return path, argv, nil
}

// requeuePause is the least time between a term's end and the next
// campaign with --requeue, so that a CMD that fails at once does not spin.
const requeuePause = time.Second

// runElected campaigns, runs CMD while leading and resigns; with
// --requeue, again after each term until ctx ends.
func (a *app) runElected(ctx context.Context, path string, argv []string, f electFlags) error {
	if f.id == "" {
		f.id = defaultID()
	}
	for {
		err := a.runTerm(ctx, path, argv, f)
		var notStarted *startError
		if !f.requeue || ctx.Err() != nil || statusOf(err) == exitUsage || errors.As(err, &notStarted) {
			return err // a CMD that cannot start ends no term: no term would run it
		}
		if statusOf(err) == exitUnreachable {
			// No term began: the servers could not be reached.
			fmt.Fprintf(a.stderr, "zkit elect: %s; trying again\n", oneLine(err))
		} else {
			fmt.Fprintf(a.stderr, "zkit elect: term at %s ended (%s); campaigning again\n", path, termEnd(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(requeuePause):
		}
	}
}

// termEnd says how a term ended, from runTerm's result.
func termEnd(err error) string {
	switch {
	case err == nil:
		return "CMD exited with status 0"
	case err.Error() == "":
		return fmt.Sprintf("CMD exited with status %d", statusOf(err))
	}
	return oneLine(err)
}

// runTerm campaigns, runs CMD while leading (or holds without CMD) and
// resigns.
func (a *app) runTerm(ctx context.Context, path string, argv []string, f electFlags) error {
	id := f.id
	campaignCtx, cancel := withWait(ctx, f.wait)
	defer cancel()
	c, err := a.connect(campaignCtx)
	if err != nil {
		return err
	}
	defer c.Close()

	stop := a.sayWaiting(campaignCtx, "elect", queuePlace(c, path, "leadership of "+path, recipes.LatchKind))
	term, err := election.New(c, path, id, election.WithSuspendTolerance(f.tolerance)).Campaign(campaignCtx)
	stop()
	var ie *client.InputError
	switch {
	case errors.As(err, &ie):
		return usagef("%v", err) // the id: the path was checked already
	case err != nil && campaignCtx.Err() != nil && ctx.Err() == nil:
		return timeoutf("not leading %s within %v", path, f.wait)
	case err != nil:
		return failf("%s", about(path, path, err))
	}
	if len(argv) == 0 {
		l := election.Leader{ID: term.ID(), Node: term.Node(), Token: term.Token()}
		lost := a.hold(ctx, term, leaderLine(l, false), leaderJSON(l))
		if rerr := resign(term); rerr != nil && lost == nil && errors.Is(rerr, recipes.ErrLost) {
			lost = rerr // lost just as zkit was stopped
		}
		if lost != nil {
			return lostf("leadership of %s lost: %s", path, cause(path, lost))
		}
		return nil
	}
	status, lost, err := a.runWhileHeld(ctx, term, argv,
		"ZKIT_LEADER_NODE="+term.Node(),
		"ZKIT_LEADER_ID="+term.ID(),
		"ZKIT_FENCING_TOKEN="+strconv.FormatInt(term.Token(), 10))
	if rerr := resign(term); rerr != nil && lost == nil && errors.Is(rerr, recipes.ErrLost) {
		lost = rerr // lost just as CMD ended
	}
	switch {
	case err != nil:
		return err
	case lost != nil && !errors.Is(lost, errStopped):
		return lostf("leadership of %s lost while %s ran: %s", path, argv[0], cause(path, lost))
	}
	return cmdStatus(status)
}

// resign ends a term, waiting a bounded time for the delete.
func resign(term *election.Term) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return term.Resign(ctx)
}

// observeLeader prints the leader of path whenever it changes, until ctx
// ends (SIGINT, SIGTERM).
func (a *app) observeLeader(ctx context.Context, path string, asJSON bool) error {
	c, err := a.connectToWait(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	feed := election.New(c, path, "").Observe(ctx)
	for l := range feed.Values() {
		fmt.Fprintln(a.stdout, leaderLine(l, asJSON))
	}
	if err := feed.Err(); err != nil && ctx.Err() == nil {
		return failf("%s", about(path, path, err))
	}
	return nil
}

// printLeader prints the leader of path once: status 1 if there is none.
func (a *app) printLeader(ctx context.Context, path string) error {
	return a.withReader(ctx, func(c *client.Client) error {
		l, err := election.New(c, path, "").Leader(ctx)
		if err != nil {
			return failf("%s", about(path, path, err))
		}
		a.emit(leaderLine(l, false), leaderJSON(l))
		if l == election.NoLeader {
			return failf("no leader at %s: no candidate is in the election", path)
		}
		return nil
	})
}

// printParticipants prints the candidates of path in line order, the
// leader first: nothing (-o json: []) when there is none.
func (a *app) printParticipants(ctx context.Context, path string) error {
	return a.withReader(ctx, func(c *client.Client) error {
		ps, err := election.New(c, path, "").Participants(ctx)
		if err != nil {
			return failf("%s", about(path, path, err))
		}
		if a.json() {
			out := make([]participantJSON, len(ps))
			for i, p := range ps {
				out[i] = participantJSON{ID: p.ID, Node: p.Node, Leader: p.Leader}
			}
			return a.writeJSON(out)
		}
		for _, p := range ps {
			role := "candidate"
			if p.Leader {
				role = "leader"
			}
			fmt.Fprintf(a.stdout, "%s %s %s\n", printable(p.ID), printable(p.Node), role)
		}
		return nil
	})
}

// participantJSON is one candidate in the JSON output of --participants.
type participantJSON struct {
	ID     string `json:"id"`
	Node   string `json:"node"`
	Leader bool   `json:"leader"`
}

// leaderLine renders one observation: "ID NODE TOKEN" or "none", or
// its JSON object.
func leaderLine(l election.Leader, asJSON bool) string {
	if asJSON {
		b, _ := json.Marshal(leaderJSON(l))
		return string(b)
	}
	if l == election.NoLeader {
		return "none"
	}
	return fmt.Sprintf("%s %s %d", printable(l.ID), printable(l.Node), l.Token)
}

// leaderJSON is a leader in JSON output: {"leader":false} for none.
func leaderJSON(l election.Leader) any {
	if l == election.NoLeader {
		return struct {
			Leader bool `json:"leader"`
		}{false}
	}
	return heldJSON{Leader: true, ID: l.ID, Node: l.Node, Token: l.Token}
}
