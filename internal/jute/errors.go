package jute

// Error is a ZooKeeper error code as carried in ReplyHeader.Err and in multi
// results (KeeperException.Code). It implements error.
type Error int32

// Error codes, as ZooKeeper's KeeperException.Code defines them.
const (
	ErrOK                       Error = 0
	ErrSystemError              Error = -1
	ErrRuntimeInconsistency     Error = -2
	ErrDataInconsistency        Error = -3
	ErrConnectionLoss           Error = -4
	ErrMarshallingError         Error = -5
	ErrUnimplemented            Error = -6
	ErrOperationTimeout         Error = -7
	ErrBadArguments             Error = -8
	ErrUnknownSession           Error = -12
	ErrNewConfigNoQuorum        Error = -13
	ErrReconfigInProgress       Error = -14
	ErrAPIError                 Error = -100
	ErrNoNode                   Error = -101
	ErrNoAuth                   Error = -102
	ErrBadVersion               Error = -103
	ErrNoChildrenForEphemerals  Error = -108
	ErrNodeExists               Error = -110
	ErrNotEmpty                 Error = -111
	ErrSessionExpired           Error = -112
	ErrInvalidCallback          Error = -113
	ErrInvalidACL               Error = -114
	ErrAuthFailed               Error = -115
	ErrSessionMoved             Error = -118
	ErrNotReadOnly              Error = -119
	ErrEphemeralOnLocalSession  Error = -120
	ErrNoWatcher                Error = -121
	ErrRequestTimeout           Error = -122
	ErrReconfigDisabled         Error = -123
	ErrSessionClosedRequireSASL Error = -124
	ErrQuotaExceeded            Error = -125
	ErrThrottledOp              Error = -127
)

var errNames = map[Error]string{
	ErrOK:                       "OK",
	ErrSystemError:              "SystemError",
	ErrRuntimeInconsistency:     "RuntimeInconsistency",
	ErrDataInconsistency:        "DataInconsistency",
	ErrConnectionLoss:           "ConnectionLoss",
	ErrMarshallingError:         "MarshallingError",
	ErrUnimplemented:            "Unimplemented",
	ErrOperationTimeout:         "OperationTimeout",
	ErrBadArguments:             "BadArguments",
	ErrUnknownSession:           "UnknownSession",
	ErrNewConfigNoQuorum:        "NewConfigNoQuorum",
	ErrReconfigInProgress:       "ReconfigInProgress",
	ErrAPIError:                 "APIError",
	ErrNoNode:                   "NoNode",
	ErrNoAuth:                   "NoAuth",
	ErrBadVersion:               "BadVersion",
	ErrNoChildrenForEphemerals:  "NoChildrenForEphemerals",
	ErrNodeExists:               "NodeExists",
	ErrNotEmpty:                 "NotEmpty",
	ErrSessionExpired:           "SessionExpired",
	ErrInvalidCallback:          "InvalidCallback",
	ErrInvalidACL:               "InvalidACL",
	ErrAuthFailed:               "AuthFailed",
	ErrSessionMoved:             "SessionMoved",
	ErrNotReadOnly:              "NotReadOnly",
	ErrEphemeralOnLocalSession:  "EphemeralOnLocalSession",
	ErrNoWatcher:                "NoWatcher",
	ErrRequestTimeout:           "RequestTimeout",
	ErrReconfigDisabled:         "ReconfigDisabled",
	ErrSessionClosedRequireSASL: "SessionClosedRequireSasl",
	ErrQuotaExceeded:            "QuotaExceeded",
	ErrThrottledOp:              "ThrottledOp",
}

// Error returns ZooKeeper's name of the code and the number, e.g. "NoNode (-101)".
func (e Error) Error() string {
	if n, ok := errNames[e]; ok {
		return n + " (" + itoa(int64(e)) + ")"
	}
	return "error " + itoa(int64(e))
}

// Name returns ZooKeeper's name of the code ("NoNode"), or the number.
func (e Error) Name() string {
	if n, ok := errNames[e]; ok {
		return n
	}
	return itoa(int64(e))
}
