package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/cmd/zkit/internal/ensemble"
)

func newEnsembleCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ensemble status | reconfig",
		Short: "The ensemble's servers: their status, and dynamic reconfiguration",
		Long: `Looks after the ensemble as a whole:

  status    every server of --servers: its mode, zxid, latency, outstanding requests,
            connections, watches and version, and whether a quorum answers
  reconfig  change the membership: --add, --remove or --members (ZooKeeper 3.5+)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("name what to do: status or reconfig")
		},
	}
	cmd.AddCommand(newEnsembleStatusCmd(a), newEnsembleReconfigCmd(a))
	return cmd
}

func newEnsembleStatusCmd(a *app) *cobra.Command {
	var adminPort int
	cmd := &cobra.Command{
		Use:   "status [--admin-port N]",
		Short: "Print each server's mode, zxid, latency, load and version, and whether a quorum answers",
		Long: `Asks every server of --servers at once, each within --connect-timeout, and prints
one line per server:

  SERVER  MODE  ZXID  LATENCY  OUTSTANDING  CONNECTIONS  WATCHES  VERSION

MODE is what the server says it is: leader, follower, observer, standalone or
read-only; "not serving" when it answers but serves no clients (it is cut off from
its quorum, or an election is under way); "down" when it does not answer. ZXID is
the last transaction it applied; LATENCY its requests' min/avg/max in milliseconds;
OUTSTANDING the requests it has queued; CONNECTIONS its client connections (this
command's own included). A last line says whether a quorum answers: it does when
one server serves (as leader, follower, observer or standalone), since a member
serves only while it is part of a quorum.

zkit asks with the four-letter words srvr and mntr on the client port. ZooKeeper
answers srvr always; mntr (the watch count) only when 4lw.commands.whitelist names it
(or is *). Where it does not, zkit asks the server's admin server for mntr instead
(ZooKeeper 3.5+: http://HOST:PORT/commands/mntr, admin.serverPort, 8080 by default;
--admin-port, 0 for none); where neither answers, WATCHES is "-" and the line says
why. With --tls-ca zkit talks TLS to the servers (their secureClientPort).

With -o json it prints one object: {"servers":[{"server":..,"mode":..,"zxid":N,
"latency_ms":{"min":N,"avg":N,"max":N},"outstanding":N,"connections":N,"watches":N,
"version":..,"error":..}],"quorum":true|false}, the figures only for a server that
serves, "watches" only where it was read, "error" only where something was not.

It exits 0 when a quorum answers (even with servers down: their lines say so), 1 when
servers answer but none serves (no quorum), and 3 when none answers.`,
		Example: `  zkit ensemble status --servers zk1,zk2,zk3
  zkit ensemble status -o json | jq '.servers[] | select(.mode == "down")'
  until zkit ensemble status >/dev/null; do sleep 1; done   # wait for a quorum`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if adminPort < 0 || adminPort > 65535 {
				return usagef("--admin-port %d: want a port, 1 to 65535, or 0 for none", adminPort)
			}
			return a.ensembleStatus(cmd.Context(), adminPort)
		},
	}
	cmd.Flags().IntVar(&adminPort, "admin-port", 8080, "the servers' admin server port, asked for mntr where the four-letter word is refused (0: none)")
	return cmd
}

func (a *app) ensembleStatus(ctx context.Context, adminPort int) error {
	servers, err := a.serverList()
	if err != nil {
		return err
	}
	cfg, err := a.tlsConfig()
	if err != nil {
		return err
	}
	qctx, cancel := context.WithTimeout(ctx, a.connectTimeout)
	defer cancel()
	r := ensemble.Status(qctx, servers, ensemble.Options{TLS: cfg, AdminPort: adminPort})
	if ctx.Err() != nil {
		return ctx.Err() // stopped by a signal
	}
	if a.json() {
		err = a.writeJSON(r)
	} else {
		err = a.printStatus(r)
	}
	if err != nil {
		return failf("%v", err)
	}
	switch {
	case r.Quorum:
		return nil
	case r.Answered() == 0:
		return errorf(exitUnreachable, "no server answered within %v", a.connectTimeout)
	}
	return failf("no quorum: %d of %d servers answer, none serves", r.Answered(), len(r.Servers))
}

// printStatus prints r as a table, and a line about the quorum.
func (a *app) printStatus(r ensemble.Report) error {
	tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tMODE\tZXID\tLATENCY\tOUTSTANDING\tCONNECTIONS\tWATCHES\tVERSION")
	for _, s := range r.Servers {
		cols := []string{"-", "-", "-", "-", "-", "-"}
		if st := s.Stats; st != nil {
			cols = []string{fmt.Sprintf("%#x", st.Zxid), st.Latency.String(), strconv.FormatInt(st.Outstanding, 10),
				strconv.FormatInt(st.Connections, 10), "-", printable(st.Version)}
			if st.Watches != nil {
				cols[4] = strconv.FormatInt(*st.Watches, 10)
			}
		}
		line := strings.Join(append([]string{s.Addr, s.Mode}, cols...), "\t")
		if s.Error != "" {
			line += "\t" + printable(s.Error)
		}
		fmt.Fprintln(tw, line)
	}
	serving := 0
	for _, s := range r.Servers {
		if s.Serving() {
			serving++
		}
	}
	verdict := "no"
	if r.Quorum {
		verdict = "yes"
	}
	fmt.Fprintf(tw, "quorum: %s (%d of %d servers serve, %d answer)\n", verdict, serving, len(r.Servers), r.Answered())
	return tw.Flush()
}
