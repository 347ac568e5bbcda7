package membership

import (
	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// CheckID returns an *client.InputError when path is not a valid group
// path (the root is not one: a group needs a node of its own) or id not a
// valid member id: a single non-empty node name, not "."
// or "..", without "/". Join checks the same; CheckID lets a caller
// refuse bad input before it connects.
func CheckID(path, id string) error {
	if err := recipes.CheckDir("join", path, "group"); err != nil {
		return err
	}
	return recipes.CheckName("join", path, "member id", id)
}

// checkJoin checks what Join is given: the path, the id and the size of
// the data, which c is to write.
func checkJoin(c *client.Client, path, id string, data []byte) error {
	if err := CheckID(path, id); err != nil {
		return err
	}
	return recipes.CheckData(c, "join", client.JoinPath(path, id), data)
}
