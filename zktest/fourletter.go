package zktest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// WatchedPaths returns the paths on which the server at addr keeps a watch
// for session, as its four-letter word wchc lists them (real ZooKeeper and
// the reference server alike): one-shot and persistent watches of every
// kind. A test uses it to show that a watch was set, or removed.
func WatchedPaths(ctx context.Context, addr string, session int64) (map[string]bool, error) {
	out, err := FourLetterWord(ctx, addr, "wchc")
	if err != nil {
		return nil, err
	}
	paths := map[string]bool{}
	mine := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "0x"):
			id, err := strconv.ParseUint(strings.TrimSpace(line[2:]), 16, 64)
			if err != nil {
				return nil, fmt.Errorf("zktest: wchc: %q: %w", line, err)
			}
			mine = int64(id) == session
		case mine && strings.HasPrefix(line, "\t"):
			paths[strings.TrimSpace(line)] = true
		}
	}
	return paths, nil
}

// ConnectedSessions returns the sessions whose clients are connected to
// the server at addr, as its four-letter word cons lists them (real
// ZooKeeper and the reference server alike): a test uses it to tell which
// server a client is on.
func ConnectedSessions(ctx context.Context, addr string) (map[int64]bool, error) {
	out, err := FourLetterWord(ctx, addr, "cons")
	if err != nil {
		return nil, err
	}
	sessions := map[int64]bool{}
	for _, line := range strings.Split(out, "\n") {
		_, rest, ok := strings.Cut(line, ",sid=0x")
		if !ok {
			continue // a connection without a session yet, or no connection
		}
		hex, _, _ := strings.Cut(rest, ",")
		id, err := strconv.ParseUint(strings.TrimSuffix(hex, ")"), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("zktest: cons: %q: %w", line, err)
		}
		sessions[int64(id)] = true
	}
	return sessions, nil
}
