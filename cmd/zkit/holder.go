package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Who holds it: lock, semaphore and elect write an id in the node they
// hold or wait with, --id or HOSTNAME-PID, which inspect and top show. It
// is the node's data, where Curator writes its client's default data (the
// host's address) into lock and semaphore nodes and a LeaderLatch its
// participant id: the layouts stay Curator's.

// idFlag adds --id to a command that holds something; usage says what
// the id is.
func idFlag(fl *pflag.FlagSet, id *string, usage string) {
	fl.StringVar(id, "id", "", usage+" (default HOSTNAME-PID)")
}

// holderID is --id, or defaultID when it is not given; an empty --id is a
// usage error.
func holderID(cmd *cobra.Command, id string) (string, error) {
	switch {
	case !cmd.Flags().Changed("id"):
		return defaultID(), nil
	case id == "":
		return "", usagef("--id is empty")
	}
	return id, nil
}

// defaultID names this process when --id does not: HOSTNAME-PID.
func defaultID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "zkit"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}
