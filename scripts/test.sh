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

echo "== go test -race (real ZooKeeper required)"
export ZKIT_REQUIRE_ZOOKEEPER=1
for m in . cmd/zkit chaos; do
  (cd "$m" && go test -race -count=1 -timeout 30m ./...)
done
# These two start no server: the container backend needs a Docker engine
# (its tests skip without one) and the example only registers metrics.
for m in zktest/container examples/prometheus; do
  (cd "$m" && go test -count=1 ./...)
done

# The fuzz targets ran their seed corpora above; each also fuzzes for a
# few seconds here (longer runs by hand: -fuzztime 10m). A failure it
# finds is written to the package's testdata/fuzz, where it becomes a
# seed.
echo "== fuzz (5 s per target)"
for target in FuzzFrames FuzzRequests; do
  go test -run '^$' -fuzz "^${target}\$" -fuzztime 5s ./zktest/internal/refserver
done

# Go supports its two newest releases; go.mod's go directive names the
# older (1.26), and everything above ran on the installed Go (1.26 in CI).
# Under the newer one (the go command fetches it through the module
# proxy, about 76 MB, and caches it): vet everything, and run
# the library's tests on the bundled reference server alone. The command
# module (with the benchmarks) and the chaos suite (real ensembles only)
# are left to the run above, and so are the race detector and real
# ZooKeeper, so that this pass costs a few minutes.
echo "== Go 1.27: go vet, and the library's tests on the reference server"
export GOTOOLCHAIN=go1.27.3
go version
for m in "${modules[@]}"; do (cd "$m" && go vet ./...); done
ZKIT_REQUIRE_ZOOKEEPER= ZKIT_REFERENCE_ONLY=1 go test -count=1 -p 4 -timeout 15m ./...
