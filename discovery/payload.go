package discovery

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// JavaPayload returns v as the payload of an instance that a Java service
// reads with Curator as an object of the class javaClass (its binary name:
// "com.example.InstanceDetails", "com.example.Outer$Details"). Curator's
// JsonInstanceSerializer writes an object payload with Jackson's class
// type information, an "@class" member naming its class, and reads it
// back only with it: without "@class" a Java service whose payload class
// is its own gets a ClassCastException from queryForInstances, and so
// from its ServiceProvider.
//
// v must encode to a JSON object. Payloads that Java reads as a String, a
// number or a boolean carry no class: give their JSON as it is
// (json.Marshal). A Java service whose payload class is Object or Map
// reads any payload.
func JavaPayload(javaClass string, v any) (json.RawMessage, error) {
	if javaClass == "" {
		return nil, fmt.Errorf("discovery: JavaPayload: empty class name")
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("discovery: JavaPayload: %w", err)
	}
	data = bytes.TrimSpace(data)
	if len(data) < 2 || data[0] != '{' {
		return nil, fmt.Errorf("discovery: JavaPayload: %T encodes to %.20s, not a JSON object", v, data)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return nil, fmt.Errorf("discovery: JavaPayload: %w", err)
	}
	if _, ok := members["@class"]; ok {
		return nil, fmt.Errorf("discovery: JavaPayload: %T has an @class member already", v)
	}
	class, _ := json.Marshal(javaClass)
	var b bytes.Buffer
	b.WriteString(`{"@class":`)
	b.Write(class)
	if rest := bytes.TrimSpace(data[1:]); len(rest) > 1 { // more than "}"
		b.WriteByte(',')
	}
	b.Write(data[1:])
	return b.Bytes(), nil
}
