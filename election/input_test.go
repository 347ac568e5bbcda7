package election_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/election"
	"github.com/zkit-dev/zkit/internal/recipetest"
	"github.com/zkit-dev/zkit/zktest"
)

// Invalid ids get an *client.InputError from Campaign, and invalid paths
// (the root among them) from Leader, Participants and Observe, before
// anything is sent. (Campaign's invalid
// paths are the contract's.)
func TestBadInput(t *testing.T) {
	zktest.EachBackend(t, func(t *testing.T, b zktest.Backend) {
		ctx := recipetest.Context(t)
		c := b.Connect(t)
		base := zktest.UniquePath(t)
		isInput := func(err error) bool {
			var ie *client.InputError
			return errors.As(err, &ie) && errors.Is(err, client.ErrInvalidInput)
		}
		for _, id := range []string{"", "\xff\xfe", "two\nlines", "nul\x00", "bell\a"} {
			if _, err := election.New(c, base+"/e", id).Campaign(ctx); !isInput(err) {
				t.Errorf("Campaign with id %q = %v, want an *client.InputError", id, err)
			}
		}
		if _, err := election.New(c, base+"/e", strings.Repeat("x", 2<<20)).Campaign(ctx); !isInput(err) {
			t.Errorf("Campaign with a 2 MB id = %v, want an *client.InputError", err)
		}
		for _, p := range []string{"", "relative", "/", base + "//x", base + "/x/", base + "/./x", base + "/bad\x00name"} {
			e := election.New(c, p, "")
			if _, err := e.Leader(ctx); !isInput(err) {
				t.Errorf("Leader at %q = %v, want an *client.InputError", p, err)
			}
			var ie *client.InputError
			if _, err := e.Participants(ctx); !isInput(err) || !errors.As(err, &ie) || ie.Op != "participants" {
				t.Errorf("Participants at %q = %v, want an *client.InputError naming participants", p, err)
			}
			feed := e.Observe(ctx)
			for range feed.Values() {
				t.Errorf("Observe at %q delivered a value", p)
			}
			if !isInput(feed.Err()) {
				t.Errorf("Observe at %q ended with %v, want an *client.InputError", p, feed.Err())
			}
		}
		if ok, _, err := c.Exists(ctx, base); err != nil || ok {
			t.Fatalf("something was created under %s (exists=%v, err=%v)", base, ok, err)
		}
		if !c.Session().Alive() {
			t.Fatal("bad input cost the session")
		}
	})
}
