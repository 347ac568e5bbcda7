package main

import (
	"bufio"
	"bytes"
	"os"
	"strings"

	"github.com/zkit-dev/zkit/cmd/zkit/internal/workload"
)

// Credentials: --auth SCHEME:CREDENTIAL (repeatable, or one in
// $ZKIT_AUTH) and --auth-file FILE (one a line), added to every session
// zkit opens, as zkCli's addauth adds them. A credential is never said
// back, in an error or a log: an error names the flag and which of its
// values, or the file's line. The file keeps a digest's password out of
// the process list, where every argument of a command line shows.

// credentials are the session's credentials: --auth's, then
// --auth-file's, checked. It is read once, by checkGlobals.
func (a *app) credentials() ([]workload.Credential, error) {
	var creds []workload.Credential
	for i, s := range a.auth {
		c, reason := parseCredential(s)
		if reason != "" {
			return nil, usagef("%s (value %d of %d): %s", a.flagSource("auth"), i+1, len(a.auth), reason)
		}
		creds = append(creds, c)
	}
	if a.authFile == "" {
		return creds, nil
	}
	b, err := os.ReadFile(a.authFile)
	if err != nil {
		return nil, usagef("%s: %v", a.flagSource("auth-file"), err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c, reason := parseCredential(line)
		if reason != "" {
			return nil, usagef("%s %s, line %d: %s", a.flagSource("auth-file"), a.authFile, n, reason)
		}
		creds = append(creds, c)
	}
	if err := sc.Err(); err != nil {
		return nil, usagef("%s %s: %v", a.flagSource("auth-file"), a.authFile, err)
	}
	return creds, nil
}

// parseCredential reads SCHEME:CREDENTIAL; it returns a reason that does
// not repeat the credential when s is not one.
func parseCredential(s string) (workload.Credential, string) {
	scheme, cred, ok := strings.Cut(s, ":")
	switch {
	case !ok || scheme == "" || strings.ContainsAny(scheme, " \t"):
		return workload.Credential{}, "want SCHEME:CREDENTIAL, as digest:USER:PASSWORD"
	case scheme == "digest" && !strings.Contains(cred, ":"):
		return workload.Credential{}, "a digest credential is USER:PASSWORD (digest:USER:PASSWORD)"
	}
	return workload.Credential{Scheme: scheme, Auth: []byte(cred)}, ""
}

// hasIdentity reports whether the session will authenticate as someone:
// with credentials, or with a client certificate (an x509 identity). An
// ACL entry of the auth scheme needs one.
func (a *app) hasIdentity() bool { return len(a.creds) > 0 || a.tlsCert != "" }

// authFailed is the error of credentials the servers refused.
func authFailed(creds []workload.Credential) error {
	var schemes []string
	for _, c := range creds {
		schemes = append(schemes, c.Scheme)
	}
	return failf("the servers refused the credentials of --auth (%s): ZooKeeper takes digest:USER:PASSWORD; another scheme needs its provider configured on the servers",
		strings.Join(schemes, ", "))
}

// authHelp is what the root's help says of the credentials.
const authHelp = `Credentials: --auth SCHEME:CREDENTIAL (repeatable; digest:USER:PASSWORD as zkCli's
addauth takes it), or one in $ZKIT_AUTH, or --auth-file FILE with one a line (# starts
a comment): every command adds them to its session. A file keeps a password out of the
process list, where --auth shows. 'zkit digest USER:PASSWORD' prints the ACL id of a
digest credential, for setacl.`
