// Package logtest records what code logs through log/slog, for tests that
// check a log line was written (or was not).
package logtest

import (
	"context"
	"log/slog"
	"strings"
	"sync"
)

// Recorder is a slog handler that keeps every record it is given, at every
// level. Use it as slog.New(&r).
type Recorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

// Enabled is true for every level.
func (r *Recorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps rec.
func (r *Recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}

// WithAttrs returns r: the attributes are dropped.
func (r *Recorder) WithAttrs([]slog.Attr) slog.Handler { return r }

// WithGroup returns r: the group is dropped.
func (r *Recorder) WithGroup(string) slog.Handler { return r }

// Records returns the records so far.
func (r *Recorder) Records() []slog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]slog.Record(nil), r.recs...)
}

// At returns the records of level l whose message contains msg.
func (r *Recorder) At(l slog.Level, msg string) []slog.Record {
	var out []slog.Record
	for _, rec := range r.Records() {
		if rec.Level == l && strings.Contains(rec.Message, msg) {
			out = append(out, rec)
		}
	}
	return out
}

// Attrs returns rec's attributes by key.
func Attrs(rec slog.Record) map[string]slog.Value {
	m := map[string]slog.Value{}
	rec.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value
		return true
	})
	return m
}
