package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/membership"
)

type membersFlags struct {
	data      string
	tolerance time.Duration
}

func newMembersCmd(a *app) *cobra.Command {
	var f membersFlags
	cmd := &cobra.Command{
		Use:   "members PATH join ID [--data S] [-- CMD [ARGS]] | list | watch",
		Short: "Join a group (while CMD runs), list it, or watch it",
		Long: `Group membership at PATH, in the layout of Curator's GroupMember: each member is an
ephemeral node PATH/ID whose data is its payload.

  join ID     joins as ID (data --data), prints the member's node (-o json:
              {"node":NODE}) and stays a member until SIGINT/SIGTERM, coming back
              by itself after a lost session. With -- CMD it runs CMD while
              the member is present: CMD gets ZKIT_MEMBER_NODE and ZKIT_MEMBER_ID, and if
              the member may no longer be present (session lost, connection suspended
              longer than --tolerance, node deleted) CMD gets SIGTERM and zkit exits
              with status 5. An ID held by another live session is an error: two
              processes never share one ID.
  list        prints the members, one "ID<TAB>DATA" line each, sorted by ID; an ID
              or DATA that is not printable text is quoted as a Go string ("a\tb").
              With -o json it prints the group as one JSON line, as watch does.
  watch       prints the whole group as one JSON line ([{"id":..,"data":..},...])
              whenever it changes, until SIGINT/SIGTERM; the last line is the group.
              JSON whatever -o says; "data_base64" instead of "data" for a payload
              that is not UTF-8.`,
		Example: `  zkit members /services/api join "$(hostname)" --data 10.0.0.5:8080 -- ./serve
  zkit members /services/api list
  zkit members /services/api watch | jq -c 'map(.id)'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			before, argv := args, []string(nil)
			if i := cmd.ArgsLenAtDash(); i >= 0 {
				before, argv = args[:i], args[i:]
			}
			if len(before) < 2 {
				return usagef("missing PATH and action (zkit members PATH join ID | list | watch)")
			}
			path, action := before[0], before[1]
			if err := recipePath(path, "group"); err != nil {
				return err
			}
			switch {
			case action == "join" && len(before) == 3:
				if err := membership.CheckID(path, before[2]); err != nil {
					return usagef("%v", oneLine(err))
				}
				if f.tolerance < 0 {
					return usagef("--tolerance %v: must not be negative", f.tolerance)
				}
				return a.membersJoin(cmd.Context(), path, before[2], argv, f)
			case action == "join":
				return usagef("join takes one ID (zkit members PATH join ID [-- CMD])")
			case action != "list" && action != "watch":
				return usagef("unknown action %q (want join, list or watch)", action)
			case len(before) > 2 || argv != nil:
				return usagef("%s takes no other argument", action)
			case cmd.Flags().Changed("data") || cmd.Flags().Changed("tolerance"):
				return usagef("--data and --tolerance are for join")
			case action == "list":
				return a.membersList(cmd.Context(), path)
			}
			return a.membersWatch(cmd.Context(), path)
		},
	}
	cmd.Flags().StringVar(&f.data, "data", "", "the member's payload (join)")
	cmd.Flags().DurationVar(&f.tolerance, "tolerance", 0, "how long the connection may stay suspended before the member counts as absent (join)")
	return cmd
}

func (a *app) membersJoin(ctx context.Context, path, id string, argv []string, f membersFlags) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	m, err := membership.New(c, path, membership.WithSuspendTolerance(f.tolerance)).Join(ctx, id, []byte(f.data))
	var ce *membership.ConflictError
	switch {
	case errors.As(err, &ce) && ce.Owner == 0:
		return failf("%s: ID %q is taken by a persistent node, no member's; pick another ID, or delete it ('zkit delete %s')", path, id, ce.Path)
	case errors.As(err, &ce):
		return failf("%s: ID %q is held by session 0x%x; pick another ID, or wait until that process ends", path, id, ce.Owner)
	case err != nil:
		return failf("%v", err) // it names the member's node
	}
	defer leave(m)
	if len(argv) == 0 {
		a.emit(printable(m.Node()), nodeJSON{m.Node()})
		return a.stayMember(ctx, m)
	}
	// CMD runs while the presence Join returned lasts, not across a gap.
	status, lost, err := a.runWhileHeld(ctx, m.Presence(), argv, "ZKIT_MEMBER_NODE="+m.Node(), "ZKIT_MEMBER_ID="+id)
	switch {
	case err != nil:
		return err
	case lost != nil && !errors.Is(lost, errStopped):
		return lostf("member %s of %s absent while %s ran: %v", id, path, argv[0], lost)
	}
	return cmdStatus(status)
}

// stayMember keeps m a member until zkit is stopped, saying on stderr when
// it is absent and present again. It fails when the membership ends for
// good (a conflict).
func (a *app) stayMember(ctx context.Context, m *membership.Member) error {
	return a.stay(ctx, m.Present, "members", m.Node(), "absent", "present again")
}

// leave ends a membership, waiting a bounded time for the delete.
func leave(m *membership.Member) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m.Leave(ctx)
}

func (a *app) membersList(ctx context.Context, path string) error {
	c, err := a.connectToRead(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	group, err := membership.New(c, path).List(ctx)
	if err != nil {
		return failf("%v", err) // it names the path
	}
	if a.json() {
		return a.writeJSON(groupJSON(group))
	}
	for _, m := range group {
		fmt.Fprintf(a.stdout, "%s\t%s\n", printable(m.ID), printable(string(m.Data)))
	}
	return nil
}

// memberJSON is one member in the JSON output of list and watch.
type memberJSON struct {
	ID string `json:"id"`
	dataJSON
}

func groupJSON(group []membership.Entry) []memberJSON {
	out := make([]memberJSON, len(group))
	for i, m := range group {
		out[i] = memberJSON{m.ID, newDataJSON(m.Data)}
	}
	return out
}

func (a *app) membersWatch(ctx context.Context, path string) error {
	c, err := a.connectToWait(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	feed := membership.New(c, path).Watch(ctx)
	for group := range feed.Values() {
		if err := a.writeJSON(groupJSON(group)); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return failf("%v", feed.Err()) // it names the path
}
