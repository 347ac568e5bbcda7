package client

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidatePath(t *testing.T) {
	t.Parallel()
	good := []string{"/", "/a", "/a/b", "/a-b_c.d", "/a/.b", "/a/b..", "/zk\u00e9"}
	for _, p := range good {
		assert.Empty(t, ValidatePath(p, false), p)
	}
	bad := map[string]string{
		"":              "empty",
		"a":             "start with /",
		"/a/":           "end with /",
		"/a//b":         "empty node name",
		"/a/./b":        "relative",
		"/a/..":         "relative",
		"/a\x00b":       "invalid character",
		"/a\x1fb":       "invalid character",
		"/a\u0085":      "invalid character",
		"/a\ufff5":      "invalid character",
		"/a\U0001F600b": "invalid character",
		"/a\xff":        "UTF-8",
	}
	for p, want := range bad {
		got := ValidatePath(p, false)
		assert.Contains(t, got, want, "%q", p)
	}
	// Sequential creates may end with "/": the server appends the number.
	assert.Empty(t, ValidatePath("/a/", true))
	assert.Empty(t, ValidatePath("/a/lock-", true))
	assert.NotEmpty(t, ValidatePath("/", true))
}

func TestInputErrorIsTyped(t *testing.T) {
	t.Parallel()
	c := &Client{cfg: defaultConfig()}
	err := c.checkData("set", "/x", make([]byte, MaxData("/x")+1))
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.True(t, errors.Is(err, ErrInvalidInput))
	assert.Contains(t, err.Error(), "1048575-byte limit (jute.maxbuffer)")
	assert.NoError(t, c.checkData("set", "/x", make([]byte, MaxData("/x"))))
	assert.ErrorIs(t, checkVersion("delete", "/x", -2), ErrInvalidInput)
	assert.NoError(t, checkVersion("delete", "/x", -1))
}

func TestProtectedNames(t *testing.T) {
	t.Parallel()
	id := NewProtectedID()
	require.Len(t, id, 36)
	assert.Equal(t, byte('4'), id[14], "version 4 uuid: %s", id)
	assert.Contains(t, "89ab", string(id[19]), "RFC 4122 variant: %s", id)
	assert.Equal(t, 4, strings.Count(id, "-"))
	assert.NotEqual(t, id, NewProtectedID())

	name := ProtectedName(id, "lock-") + "0000000007"
	gotID, rest, ok := ParseProtected(name)
	require.True(t, ok)
	assert.Equal(t, id, gotID)
	assert.Equal(t, "lock-0000000007", rest)

	for _, n := range []string{"lock-0000000001", "_c_short-lock", "", "_c_" + strings.Repeat("x", 36) + "lock"} {
		_, _, ok := ParseProtected(n)
		assert.False(t, ok, n)
	}
}

func TestSplitJoinPath(t *testing.T) {
	t.Parallel()
	cases := []struct{ path, parent, name string }{
		{"/a", "/", "a"}, {"/a/b/c", "/a/b", "c"}, {"/", "", "/"},
	}
	for _, c := range cases {
		p, n := SplitPath(c.path)
		assert.Equal(t, c.parent, p, c.path)
		assert.Equal(t, c.name, n, c.path)
		if p != "" {
			assert.Equal(t, c.path, JoinPath(p, n))
		}
	}
}

func TestValidateACL(t *testing.T) {
	t.Parallel()
	good := [][]ACL{
		OpenACL,
		WorldACL(PermRead),
		AuthACL(PermAll),
		DigestACL(PermRead|PermWrite, "alice", "secret"),
		{{Perms: PermAll, Scheme: "ip", ID: "127.0.0.1"}},
		{{Perms: PermAll, Scheme: "ip", ID: "10.0.0.0/8"}},
		{{Perms: PermAll, Scheme: "x509", ID: "CN=alice,O=zkit"}},
		{{Perms: PermAll, Scheme: "sasl", ID: "alice"}},
		append(DigestACL(PermAll, "alice", "secret"), WorldACL(PermRead)...),
	}
	for _, acl := range good {
		assert.Empty(t, ValidateACL(acl), "%v", acl)
	}
	bad := map[string]struct {
		acl  []ACL
		want string
	}{
		"nil":          {nil, "empty ACL"},
		"no perms":     {[]ACL{{Scheme: "world", ID: "anyone"}}, "grants no permission"},
		"unknown bits": {[]ACL{{Perms: 0x40, Scheme: "world", ID: "anyone"}}, "unknown permission bits 0x40"},
		"world id":     {[]ACL{{Perms: PermAll, Scheme: "world", ID: "everyone"}}, `only id is "anyone"`},
		"plain digest": {[]ACL{{Perms: PermAll, Scheme: "digest", ID: "alice:secret"}}, "DigestACL"},
		"digest no :":  {[]ACL{{Perms: PermAll, Scheme: "digest", ID: "alice"}}, "DigestACL"},
		"ipv6":         {[]ACL{{Perms: PermAll, Scheme: "ip", ID: "::1"}}, "IPv4"},
		"ip mask":      {[]ACL{{Perms: PermAll, Scheme: "ip", ID: "10.0.0.0/33"}}, "IPv4"},
		"ip name":      {[]ACL{{Perms: PermAll, Scheme: "ip", ID: "localhost"}}, "IPv4"},
		"x509 empty":   {[]ACL{{Perms: PermAll, Scheme: "x509"}}, "empty id"},
		"unknown":      {[]ACL{{Perms: PermAll, Scheme: "kerberos", ID: "alice"}}, "unknown scheme"},
		"empty scheme": {[]ACL{{Perms: PermAll, ID: "alice"}}, "unknown scheme"},
		"second entry": {append(WorldACL(PermRead), ACL{Perms: -1, Scheme: "world", ID: "anyone"}), "ACL entry 1"},
	}
	for name, c := range bad {
		assert.Contains(t, ValidateACL(c.acl), c.want, name)
	}
	// A scheme the client authenticates with is accepted.
	custom := []ACL{{Perms: PermAll, Scheme: "kerberos", ID: "alice"}}
	assert.Empty(t, ValidateACL(custom, "kerberos"))
	assert.Contains(t, ValidateACL([]ACL{{Perms: PermAll, Scheme: "kerberos"}}, "kerberos"), "empty id")
}
