package main

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/counter"
)

func newCounterCmd(a *app) *cobra.Command {
	var encoding string
	cmd := &cobra.Command{
		Use:   "counter PATH get | add N | set N | cas OLD NEW [--encoding long|int|text]",
		Short: "Read or change a counter; print the resulting value",
		Long: `Reads or changes the counter stored at PATH and prints the resulting value on stdout
(with -o json: {"path":PATH,"value":N}):

  get          the value (0 while PATH does not exist)
  add N        adds N and prints the value right after it (creates PATH holding N if missing)
  set N        stores N
  cas OLD NEW  stores NEW if the counter holds OLD; otherwise prints the value found
               and exits with status 1, writing nothing

Every change is a conditional write (setData with the version read), so concurrent
zkit, Curator and kazoo clients never lose or double an increment. If the reply to a
write is lost and zkit cannot tell whether it was applied, it says so and exits 1:
read the value before trying again.

--encoding: long (8-byte big-endian, Curator's DistributedAtomicLong; the default),
int (4-byte, Curator's SharedCount) or text (decimal, kazoo's Counter). Put negative
numbers after "--".`,
		Example: `  zkit counter /app/builds add 1
  zkit counter /app/builds get
  zkit counter /app/quota cas 10 9
  zkit counter /app/quota --encoding int add -- -1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			enc, err := counter.ParseEncoding(encoding)
			if err != nil {
				return usagef("--encoding %q: want long, int or text", encoding)
			}
			op, err := a.counterArgs(args)
			if err != nil {
				return err
			}
			if enc == counter.Int && (op.verb == "set" || op.verb == "cas") {
				// What add gives depends on the value held; these do not.
				for _, v := range op.nums {
					if v < math.MinInt32 || v > math.MaxInt32 {
						return usagef("%s: value %d does not fit the int encoding (4 bytes)", op.verb, v)
					}
				}
			}
			return a.runCounter(cmd.Context(), op, enc)
		},
	}
	cmd.Flags().StringVar(&encoding, "encoding", "long", "how the value is stored: long, int or text")
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		if strings.Contains(err.Error(), "shorthand flag") && strings.ContainsAny(err.Error(), "0123456789") {
			return usagef("%v: put negative numbers after \"--\" (zkit counter PATH add -- -5)", err)
		}
		return usagef("%v", err)
	})
	return cmd
}

// counterOp is one parsed "zkit counter" command line.
type counterOp struct {
	path string
	verb string
	nums []int64
}

const counterUsage = "PATH get | add N | set N | cas OLD NEW"

func (a *app) counterArgs(args []string) (counterOp, error) {
	if len(args) < 2 {
		return counterOp{}, usagef("missing %s", map[bool]string{true: "PATH", false: "get, add, set or cas"}[len(args) == 0])
	}
	op := counterOp{path: args[0], verb: args[1]}
	want := map[string]int{"get": 0, "add": 1, "set": 1, "cas": 2}
	n, ok := want[op.verb]
	switch {
	case !ok:
		return op, usagef("unknown counter operation %q (want %s)", op.verb, counterUsage)
	case len(args)-2 != n:
		return op, usagef("%s takes %d number(s), got %d (%s)", op.verb, n, len(args)-2, counterUsage)
	}
	check := a.writablePath
	if op.verb == "get" {
		check = func(path string) error { return recipePath(path, "counter") }
	}
	if err := check(op.path); err != nil {
		return op, err
	}
	for _, s := range args[2:] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return op, usagef("%s: %q is not a 64-bit integer", op.verb, s)
		}
		op.nums = append(op.nums, v)
	}
	return op, nil
}

func (a *app) runCounter(ctx context.Context, op counterOp, enc counter.Encoding) error {
	connect := a.connect
	if op.verb == "get" {
		connect = a.connectToRead
	}
	c, err := connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	k := counter.New(c, op.path, counter.WithEncoding(enc))
	var v int64
	switch op.verb {
	case "get":
		v, err = k.Get(ctx)
	case "add":
		v, err = k.Add(ctx, op.nums[0])
	case "set":
		v, err = op.nums[0], k.Set(ctx, op.nums[0])
	case "cas":
		var swapped bool
		swapped, err = k.CompareAndSet(ctx, op.nums[0], op.nums[1])
		if err == nil && !swapped {
			found, gerr := k.Get(ctx)
			if gerr != nil {
				return counterError(op, gerr)
			}
			a.emit(strconv.FormatInt(found, 10), counterJSON{op.path, found})
			return failf("%s holds %d, not %d: nothing written", op.path, found, op.nums[0])
		}
		v = op.nums[1]
	}
	if err != nil {
		return counterError(op, err)
	}
	return a.emit(strconv.FormatInt(v, 10), counterJSON{op.path, v})
}

// counterJSON is counter's JSON output.
type counterJSON struct {
	Path  string `json:"path"`
	Value int64  `json:"value"`
}

// counterError turns a counter error into zkit's one-line error with its
// fix.
func counterError(op counterOp, err error) error {
	var de *counter.DataError
	switch {
	case errors.As(err, &de):
		return failf("%s holds %d bytes of data that do not decode with --encoding %s; nothing written: pass the right --encoding, or delete the node", op.path, de.Len, de.Encoding)
	case errors.Is(err, counter.ErrOverflow):
		return failf("%s", about(op.verb+" "+op.path, op.path, err))
	case errors.Is(err, client.ErrInvalidInput):
		return usagef("%v", err)
	case client.IsOutcomeUnknown(err):
		return failf("%s %s: the reply was lost and zkit cannot tell whether the change was applied (%v): read it with 'zkit counter %s get' before trying again", op.verb, op.path, err, op.path)
	}
	return failf("%s", about(op.verb+" "+op.path, op.path, err))
}
