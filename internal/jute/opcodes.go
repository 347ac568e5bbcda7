package jute

// Opcodes, as ZooKeeper's ZooDefs.OpCode defines them.
const (
	OpNotification         int32 = 0
	OpCreate               int32 = 1
	OpDelete               int32 = 2
	OpExists               int32 = 3
	OpGetData              int32 = 4
	OpSetData              int32 = 5
	OpGetACL               int32 = 6
	OpSetACL               int32 = 7
	OpGetChildren          int32 = 8
	OpSync                 int32 = 9
	OpPing                 int32 = 11
	OpGetChildren2         int32 = 12
	OpCheck                int32 = 13
	OpMulti                int32 = 14
	OpCreate2              int32 = 15
	OpReconfig             int32 = 16
	OpCheckWatches         int32 = 17
	OpRemoveWatches        int32 = 18
	OpCreateContainer      int32 = 19
	OpDeleteContainer      int32 = 20
	OpCreateTTL            int32 = 21
	OpMultiRead            int32 = 22
	OpAuth                 int32 = 100
	OpSetWatches           int32 = 101
	OpSASL                 int32 = 102
	OpGetEphemerals        int32 = 103
	OpGetAllChildrenNumber int32 = 104
	OpSetWatches2          int32 = 105
	OpAddWatch             int32 = 106
	OpWhoAmI               int32 = 107
	OpCreateSession        int32 = -10
	OpCloseSession         int32 = -11
	OpError                int32 = -1
)

// Reserved xids.
const (
	XidNotification int32 = -1 // watcher events
	XidPing         int32 = -2
	XidAuth         int32 = -4
	XidSetWatches   int32 = -8
)

// Create flags (CreateMode.toFlag).
const (
	FlagPersistent                 int32 = 0
	FlagEphemeral                  int32 = 1
	FlagPersistentSequential       int32 = 2
	FlagEphemeralSequential        int32 = 3
	FlagContainer                  int32 = 4
	FlagPersistentWithTTL          int32 = 5
	FlagPersistentSequentialWithTT int32 = 6
)

// Permission bits (ZooDefs.Perms).
const (
	PermRead   int32 = 1 << 0
	PermWrite  int32 = 1 << 1
	PermCreate int32 = 1 << 2
	PermDelete int32 = 1 << 3
	PermAdmin  int32 = 1 << 4
	PermAll    int32 = PermRead | PermWrite | PermCreate | PermDelete | PermAdmin
)

// Watcher event types (Watcher.Event.EventType).
const (
	EventNone                   int32 = -1
	EventNodeCreated            int32 = 1
	EventNodeDeleted            int32 = 2
	EventNodeDataChanged        int32 = 3
	EventNodeChildrenChanged    int32 = 4
	EventDataWatchRemoved       int32 = 5
	EventChildWatchRemoved      int32 = 6
	EventPersistentWatchRemoved int32 = 7
)

// Keeper states sent in watcher events (Watcher.Event.KeeperState).
const (
	StateSyncConnected int32 = 3
)

// AddWatch modes.
const (
	AddWatchPersistent          int32 = 0
	AddWatchPersistentRecursive int32 = 1
)

// Watcher types for checkWatches/removeWatches.
const (
	WatcherTypeChildren int32 = 1
	WatcherTypeData     int32 = 2
	WatcherTypeAny      int32 = 3
)

var opNames = map[int32]string{
	OpNotification:         "notification",
	OpCreate:               "create",
	OpDelete:               "delete",
	OpExists:               "exists",
	OpGetData:              "getData",
	OpSetData:              "setData",
	OpGetACL:               "getACL",
	OpSetACL:               "setACL",
	OpGetChildren:          "getChildren",
	OpSync:                 "sync",
	OpPing:                 "ping",
	OpGetChildren2:         "getChildren2",
	OpCheck:                "check",
	OpMulti:                "multi",
	OpCreate2:              "create2",
	OpReconfig:             "reconfig",
	OpCheckWatches:         "checkWatches",
	OpRemoveWatches:        "removeWatches",
	OpCreateContainer:      "createContainer",
	OpDeleteContainer:      "deleteContainer",
	OpCreateTTL:            "createTTL",
	OpMultiRead:            "multiRead",
	OpAuth:                 "auth",
	OpSetWatches:           "setWatches",
	OpSASL:                 "sasl",
	OpGetEphemerals:        "getEphemerals",
	OpGetAllChildrenNumber: "getAllChildrenNumber",
	OpSetWatches2:          "setWatches2",
	OpAddWatch:             "addWatch",
	OpWhoAmI:               "whoAmI",
	OpCreateSession:        "createSession",
	OpCloseSession:         "closeSession",
	OpError:                "error",
}

// OpName returns ZooKeeper's name for an opcode ("create", "setData", ...), or
// "op<N>" for an unknown one.
func OpName(op int32) string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return "op" + itoa(int64(op))
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [24]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
