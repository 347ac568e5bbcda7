package zktest

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestJarBase(t *testing.T) {
	for in, want := range map[string]string{
		"zookeeper.jar":            "zookeeper",
		"zookeeper-3.8.0.jar":      "zookeeper",
		"zookeeper-jute-3.8.0.jar": "zookeeper-jute",
		"netty-transport-native-epoll-4.1.94.Final-linux-x86_64.jar": "netty-transport-native-epoll",
		"slf4j-api-1.7.32.jar":    "slf4j-api",
		"snappy-java-1.1.8.3.jar": "snappy-java",
		"commons-io.jar":          "commons-io",
	} {
		if got := jarBase(in); got != want {
			t.Errorf("jarBase(%q) = %q; want %q", in, got, want)
		}
	}
}

func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestInstallFromApacheTarball(t *testing.T) {
	home := t.TempDir()
	lib := filepath.Join(home, "lib")
	jars := []string{"logback-classic-1.2.13.jar", "logback-core-1.2.13.jar", "netty-handler-4.1.105.Final.jar",
		"slf4j-api-1.7.30.jar", "zookeeper-3.9.2.jar", "zookeeper-jute-3.9.2.jar"}
	touch(t, lib, jars...)
	touch(t, home, "README.md")
	inst, err := installFromHome(home)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, j := range jars {
		want = append(want, filepath.Join(lib, j))
	}
	if got := strings.Split(inst.Classpath, string(os.PathListSeparator)); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Classpath = %v; want every jar in lib: %v", got, want)
	}
	if inst.Version != "3.9.2" || inst.Dir != lib || inst.logging != logLogback {
		t.Errorf("got Version %q Dir %q logging %v; want 3.9.2, %s, logback", inst.Version, inst.Dir, inst.logging, lib)
	}

	touch(t, filepath.Join(t.TempDir(), "lib"))
	bad := t.TempDir()
	touch(t, filepath.Join(bad, "lib"), "slf4j-api-1.7.30.jar")
	if _, err := installFromHome(bad); !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "no zookeeper") {
		t.Errorf("lib without zookeeper jar: err = %v", err)
	}
}

func TestInstallFromJarDir(t *testing.T) {
	dir := t.TempDir()
	// A Debian-like /usr/share/java: many unrelated jars, versioned symlinks.
	touch(t, dir, "zookeeper.jar", "zookeeper-jute.jar", "slf4j-api.jar", "slf4j-simple.jar", "slf4j-nop.jar",
		"slf4j-log4j12.jar", "guava.jar", "netty-codec.jar", "netty-codec-http.jar", "commons-io.jar")
	for _, l := range []string{"zookeeper", "zookeeper-jute", "netty-codec"} {
		if err := os.Symlink(l+".jar", filepath.Join(dir, l+"-3.8.0.jar")); err != nil {
			t.Fatal(err)
		}
	}
	inst, err := installFromJarDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, j := range []string{"zookeeper.jar", "zookeeper-jute.jar", "slf4j-api.jar", "netty-codec.jar", "commons-io.jar", "slf4j-simple.jar"} {
		want = append(want, filepath.Join(dir, j))
	}
	if inst.Classpath != strings.Join(want, string(os.PathListSeparator)) {
		t.Errorf("Classpath = %s\nwant        %s", inst.Classpath, strings.Join(want, string(os.PathListSeparator)))
	}
	if inst.Version != "3.8.0" || inst.logging != logSimple {
		t.Errorf("Version %q logging %v; want 3.8.0 from the symlink name, slf4j-simple", inst.Version, inst.logging)
	}

	os.Remove(filepath.Join(dir, "zookeeper-jute.jar"))
	if _, err := installFromJarDir(dir); err == nil || !strings.Contains(err.Error(), "zookeeper-jute") {
		t.Errorf("without zookeeper-jute: err = %v", err)
	}
}

func TestFindZooKeeperErrors(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Setenv("JAVA_HOME", "")
		if _, err := FindZooKeeper(); !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "java") {
			t.Fatalf("without java: err = %v", err)
		}
		t.Skip("no java: the remaining cases need it")
	}
	t.Run("empty ZOOKEEPER_HOME", func(t *testing.T) {
		t.Setenv(ZooKeeperHomeEnv, t.TempDir())
		_, err := FindZooKeeper()
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), ZooKeeperHomeEnv) {
			t.Fatalf("err = %v; want ErrNotInstalled naming %s", err, ZooKeeperHomeEnv)
		}
	})
	t.Run("no Debian package", func(t *testing.T) {
		t.Setenv(ZooKeeperHomeEnv, "")
		old := debianJarDir
		debianJarDir = t.TempDir()
		defer func() { debianJarDir = old }()
		_, err := FindZooKeeper()
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "apt-get install zookeeper") {
			t.Fatalf("err = %v; want ErrNotInstalled naming apt-get install zookeeper", err)
		}
	})
}

func TestFindZooKeeperDebian(t *testing.T) {
	if os.Getenv(ZooKeeperHomeEnv) != "" {
		t.Skipf("%s is set", ZooKeeperHomeEnv)
	}
	inst := InstallOrSkip(t)
	if !strings.HasPrefix(inst.Version, "3.") {
		t.Errorf("Version = %q", inst.Version)
	}
	for _, j := range strings.Split(inst.Classpath, string(os.PathListSeparator)) {
		if _, err := os.Stat(j); err != nil {
			t.Errorf("classpath entry: %v", err)
		}
	}
	if !strings.Contains(inst.Classpath, "zookeeper-jute") || inst.Java == "" {
		t.Errorf("install = %+v", inst)
	}
}

// TestInstallOrSkipHelper is run as a subprocess by TestInstallOrSkip.
func TestInstallOrSkipHelper(t *testing.T) {
	if os.Getenv("ZKTEST_INSTALL_HELPER") != "1" {
		t.Skip("helper for TestInstallOrSkip")
	}
	InstallOrSkip(t)
	t.Log("install found")
}

func TestInstallOrSkip(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java: the message would be about java")
	}
	empty := t.TempDir()
	run := func(require string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInstallOrSkipHelper$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "ZKTEST_INSTALL_HELPER=1", ZooKeeperHomeEnv+"="+empty, RequireZooKeeperEnv+"="+require, ReferenceOnlyEnv+"=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("")
	if err != nil || !strings.Contains(out, "--- SKIP: TestInstallOrSkipHelper") || !strings.Contains(out, ZooKeeperHomeEnv) {
		t.Errorf("without %s: err %v, output:\n%s", RequireZooKeeperEnv, err, out)
	}
	out, err = run("1")
	if err == nil || !strings.Contains(out, "--- FAIL: TestInstallOrSkipHelper") || !strings.Contains(out, ZooKeeperHomeEnv) {
		t.Errorf("with %s=1: err %v, output:\n%s", RequireZooKeeperEnv, err, out)
	}
}

// TestReferenceOnlyHelper is run as a subprocess by TestReferenceOnly.
func TestReferenceOnlyHelper(t *testing.T) {
	if os.Getenv("ZKTEST_REFERENCE_ONLY_HELPER") != "1" {
		t.Skip("helper for TestReferenceOnly")
	}
	t.Run("install", func(t *testing.T) { InstallOrSkip(t) })
	t.Run("given-install", func(t *testing.T) { StartZooKeeper(t, WithInstall(&Install{Java: "/nonexistent/java"})) })
	t.Run("shared", func(t *testing.T) { SharedZooKeeper(t) })
	EachBackend(t, func(t *testing.T, b Backend) { t.Log("ran on", b.Name) })
}

// With ZKIT_REFERENCE_ONLY=1 every way to real ZooKeeper skips (a given
// install too), and EachBackend still runs on the reference server; with
// ZKIT_REQUIRE_ZOOKEEPER=1 as well, they fail instead.
func TestReferenceOnly(t *testing.T) {
	run := func(require string) (string, error) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReferenceOnlyHelper$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "ZKTEST_REFERENCE_ONLY_HELPER=1", ReferenceOnlyEnv+"=1", RequireZooKeeperEnv+"="+require)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("")
	if err != nil {
		t.Fatalf("%s=1: %v, output:\n%s", ReferenceOnlyEnv, err, out)
	}
	for _, sub := range []string{"install", "given-install", "shared", "zookeeper"} {
		if !strings.Contains(out, "--- SKIP: TestReferenceOnlyHelper/"+sub+" ") {
			t.Errorf("%s=1: subtest %s not skipped, output:\n%s", ReferenceOnlyEnv, sub, out)
		}
	}
	if !strings.Contains(out, "--- PASS: TestReferenceOnlyHelper/reference ") || !strings.Contains(out, "ran on reference") {
		t.Errorf("%s=1: the reference subtest did not run, output:\n%s", ReferenceOnlyEnv, out)
	}
	if !strings.Contains(out, ReferenceOnlyEnv) {
		t.Errorf("the skip message does not name %s, output:\n%s", ReferenceOnlyEnv, out)
	}
	out, err = run("1")
	if err == nil || !strings.Contains(out, "--- FAIL: TestReferenceOnlyHelper/install ") || !strings.Contains(out, "--- FAIL: TestReferenceOnlyHelper/given-install ") {
		t.Errorf("with %s=1 too: err %v, output:\n%s", RequireZooKeeperEnv, err, out)
	}
}
