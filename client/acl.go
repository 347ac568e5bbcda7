package client

import "github.com/go-zookeeper/zk"

// Stat is a znode's metadata, as the server returns it.
type Stat = zk.Stat

// ACL is one access-control entry.
type ACL = zk.ACL

// Permission bits for ACL entries.
const (
	PermRead   = zk.PermRead
	PermWrite  = zk.PermWrite
	PermCreate = zk.PermCreate
	PermDelete = zk.PermDelete
	PermAdmin  = zk.PermAdmin
	PermAll    = zk.PermAll
)

// OpenACL gives everyone every permission (ZooKeeper's OPEN_ACL_UNSAFE).
var OpenACL = zk.WorldACL(zk.PermAll)

// WorldACL gives everyone perms.
func WorldACL(perms int32) []ACL { return zk.WorldACL(perms) }

// DigestACL gives perms to the holder of user:password.
func DigestACL(perms int32, user, password string) []ACL { return zk.DigestACL(perms, user, password) }

// AuthACL gives perms to every identity the creating session authenticated as.
func AuthACL(perms int32) []ACL { return zk.AuthACL(perms) }
