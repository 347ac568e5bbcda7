#!/usr/bin/env bash
# The whole zkit test suite, with real Apache ZooKeeper required.
#
# On a fresh Debian machine, run as root: it installs what the tests need
# (ZooKeeper 3.8, Curator's recipes and discovery and kazoo for the interop
# tests) when missing, then runs gofmt, go vet and go test -race over both
# modules.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
[ -d /usr/share/zookeeper ] || need+=(zookeeper)
[ -f /usr/share/java/curator-recipes.jar ] || need+=(libcurator-recipes-java)
[ -f /usr/share/java/curator-x-discovery.jar ] || need+=(libcurator-discovery-java)
/usr/bin/python3 -c 'import kazoo' 2>/dev/null || need+=(python3-kazoo)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "test.sh: missing Debian packages: ${need[*]}; run as root or install them" >&2
    exit 1
  fi
  echo "test.sh: installing ${need[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

echo "== gofmt"
bad=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$bad" ]; then echo "gofmt would change:"; echo "$bad"; exit 1; fi

# The repository holds several modules: the library at the root, and
# beside it the ones that carry their own dependencies (the zkit command,
# the chaos suite, the container backend, the Prometheus example).
modules=(. cmd/zkit chaos zktest/container examples/prometheus)

echo "== go vet"
for m in "${modules[@]}"; do (cd "$m" && go vet ./...); done

# The suites mostly wait (on servers, sessions and timeouts), not
# compute: run one after the other they left two cores three quarters
# idle. So they run side by side as jobs, each printing its output whole
# when it ends, and the run fails if any failed.
jobdir=$(mktemp -d)
trap 'rm -rf "$jobdir"' EXIT
names=() pids=()
job() { # job NAME DIR COMMAND...: run COMMAND in DIR in the background
  local name=$1 dir=$2
  shift 2
  names+=("$name")
  (cd "$dir" && "$@") >"$jobdir/${#names[@]}.log" 2>&1 &
  pids+=($!)
}
wait_jobs() { # print each job's output in order; fail if any failed
  local failed=() i
  for i in "${!names[@]}"; do
    if ! wait "${pids[$i]}"; then failed+=("${names[$i]}"); fi
    echo "== ${names[$i]}"
    cat "$jobdir/$((i + 1)).log"
  done
  names=() pids=()
  if [ ${#failed[@]} -gt 0 ]; then echo "FAILED: ${failed[*]}"; return 1; fi
}

# Build every test binary first, with both toolchains, before any test
# runs: on a fresh machine (an empty build cache, the Go 1.27 toolchain
# still to fetch) compiling takes both cores for minutes, and tests that
# wait on sessions and timeouts, run beside it, see a machine several
# times slower than the one they were written for. -exec /bin/true links
# each binary and runs none.
echo "== build"
build() { go test -count=1 -run '^$' -exec /bin/true "$@" ./... >/dev/null; }
for m in . cmd/zkit chaos; do (cd "$m" && build -race); done
for m in zktest/container examples/prometheus; do (cd "$m" && build); done
(export GOTOOLCHAIN=go1.27.3 && go version && build)

export ZKIT_REQUIRE_ZOOKEEPER=1
job "go test -race: the library (real ZooKeeper required)" . go test -race -count=1 -p 4 -timeout 30m ./...
job "go test -race: cmd/zkit" cmd/zkit go test -race -count=1 -timeout 30m ./...
# These two start no server: the container backend needs a Docker engine
# (its tests skip without one) and the example only registers metrics.
job "go test: zktest/container" zktest/container go test -count=1 ./...
job "go test: examples/prometheus" examples/prometheus go test -count=1 ./...

# The second wave waits for the first: the chaos suite's three JVMs under
# load, beside the library's and the command's suites (packages four at a
# time, each test with -race), left tests that give a session two seconds
# without a CPU for more than one of them on a two-core machine: pings
# went unanswered and sessions ended. The run takes about as long (every
# core is busy throughout either way), but no suite starves another.
status=0
wait_jobs || status=1
job "go test -race: chaos" chaos go test -race -count=1 -timeout 30m ./...

# The fuzz targets ran their seed corpora above; each also fuzzes for a
# few seconds here (longer runs by hand: -fuzztime 10m). A failure it
# finds is written to the package's testdata/fuzz, where it becomes a
# seed.
fuzz() {
  local target
  for target in FuzzFrames FuzzRequests; do
    go test -run '^$' -fuzz "^${target}\$" -fuzztime 5s -parallel 1 ./zktest/internal/refserver
  done
  go test -run '^$' -fuzz '^FuzzReplies$' -fuzztime 5s -parallel 1 ./internal/jute
  go test -run '^$' -fuzz '^FuzzEvents$' -fuzztime 5s -parallel 1 ./cache
}
job "fuzz (5 s per target)" . fuzz

# Go supports its two newest releases; go.mod's go directive names the
# older (1.26), and everything above runs on the installed Go (1.26 in CI).
# Under the newer one (the go command fetches it through the module
# proxy, about 76 MB, and caches it): vet everything, and run the
# library's tests on the bundled reference server alone. The command
# module (with the benchmarks) and the chaos suite (real ensembles only)
# are left to the jobs above, and so are the race detector and real
# ZooKeeper, so that this job costs a few minutes.
go127() {
  export GOTOOLCHAIN=go1.27.3 ZKIT_REQUIRE_ZOOKEEPER= ZKIT_REFERENCE_ONLY=1
  go version
  local m
  for m in "${modules[@]}"; do (cd "$m" && go vet ./...); done
  go test -count=1 -timeout 15m ./...
}
job "Go 1.27: go vet, and the library's tests on the reference server" . go127

wait_jobs || status=1
exit $status
