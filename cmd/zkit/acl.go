package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
)

func newGetACLCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "getacl PATH",
		Short: "Print a node's ACL",
		Long: `Prints the ACL of the node at PATH, one entry a line in the syntax 'zkit setacl'
takes: SCHEME:ID:PERMS (world:anyone:cdrwa, digest:user:HASH:r, ip:10.0.0.0/8:rw).

With -o json it prints {"path":PATH,"acl":[{"scheme":..,"id":..,"perms":"cdrwa"},...]}.`,
		Example: `  zkit getacl /app/config`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := nodePath(args[0]); err != nil {
				return err
			}
			return a.getACL(cmd.Context(), args[0])
		},
	}
}

func newSetACLCmd(a *app) *cobra.Command {
	var version int32
	cmd := &cobra.Command{
		Use:   "setacl PATH ACL [--version N]",
		Short: "Replace a node's ACL",
		Long: `Replaces the ACL of the node at PATH with ACL, in zkCli's syntax: entries
SCHEME:ID:PERMS separated by commas, PERMS a subset of cdrwa (create, delete, read,
write, admin):

  world:anyone:cdrwa            everyone
  digest:USER:HASH:cdrwa        USER, HASH being base64(sha1("USER:PASSWORD")): the
                                id 'zkit digest USER:PASSWORD' prints
  ip:127.0.0.1:r, ip:10.0.0.0/8:r   clients from this IPv4 address or network
  x509:CN=alice,O=example:r     the client whose TLS certificate has this subject
  auth::cdrwa                   the identities of the session that sets it: those of
                                its credentials (--auth, --auth-file, $ZKIT_AUTH) and
                                its client certificate (--tls-cert)

A comma belongs to the ID unless a known scheme and a colon follow it. With
--version N it sets the ACL only if the node's aclVersion is N. Prints nothing.
The ACL is checked before anything is sent; the root and /zookeeper are refused.
A node whose ACL leaves out world:anyone is written with the credentials it names:
pass them with --auth-file (or --auth, or $ZKIT_AUTH) to the commands that follow.`,
		Example: `  zkit setacl /app/secret "digest:$(zkit digest admin:secret):cdrwa,world:anyone:r"
  echo digest:admin:secret > ~/.zkit-admin; chmod 600 ~/.zkit-admin
  zkit set /app/secret v2 --auth-file ~/.zkit-admin
  zkit setacl /app/mine auth::cdrwa --auth-file ~/.zkit-admin
  zkit setacl /app/config ip:10.0.0.0/8:cdrwa --version 0`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.writableVersion(args[0], version); err != nil {
				return err
			}
			acl, err := parseACL(args[1])
			if err != nil {
				return err
			}
			if err := a.checkAuthEntries(acl); err != nil {
				return err
			}
			return a.setACL(cmd.Context(), args[0], acl, version)
		},
	}
	cmd.Flags().Int32Var(&version, "version", -1, "set only if the node's aclVersion is N (-1: any)")
	return cmd
}

// aclSchemes are the schemes whose name, with a colon, starts a new entry
// after a comma.
var aclSchemes = []string{"world:", "auth:", "digest:", "ip:", "x509:", "sasl:"}

// permLetters are zkCli's letters for the permission bits.
var permLetters = []struct {
	letter byte
	perm   int32
}{{'c', client.PermCreate}, {'d', client.PermDelete}, {'r', client.PermRead}, {'w', client.PermWrite}, {'a', client.PermAdmin}}

// parseACL reads zkCli's ACL syntax: SCHEME:ID:PERMS,... The ID is what
// lies between the first and the last colon; a comma belongs to it unless
// a known scheme and a colon follow.
func parseACL(s string) ([]client.ACL, error) {
	var entries []string
	for _, part := range strings.Split(s, ",") {
		if len(entries) > 0 && !hasAnyPrefix(strings.TrimSpace(part), aclSchemes) {
			entries[len(entries)-1] += "," + part
			continue
		}
		entries = append(entries, strings.TrimSpace(part))
	}
	acl := make([]client.ACL, 0, len(entries))
	for _, e := range entries {
		scheme, rest, ok1 := strings.Cut(e, ":")
		i := strings.LastIndex(rest, ":")
		if !ok1 || i < 0 {
			return nil, usagef("ACL entry %q: want SCHEME:ID:PERMS (world:anyone:cdrwa)", e)
		}
		perms, err := parsePerms(rest[i+1:])
		if err != nil {
			return nil, usagef("ACL entry %q: %v", e, err)
		}
		entry := client.ACL{Scheme: scheme, ID: rest[:i], Perms: perms}
		if scheme == "digest" && client.ValidateACL([]client.ACL{entry}) != "" {
			// Not the entry: its id may be a password given in place of
			// the hash.
			user, _, _ := strings.Cut(entry.ID, ":")
			return nil, usagef("ACL entry %d (digest for %q): a digest id is USER:HASH, HASH being base64(sha1(USER:PASSWORD)), not the password: 'zkit digest USER:PASSWORD' prints it",
				len(acl)+1, user)
		}
		acl = append(acl, entry)
	}
	if reason := client.ValidateACL(acl); reason != "" {
		return nil, usagef("ACL %q: %s", s, reason)
	}
	return acl, nil
}

// checkAuthEntries refuses an ACL with an entry of the auth scheme when
// the session will have no identity for the server to put in its place:
// ZooKeeper would answer "invalid ACL".
func (a *app) checkAuthEntries(acl []client.ACL) error {
	for _, e := range acl {
		if e.Scheme == "auth" && !a.hasIdentity() {
			return usagef("ACL entry auth:%s:%s grants the identities the session authenticated as, and it has none: add credentials with --auth digest:USER:PASSWORD (or --auth-file, $ZKIT_AUTH), or connect with a client certificate (--tls-cert)",
				e.ID, formatPerms(e.Perms))
		}
	}
	return nil
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func parsePerms(s string) (int32, error) {
	var perms int32
	for i := 0; i < len(s); i++ {
		found := false
		for _, p := range permLetters {
			if s[i] == p.letter {
				perms, found = perms|p.perm, true
			}
		}
		if !found {
			return 0, fmt.Errorf("permission %q: want letters of cdrwa", s[i])
		}
	}
	return perms, nil
}

func formatPerms(perms int32) string {
	var b strings.Builder
	for _, p := range permLetters {
		if perms&p.perm != 0 {
			b.WriteByte(p.letter)
		}
	}
	return b.String()
}

// aclJSON is one ACL entry in getacl's JSON output.
type aclJSON struct {
	Scheme string `json:"scheme"`
	ID     string `json:"id"`
	Perms  string `json:"perms"`
}

func (a *app) getACL(ctx context.Context, path string) error {
	return a.withReader(ctx, func(c *client.Client) error {
		acl, _, err := c.GetACL(ctx, path)
		if err != nil {
			return nodeError("getacl", path, err)
		}
		out := make([]aclJSON, len(acl))
		for i, e := range acl {
			out[i] = aclJSON{e.Scheme, e.ID, formatPerms(e.Perms)}
		}
		if a.json() {
			return a.writeJSON(struct {
				Path string    `json:"path"`
				ACL  []aclJSON `json:"acl"`
			}{path, out})
		}
		for _, e := range out {
			fmt.Fprintln(a.stdout, printable(e.Scheme+":"+e.ID+":"+e.Perms))
		}
		return nil
	})
}

func (a *app) setACL(ctx context.Context, path string, acl []client.ACL, version int32) error {
	return a.withClient(ctx, func(c *client.Client) error {
		if _, err := c.SetACL(ctx, path, acl, version); err != nil {
			return nodeError("setacl", path, err)
		}
		return nil
	})
}
