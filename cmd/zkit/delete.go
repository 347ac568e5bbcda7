package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
)

type deleteFlags struct {
	recursive bool
	yes       bool
	version   int32
}

func newDeleteCmd(a *app) *cobra.Command {
	var f deleteFlags
	cmd := &cobra.Command{
		Use:   "delete PATH [--version N] | delete PATH --recursive [--yes]",
		Short: "Delete a node, or a whole subtree",
		Long: `Deletes the node at PATH, which must have no children. With --version N it deletes
only if the node's dataVersion is N, and fails (status 1) otherwise.

--recursive deletes PATH and everything below it, children first. On a terminal it
asks first, saying how many nodes there are; otherwise (a script, a pipe) it needs
--yes, and without it refuses with a usage error before it connects. Nodes created
below PATH meanwhile are deleted too.

The root and /zookeeper (ZooKeeper's own) are never deleted. Prints nothing.`,
		Example: `  zkit delete /app/stale-flag
  zkit delete /app/config/workers --version 3
  zkit delete /ci/run-1234 --recursive --yes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := args[0]
			if err := a.writableVersion(p, f.version); err != nil {
				return err
			}
			switch {
			case f.recursive && cmd.Flags().Changed("version"):
				return usagef("--version and --recursive exclude each other")
			case f.yes && !f.recursive:
				return usagef("--yes goes with --recursive")
			case f.recursive && !f.yes && !isTerminal(a.stdin):
				return usagef("--recursive deletes %s and everything below it: pass --yes (standard input is not a terminal to ask on)", p)
			}
			return a.delete(cmd.Context(), p, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVarP(&f.recursive, "recursive", "R", false, "delete the whole subtree")
	fl.BoolVarP(&f.yes, "yes", "y", false, "with --recursive: do not ask")
	fl.Int32Var(&f.version, "version", -1, "delete only if the node's dataVersion is N (-1: any)")
	return cmd
}

func (a *app) delete(ctx context.Context, p string, f deleteFlags) error {
	return a.withClient(ctx, func(c *client.Client) error {
		if !f.recursive {
			if err := c.Delete(ctx, p, f.version); err != nil {
				return nodeError("delete", p, err)
			}
			return nil
		}
		if !f.yes {
			n := 0
			if err := walk(ctx, c, p, true, func(string, []string) error { n++; return nil }); err != nil {
				return err
			}
			if !a.confirm(fmt.Sprintf("delete %s and the %d node(s) below it?", p, n-1)) {
				return failf("delete %s: not confirmed; nothing deleted", p)
			}
		}
		return deleteTree(ctx, c, p)
	})
}

// confirm asks question on stderr and reads the answer from stdin: true
// for y or yes.
func (a *app) confirm(question string) bool {
	fmt.Fprintf(a.stderr, "%s [y/N] ", question)
	answer, _ := bufio.NewReader(a.stdin).ReadString('\n')
	answer = strings.ToLower(strings.TrimSpace(answer))
	return answer == "y" || answer == "yes"
}

// deleteTree deletes p and its subtree, children first. Children that
// vanish meanwhile are fine; children created meanwhile are deleted too.
func deleteTree(ctx context.Context, c *client.Client, p string) error {
	if at, err := deleteSubtree(ctx, c, p); err != nil {
		return nodeError("delete", at, err)
	}
	return nil
}

// deleteSubtree is deleteTree's work: it returns the error and the node
// it concerns. ErrNoNode is only ever p's own.
func deleteSubtree(ctx context.Context, c *client.Client, p string) (string, error) {
	for {
		children, _, err := c.Children(ctx, p)
		if err != nil {
			return p, err
		}
		for _, name := range children {
			at, err := deleteSubtree(ctx, c, client.JoinPath(p, name))
			if err != nil && !errors.Is(err, client.ErrNoNode) {
				return at, err
			}
		}
		if err := c.Delete(ctx, p, -1); !errors.Is(err, client.ErrNotEmpty) {
			return p, err // nil once deleted; a child created meanwhile: again
		}
	}
}
