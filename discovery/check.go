package discovery

import (
	"fmt"

	"github.com/zkit-dev/zkit/client"
	"github.com/zkit-dev/zkit/recipes"
)

// CheckInstance returns an *client.InputError when Register would refuse
// inst under base, and nil otherwise: base must be a valid path; Name and
// ID single node names (not empty, "." or "..", without "/"); Type empty or
// Dynamic; the ports within 0..65535; Payload and Extra valid JSON, Extra
// without the names of known members; and the instance's JSON within the
// server's limit on a node's data. It sends nothing: a command line can
// refuse bad input before it connects. The instance is checked as Register
// writes it, with the type and registration time Register fills in.
func CheckInstance(base string, inst Instance) error {
	_, err := encode("register", base, normalize(inst, Instance{}), client.MaxData)
	return err
}

// encode checks inst for op under base, as CheckInstance describes, and
// returns its JSON. maxData is the limit on a node's data: a client's
// (Client.MaxData, which counts its namespace), or the default.
func encode(op, base string, inst Instance, maxData func(path string) int) ([]byte, error) {
	if err := recipes.CheckName(op, base, "service name", inst.Name); err != nil {
		return nil, err
	}
	service := client.JoinPath(base, inst.Name)
	if err := recipes.CheckName(op, service, "instance id", inst.ID); err != nil {
		return nil, err
	}
	node := client.JoinPath(service, inst.ID)
	refuse := func(format string, args ...any) ([]byte, error) {
		return nil, &client.InputError{Op: op, Path: node, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case inst.Type != "" && inst.Type != Dynamic:
		return refuse("service type %s: zkit registers %s instances only (ephemeral nodes kept present)", inst.Type, Dynamic)
	case inst.Port < 0 || inst.Port > 65535:
		return refuse("port %d is not within 0..65535", inst.Port)
	case inst.SSLPort < 0 || inst.SSLPort > 65535:
		return refuse("SSL port %d is not within 0..65535", inst.SSLPort)
	}
	data, err := inst.MarshalJSON()
	if err != nil {
		return refuse("not encodable as JSON: %v", err)
	}
	if max := maxData(node); len(data) > max {
		return refuse("instance of %d bytes in JSON is over the %d-byte limit", len(data), max)
	}
	return data, nil
}
