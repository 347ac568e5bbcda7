package recipes

import (
	"errors"

	"github.com/zkit-dev/zkit/client"
)

// endOf names why a hold ended, for the telemetry's zkit.end
// (recipekit.Instruments.Ended).
func endOf(cause error) string {
	switch {
	case errors.Is(cause, ErrReleased):
		return "released"
	case errors.Is(cause, client.ErrClosed):
		return "closed"
	case errors.Is(cause, ErrSuspended):
		return "suspended"
	case errors.Is(cause, ErrNodeDeleted), errors.Is(cause, ErrConflict):
		return "deleted"
	}
	return "session"
}
