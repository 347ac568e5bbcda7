package zktest

import (
	"archive/zip"
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// Environment variables that FindZooKeeper and InstallOrSkip read.
const (
	// ZooKeeperHomeEnv names a ZooKeeper install: a directory with lib/*.jar
	// (the Apache binary tarball) or with the jars directly.
	ZooKeeperHomeEnv = "ZOOKEEPER_HOME"
	// RequireZooKeeperEnv, when set to "1" (or "true"), turns "ZooKeeper is
	// not installed" from a skipped test into a failed one.
	RequireZooKeeperEnv = "ZKIT_REQUIRE_ZOOKEEPER"
	// ReferenceOnlyEnv, when set to "1" (or "true"), runs the tests on the
	// bundled reference server alone: every test or subtest that would
	// start real ZooKeeper (RealBackend, EachBackend's "zookeeper",
	// SharedZooKeeper, StartZooKeeper, StartEnsemble, InstallOrSkip) is
	// skipped, even with an install at hand. It is for a quick run, such as
	// CI's run under a second Go release. Set together with
	// RequireZooKeeperEnv, the two contradict each other: those tests fail.
	ReferenceOnlyEnv = "ZKIT_REFERENCE_ONLY"
)

// ErrNotInstalled is wrapped by the error FindZooKeeper returns when it finds
// no usable ZooKeeper install or no java executable.
var ErrNotInstalled = errors.New("zktest: Apache ZooKeeper not available")

// debianJarDir is where Debian's zookeeper package (and its dependencies) put
// their jars. A variable so that tests can point it elsewhere.
var debianJarDir = "/usr/share/java"

// Install is a local installation of Apache ZooKeeper that zktest can run.
type Install struct {
	// Java is the java executable: $JAVA_HOME/bin/java if that exists,
	// else "java" from PATH, resolved to a path.
	Java string
	// Classpath lists the jars needed to run the server, separated by
	// os.PathListSeparator.
	Classpath string
	// Version is ZooKeeper's version ("3.8.0"), or "" if it could not be
	// determined from the jar.
	Version string
	// Dir is the directory the jars were found in.
	Dir string

	logging logBackend
}

// logBackend is the slf4j binding found on the classpath; the launcher
// configures it to log warnings only.
type logBackend int

const (
	logUnknown logBackend = iota // no binding zktest knows: the server's defaults apply
	logSimple                    // slf4j-simple
	logLogback                   // logback-classic (Apache tarballs from 3.8)
	logLog4j                     // log4j 1.2 (Apache tarballs before 3.8)
	logNop                       // slf4j-nop
)

// FindZooKeeper locates a ZooKeeper install and a java executable.
//
// If ZOOKEEPER_HOME is set it must name a directory with lib/*.jar (every jar
// in lib/ is used, as the Apache tarball's scripts do) or with the jars
// directly (then the server's jars are picked by name). Otherwise Debian's
// layout is tried: the zookeeper package's jars in /usr/share/java.
//
// The error wraps ErrNotInstalled and says what to install.
func FindZooKeeper() (*Install, error) {
	java, err := findJava()
	if err != nil {
		return nil, err
	}
	var inst *Install
	if home := os.Getenv(ZooKeeperHomeEnv); home != "" {
		inst, err = installFromHome(home)
	} else {
		inst, err = installFromJarDir(debianJarDir)
		if err != nil {
			err = fmt.Errorf("%w: no %s set and no Debian install in %s: install ZooKeeper (Debian/Ubuntu: apt-get install zookeeper) or set %s to an Apache ZooKeeper directory",
				ErrNotInstalled, ZooKeeperHomeEnv, debianJarDir, ZooKeeperHomeEnv)
		}
	}
	if err != nil {
		return nil, err
	}
	inst.Java = java
	return inst, nil
}

// InstallOrSkip returns the local ZooKeeper install, or skips the test with a
// message naming what to install when there is none. With
// ZKIT_REQUIRE_ZOOKEEPER=1 it fails the test instead of skipping it.
func InstallOrSkip(t testing.TB) *Install {
	t.Helper()
	skipIfReferenceOnly(t)
	inst, err := FindZooKeeper()
	if err != nil {
		if zooKeeperRequired() {
			t.Fatalf("%v (%s=%s: failing instead of skipping)", err, RequireZooKeeperEnv, os.Getenv(RequireZooKeeperEnv))
		}
		t.Skipf("skipping: %v", err)
	}
	return inst
}

// skipIfReferenceOnly skips a test about to start real ZooKeeper when
// ReferenceOnlyEnv says the run is on the reference server alone.
func skipIfReferenceOnly(t testing.TB) {
	t.Helper()
	if !envSet(ReferenceOnlyEnv) {
		return
	}
	if zooKeeperRequired() {
		t.Fatalf("zktest: %s and %s are both set: real ZooKeeper is both required and ruled out", ReferenceOnlyEnv, RequireZooKeeperEnv)
	}
	t.Skipf("skipping: real ZooKeeper not used (%s=%s)", ReferenceOnlyEnv, os.Getenv(ReferenceOnlyEnv))
}

func zooKeeperRequired() bool { return envSet(RequireZooKeeperEnv) }

// envSet reports whether the variable name holds "1", "true" or "yes".
func envSet(name string) bool {
	switch strings.ToLower(os.Getenv(name)) {
	case "1", "true", "yes":
		return true
	}
	return false
}

func findJava() (string, error) {
	if jh := os.Getenv("JAVA_HOME"); jh != "" {
		p := filepath.Join(jh, "bin", "java")
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("%w: no java on PATH (ZooKeeper needs a JRE: apt-get install zookeeper pulls one in, or install default-jre-headless)", ErrNotInstalled)
	}
	return p, nil
}

func installFromHome(home string) (*Install, error) {
	lib := filepath.Join(home, "lib")
	if jars, _ := filepath.Glob(filepath.Join(lib, "*.jar")); len(jars) > 0 {
		sort.Strings(jars)
		var zk string
		backends := map[string]bool{}
		for _, j := range jars {
			switch b := jarBase(filepath.Base(j)); b {
			case "zookeeper":
				zk = j
			default:
				backends[b] = true
			}
		}
		if zk == "" {
			return nil, fmt.Errorf("%w: %s=%s: %s has jars but no zookeeper-*.jar", ErrNotInstalled, ZooKeeperHomeEnv, home, lib)
		}
		inst := &Install{Classpath: strings.Join(jars, string(os.PathListSeparator)), Dir: lib, Version: jarVersion(zk)}
		switch {
		case backends["logback-classic"]:
			inst.logging = logLogback
		case backends["slf4j-log4j12"] || backends["slf4j-reload4j"]:
			inst.logging = logLog4j
		case backends["slf4j-simple"]:
			inst.logging = logSimple
		case backends["slf4j-nop"]:
			inst.logging = logNop
		}
		return inst, nil
	}
	inst, err := installFromJarDir(home)
	if err != nil {
		return nil, fmt.Errorf("%w: %s=%s has neither lib/*.jar nor the ZooKeeper jars: %v", ErrNotInstalled, ZooKeeperHomeEnv, home, err)
	}
	return inst, nil
}

// serverJars are the jars the server needs, by base name, in classpath order.
// Missing optional ones are left out.
var serverJars = []struct {
	base     string
	required bool
}{
	{"zookeeper", true},
	{"zookeeper-jute", true},
	{"slf4j-api", true},
	{"netty-handler", false},
	{"netty-common", false},
	{"netty-buffer", false},
	{"netty-transport", false},
	{"netty-codec", false},
	{"netty-resolver", false},
	{"netty-transport-native-epoll", false},
	{"netty-transport-classes-epoll", false},
	{"netty-transport-native-unix-common", false},
	{"metrics-core", false},
	{"snappy-java", false},
	{"commons-io", false},
	{"commons-cli", false},
	{"audience-annotations", false},
	// The admin server (admin.enableServer, off in zktest's zoo.cfg unless
	// WithConfig turns it on): Jetty, the servlet API and Jackson.
	{"servlet-api", false},
	{"jetty9-server", false},
	{"jetty9-servlet", false},
	{"jetty9-http", false},
	{"jetty9-io", false},
	{"jetty9-util", false},
	{"jetty9-security", false},
	{"jackson-databind", false},
	{"jackson-core", false},
	{"jackson-annotations", false},
}

// installFromJarDir picks the server's jars by name from a directory of jars
// such as Debian's /usr/share/java, which holds many unrelated ones.
func installFromJarDir(dir string) (*Install, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	byBase := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".jar") {
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || !fi.Mode().IsRegular() {
			continue // a dangling symlink, or not a file
		}
		b := jarBase(name)
		// Prefer the unversioned name (Debian's real file; the versioned
		// one is a symlink to it), else the first in directory order.
		if prev, ok := byBase[b]; !ok || (prev != b+".jar" && name == b+".jar") {
			byBase[b] = name
		}
	}
	var cp []string
	for _, j := range serverJars {
		name, ok := byBase[j.base]
		if !ok {
			if j.required {
				return nil, fmt.Errorf("no %s jar in %s", j.base, dir)
			}
			continue
		}
		cp = append(cp, filepath.Join(dir, name))
	}
	inst := &Install{Dir: dir}
	switch {
	case byBase["slf4j-simple"] != "":
		inst.logging = logSimple
		cp = append(cp, filepath.Join(dir, byBase["slf4j-simple"]))
	case byBase["logback-classic"] != "" && byBase["logback-core"] != "":
		inst.logging = logLogback
		cp = append(cp, filepath.Join(dir, byBase["logback-classic"]), filepath.Join(dir, byBase["logback-core"]))
	case byBase["slf4j-nop"] != "":
		inst.logging = logNop
		cp = append(cp, filepath.Join(dir, byBase["slf4j-nop"]))
	}
	inst.Classpath = strings.Join(cp, string(os.PathListSeparator))
	inst.Version = jarVersion(filepath.Join(dir, byBase["zookeeper"]))
	if inst.Version == "" {
		// Debian keeps a versioned symlink beside the real jar.
		for _, e := range entries {
			if m := zkJarVersionRE.FindStringSubmatch(e.Name()); m != nil {
				inst.Version = m[1]
				break
			}
		}
	}
	return inst, nil
}

var (
	jarVersionRE   = regexp.MustCompile(`^(.+?)-[0-9][^/]*$`)
	zkJarVersionRE = regexp.MustCompile(`^zookeeper-([0-9]+\.[0-9]+\.[0-9]+[^/]*)\.jar$`)
)

// jarBase strips ".jar" and a version suffix: "netty-codec-4.1.48.Final.jar"
// becomes "netty-codec".
func jarBase(name string) string {
	name = strings.TrimSuffix(name, ".jar")
	if m := jarVersionRE.FindStringSubmatch(name); m != nil {
		return m[1]
	}
	return name
}

// jarVersion reads ZooKeeper's version from the Maven metadata inside the
// jar, falling back to the version in the file name.
func jarVersion(jar string) string {
	if zr, err := zip.OpenReader(jar); err == nil {
		defer zr.Close()
		for _, f := range zr.File {
			if f.Name != "META-INF/maven/org.apache.zookeeper/zookeeper/pom.properties" {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				break
			}
			defer rc.Close()
			sc := bufio.NewScanner(rc)
			for sc.Scan() {
				if v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "version="); ok {
					return v
				}
			}
			break
		}
	}
	if m := zkJarVersionRE.FindStringSubmatch(filepath.Base(jar)); m != nil {
		return m[1]
	}
	return ""
}
