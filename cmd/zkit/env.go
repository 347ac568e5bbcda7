package main

import (
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// envName is the environment variable of global flag name:
// --session-timeout is ZKIT_SESSION_TIMEOUT.
func envName(name string) string {
	return "ZKIT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// flagSource names where global flag name's value came from, for an
// error: "--name", or "$ZKIT_NAME" when the environment set it.
func (a *app) flagSource(name string) string {
	if os.Getenv(envName(name)) != "" && !a.global.Changed(name) {
		return "$" + envName(name)
	}
	return "--" + name
}

// flagsFromEnv gives each global flag not on the command line the value
// of its environment variable, if set and not empty; a value the flag refuses is a
// usage error naming the variable. --servers reads ZKIT_SERVERS itself
// (connectString), so that commands can tell an explicit --servers.
func flagsFromEnv(global *pflag.FlagSet) error {
	var err error
	global.VisitAll(func(f *pflag.Flag) {
		v := os.Getenv(envName(f.Name))
		if err != nil || f.Changed || v == "" || f.Name == "servers" || f.Name == "help" {
			return
		}
		if serr := f.Value.Set(v); serr != nil {
			err = usagef("$%s %q: %v", envName(f.Name), v, serr)
		}
	})
	return err
}
