package main

import (
	"bufio"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
)

func newDigestCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "digest [USER:PASSWORD]",
		Short: "Print the ACL id of a digest credential, for setacl",
		Long: `Prints USER:HASH, the id by which ZooKeeper's digest scheme knows the holder of
USER:PASSWORD (HASH is base64(sha1("USER:PASSWORD")), as ZooKeeper's
DigestAuthenticationProvider computes it): the ID of a digest:ID:PERMS entry of
'zkit setacl'. The holder then writes with --auth digest:USER:PASSWORD (or --auth-file).

Without an argument it reads USER:PASSWORD from the first line of standard input, so
that the password stays out of the process list. It needs no server. With -o json it
prints {"scheme":"digest","id":"USER:HASH"}.`,
		Example: `  zkit digest admin:secret
  zkit setacl /app/secret "digest:$(zkit digest admin:secret):cdrwa"
  zkit digest < ~/.zkit-password     # a line USER:PASSWORD`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			from := "USER:PASSWORD"
			var cred string
			if len(args) == 1 {
				cred = args[0]
			} else {
				from = "standard input"
				line, err := bufio.NewReader(a.stdin).ReadString('\n')
				if line == "" && err != nil {
					return usagef("no USER:PASSWORD on standard input")
				}
				cred = strings.TrimRight(line, "\r\n")
			}
			user, password, ok := strings.Cut(cred, ":")
			if !ok || user == "" {
				return usagef("%s: want USER:PASSWORD", from) // not the credential itself
			}
			id := client.DigestACL(client.PermAll, user, password)[0].ID
			return a.emit(id, aclIDJSON{"digest", id})
		},
	}
}

// aclIDJSON is an ACL entry's scheme and id in JSON output.
type aclIDJSON struct {
	Scheme string `json:"scheme"`
	ID     string `json:"id"`
}
