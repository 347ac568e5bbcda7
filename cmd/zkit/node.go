package main

import (
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// The node commands (ls, get, stat, create, set, delete, getacl, setacl)
// are zkCli's basics, for inspection and cleanup. This file holds what
// they share: the checks of PATH, the rendering of data and Stat, and
// the errors.

// nodePath checks PATH, the first argument of a node command.
func nodePath(path string) error { return nodePathOf(path, false) }

// nodePathOf checks PATH, that of a sequential node if sequential (the
// server appends the sequence number: it may end with /).
func nodePathOf(path string, sequential bool) error {
	if reason := client.ValidatePath(path, sequential); reason != "" {
		return usagef("invalid PATH %q: %s", path, reason)
	}
	return nil
}

// recipePath checks the PATH of a recipe command: a valid path, and not
// the root, which no recipe takes for its own (the library refuses it as
// well: recipes.CheckDir). recipe names the recipe in the error ("lock").
func recipePath(path, recipe string) error {
	var ie *client.InputError
	if err := recipes.CheckDir("", path, recipe); errors.As(err, &ie) {
		return usagef("invalid PATH %q: %s", path, ie.Reason)
	} else if err != nil {
		return err
	}
	return nil
}

// writablePath refuses what no zkit command writes into: the root, and
// ZooKeeper's own /zookeeper and everything under it (its quotas and the
// ensemble's configuration), also where the namespace (--namespace, or
// the chroot of --servers) puts path there.
func (a *app) writablePath(path string) error { return a.writableNode(path, false) }

// writableNode is writablePath for the PATH of a node to create,
// sequential or not.
func (a *app) writableNode(path string, sequential bool) error {
	if err := nodePathOf(path, sequential); err != nil {
		return err
	}
	root, err := a.chroot()
	if err != nil {
		return err
	}
	full := root + path // where the servers see it
	switch {
	case path == "/":
		return usagef("%s: zkit does not write to or delete the root", path)
	case underZookeeper(path) || underZookeeper(full):
		in := ""
		if root != "" && !underZookeeper(path) {
			in = " (" + full + " in the namespace " + root + ")"
		}
		return usagef("%s%s: /zookeeper is ZooKeeper's own (quotas, the ensemble's configuration); zkit does not write there", path, in)
	}
	return nil
}

// underZookeeper reports whether path is /zookeeper or below it.
func underZookeeper(path string) bool {
	return path == "/zookeeper" || strings.HasPrefix(path, "/zookeeper/")
}

// writableVersion checks the PATH and --version of a conditional write:
// a node's version, or -1 for any.
func (a *app) writableVersion(path string, v int32) error {
	if err := a.writablePath(path); err != nil {
		return err
	}
	if v < -1 {
		return usagef("--version %d: want a node's version (0 or more), or -1 for any", v)
	}
	return nil
}

// statJSON is a Stat in JSON output, with zkCli's names; times are
// milliseconds since the epoch.
type statJSON struct {
	Czxid          int64 `json:"cZxid"`
	Ctime          int64 `json:"ctime"`
	Mzxid          int64 `json:"mZxid"`
	Mtime          int64 `json:"mtime"`
	Pzxid          int64 `json:"pZxid"`
	Cversion       int32 `json:"cversion"`
	DataVersion    int32 `json:"dataVersion"`
	ACLVersion     int32 `json:"aclVersion"`
	EphemeralOwner int64 `json:"ephemeralOwner"`
	DataLength     int32 `json:"dataLength"`
	NumChildren    int32 `json:"numChildren"`
}

func newStatJSON(s *client.Stat) statJSON {
	return statJSON{s.Czxid, s.Ctime, s.Mzxid, s.Mtime, s.Pzxid, s.Cversion, s.Version, s.Aversion, s.EphemeralOwner, s.DataLength, s.NumChildren}
}

// writeStat prints s as zkCli's stat does: one "name = value" line each,
// zxids and the owner in hex, times in UTC.
func writeStat(w io.Writer, s *client.Stat) {
	ms := func(t int64) string { return time.UnixMilli(t).UTC().Format(time.RFC3339Nano) }
	fmt.Fprintf(w, "cZxid = 0x%x\nctime = %s\nmZxid = 0x%x\nmtime = %s\npZxid = 0x%x\n", s.Czxid, ms(s.Ctime), s.Mzxid, ms(s.Mtime), s.Pzxid)
	fmt.Fprintf(w, "cversion = %d\ndataVersion = %d\naclVersion = %d\nephemeralOwner = 0x%x\ndataLength = %d\nnumChildren = %d\n",
		s.Cversion, s.Version, s.Aversion, s.EphemeralOwner, s.DataLength, s.NumChildren)
}

// refusedBy says which ACL refused op on p, and how to read it. ZooKeeper
// checks a create's and a delete's permission against the parent's ACL,
// and reading an ACL needs READ or ADMIN on the node itself.
func refusedBy(op, p string) string {
	switch op {
	case "create", "delete":
		return fmt.Sprintf("not allowed by the parent's ACL (see 'zkit getacl %s')", path.Dir(p))
	case "getacl":
		return "not allowed by the node's ACL: reading it needs READ or ADMIN permission"
	}
	return fmt.Sprintf("not allowed by the node's ACL (see 'zkit getacl %s')", p)
}

// nodeError turns the error of a node operation on path into zkit's
// one-line error with its fix.
func nodeError(op, path string, err error) error {
	var ie *client.InputError
	switch {
	case errors.As(err, &ie):
		return usagef("%s", oneLine(err))
	case errors.Is(err, client.ErrNoNode):
		return failf("%s %s: no such node", op, path)
	case errors.Is(err, client.ErrNodeExists):
		return failf("%s %s: the node exists already", op, path)
	case errors.Is(err, client.ErrBadVersion):
		return failf("%s %s: the node's version is not --version's: it changed meanwhile; nothing written", op, path)
	case errors.Is(err, client.ErrNotEmpty):
		return failf("%s %s: the node has children; delete them first, or pass --recursive", op, path)
	case errors.Is(err, client.ErrNoAuth):
		return failf("%s %s: %s", op, path, refusedBy(op, path))
	case errors.Is(err, client.ErrInvalidACL):
		return failf("%s %s: the servers refused the ACL: an auth entry needs credentials they accept (--auth), and every scheme a provider on the servers", op, path)
	case errors.Is(err, client.ErrNoChildrenForEphemerals):
		return failf("%s %s: the parent is ephemeral and cannot have children", op, path)
	case client.IsOutcomeUnknown(err):
		return failf("%s %s: the reply was lost and zkit cannot tell whether it was applied (%v); look before trying again", op, path, err)
	}
	return failf("%s", about(op+" "+path, path, err))
}
