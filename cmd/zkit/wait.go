package main

import (
	"errors"
	"time"

	"github.com/spf13/pflag"
)

// forever is how --wait says "no limit", its default where waiting has
// none: a duration of 0 is refused rather than taken for it.
const forever = "forever"

// waitValue is the value of a --wait flag: a positive duration, or
// "forever" (stored as 0).
type waitValue struct{ d *time.Duration }

// waitFlag defines --wait on fl, storing into d; its default is d's value
// (0: forever).
func waitFlag(fl *pflag.FlagSet, d *time.Duration, usage string) {
	fl.Var(waitValue{d}, "wait", usage+` (a duration such as 30s, or "forever")`)
}

func (w waitValue) String() string {
	if w.d == nil || *w.d == 0 {
		return forever
	}
	return w.d.String()
}

func (w waitValue) Set(s string) error {
	if s == forever {
		*w.d = 0
		return nil
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return errors.New(`want a duration such as 30s, or "forever"`)
	case d <= 0:
		return errors.New(`must be positive; "forever" waits without a limit`)
	}
	*w.d = d
	return nil
}

func (w waitValue) Type() string { return "duration" }
