package configwatch

import "errors"

// ErrNoConfig is returned by Get when the configuration node does not
// exist: nothing was ever published at the path.
var ErrNoConfig = errors.New("zkit: no configuration")
