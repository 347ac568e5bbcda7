package discovery

import (
	"fmt"
	"strconv"
	"strings"
)

// URISpec is the template of an instance's URI, as Curator's UriSpec holds
// it: literal parts and variables. ParseURISpec reads the written form
// "{scheme}://{address}:{port}/api"; Instance.URI fills it in.
type URISpec []URIPart

// URIPart is one part of a URISpec: a variable's name, or a literal.
type URIPart struct {
	Value    string `json:"value"`
	Variable bool   `json:"variable"`
}

// The variables an instance fills in (Curator's UriSpec fields). A
// variable that is neither one of these nor given to URI stands for
// nothing.
const (
	VarScheme     = "scheme"                // "https" when the instance has an SSL port, else "http"
	VarName       = "name"                  // the service's name
	VarID         = "id"                    // the instance's id
	VarAddress    = "address"               // its address
	VarPort       = "port"                  // its port ("" when none)
	VarSSLPort    = "ssl-port"              // its SSL port ("" when none)
	VarRegistered = "registration-time-utc" // its registration time, in milliseconds
	VarType       = "service-type"          // its service type, in lower case
	VarOpenBrace  = "["                     // a literal "{"
	VarCloseBrace = "]"                     // a literal "}"
)

// ParseURISpec reads a URI template as Curator's UriSpec(String) does:
// text between braces is a variable (its name trimmed of spaces),
// everything else is literal. A brace that does not pair up is an error.
// Write a literal brace as the variable "{[}" or "{]}".
func ParseURISpec(s string) (URISpec, error) {
	spec := URISpec{}
	inside := false
	for len(s) > 0 {
		i := strings.IndexAny(s, "{}")
		if i < 0 {
			i = len(s)
		}
		if i > 0 {
			part := URIPart{Value: s[:i], Variable: inside}
			if inside {
				part.Value = strings.TrimSpace(part.Value)
			}
			spec = append(spec, part)
			s = s[i:]
			continue
		}
		switch s[0] {
		case '{':
			if inside {
				return nil, fmt.Errorf("uri spec: { is not allowed inside a variable")
			}
			inside = true
		case '}':
			if !inside {
				return nil, fmt.Errorf("uri spec: } without {")
			}
			inside = false
		}
		s = s[1:]
	}
	if inside {
		return nil, fmt.Errorf("uri spec: a variable is not closed with }")
	}
	return spec, nil
}

// String is the template's written form, as ParseURISpec reads it.
func (s URISpec) String() string {
	var b strings.Builder
	for _, p := range s {
		if p.Variable {
			b.WriteString("{" + p.Value + "}")
		} else {
			b.WriteString(p.Value)
		}
	}
	return b.String()
}

// uriSpecJSON is a URISpec as Curator's JSON holds it.
type uriSpecJSON struct {
	Parts []URIPart `json:"parts"`
}

// jsonValue is the spec's JSON value: null when nil.
func (s URISpec) jsonValue() any {
	if s == nil {
		return nil
	}
	parts := []URIPart(s)
	if parts == nil {
		parts = []URIPart{}
	}
	return uriSpecJSON{Parts: parts}
}

// URI fills in the instance's URISpec as Curator's
// ServiceInstance.buildUriSpec does: the variables named by the Var
// constants take the instance's values, vars (which may be nil) add
// variables of the caller's own or override those. An instance without a
// URISpec has the URI "".
func (i Instance) URI(vars map[string]string) string {
	var b strings.Builder
	for _, p := range i.URISpec {
		if !p.Variable {
			b.WriteString(p.Value)
			continue
		}
		if v, ok := vars[p.Value]; ok {
			b.WriteString(v)
			continue
		}
		b.WriteString(i.variable(p.Value))
	}
	return b.String()
}

// variable is the value the instance gives variable name.
func (i Instance) variable(name string) string {
	port := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	switch name {
	case VarScheme:
		if i.SSLPort != 0 {
			return "https"
		}
		return "http"
	case VarName:
		return i.Name
	case VarID:
		return i.ID
	case VarAddress:
		return i.Address
	case VarPort:
		return port(i.Port)
	case VarSSLPort:
		return port(i.SSLPort)
	case VarRegistered:
		if i.Registered.IsZero() {
			return "0"
		}
		return strconv.FormatInt(i.Registered.UnixMilli(), 10)
	case VarType:
		t := i.Type
		if t == "" {
			t = Dynamic
		}
		return strings.ToLower(string(t))
	case VarOpenBrace:
		return "{"
	case VarCloseBrace:
		return "}"
	}
	return ""
}
