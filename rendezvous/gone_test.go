package rendezvous

import (
	"context"
	"errors"
	"testing"

	"github.com/zkit-dev/zkit/client"
)

// TestGoneIsMarkedWhereZrIsRead checks the mark Wait relies on: a value
// that finds zr missing is gone only after a read found zr, whether or not
// anybody received the value in which it existed.
func TestGoneIsMarkedWhereZrIsRead(t *testing.T) {
	states := []struct {
		v    Value
		err  error
		gone bool
	}{
		{v: Value{}, gone: false}, // not created yet
		{err: client.ErrConnectionClosed},
		{v: Value{Exists: true}, gone: false},
		{err: client.ErrConnectionClosed},
		{v: Value{}, gone: true}, // deleted
		{v: Value{Exists: true, Data: []byte("m:1")}, gone: false},
		{v: Value{}, gone: true},
	}
	i := 0
	read := goneReader(func(context.Context) (Value, <-chan client.WatchEvent, error) {
		s := states[i]
		return s.v, nil, s.err
	})
	for ; i < len(states); i++ {
		got, _, err := read(context.Background())
		if want := states[i].err; !errors.Is(err, want) || (want == nil) != (err == nil) {
			t.Fatalf("read %d: error %v, want %v", i, err, want)
		}
		if got.gone != states[i].gone || got.Exists != states[i].v.Exists {
			t.Errorf("read %d: exists %v gone %v, want exists %v gone %v", i, got.Exists, got.gone, states[i].v.Exists, states[i].gone)
		}
	}
}
