#!/usr/bin/env bash
# The benchmark comparison of docs/benchmarks.md, in one sitting against one
# server.
#
#   scripts/bench.sh [ANCHORS_DIR]     # default bench/anchors; ~15 min
#   DUR=3 scripts/bench.sh             # quick look
#
# Starts a standalone ZooKeeper 3.8 on 127.0.0.1:2381 with the anchors'
# start-zk.sh, warms it, runs the anchors' Curator, kazoo and go-zookeeper
# programs against it, then `zkit bench --baseline` against the same server
# with the Curator and kazoo result lines passed to --compare, so that every
# ratio and the plot come from one server in one sitting (the anchors'
# go-zookeeper program cross-checks zkit's own go-zookeeper baselines), and
# writes the table (scripts/bench-table.py). Stops the server by
# the PIDs start-zk.sh recorded.
#
# Env: DUR (seconds per point, 10), ROUNDS (W3 rounds, 300),
#   PASSES (1): with more, every program runs that many times in turn
#   (results in OUT/pass1, OUT/pass2, ...) and the table takes the median
#   of each cell: a single point moves by 10-20% between passes. Each pass
#   starts one program later (Curator, kazoo, go-zookeeper, zkit; then
#   kazoo, go-zookeeper, zkit, Curator; ...), so that no program always
#   meets the server at the same point of a pass (right after the warm-up,
#   or after another program's heaviest points),
#   OUT (result files, /tmp/zkit-bench), PLOT (docs/bench.png, from the
#   last pass in which zkit ran after Curator and kazoo).
set -euo pipefail
cd "$(dirname "$0")/.."
ANCHORS=$(cd "${1:-bench/anchors}" && pwd)
DUR=${DUR:-10}
ROUNDS=${ROUNDS:-300}
PASSES=${PASSES:-1}
OUT=${OUT:-/tmp/zkit-bench}
PLOT=${PLOT:-docs/bench.png}
BUILD=/tmp/zkbench-build # where the anchors' run-all.sh builds
export ZKBENCH_DIR=${ZKBENCH_DIR:-/tmp/zkbench}

J=/usr/share/java
CURATOR_CP=$(ls $J/{curator-framework,curator-client,curator-recipes,guava,zookeeper,zookeeper-jute,slf4j-api,slf4j-nop,netty-handler,netty-common,netty-buffer,netty-transport,netty-codec,netty-resolver,netty-transport-native-epoll,netty-transport-native-unix-common}.jar | tr '\n' ':')

mkdir -p "$OUT"
rm -rf "$OUT"/pass* # a table is made from this sitting's passes only
BUILD_DIR=$BUILD "$ANCHORS/run-all.sh" build
go build -C cmd/zkit -o "$OUT/zkit" .

ZK=$("$ANCHORS/start-zk.sh" standalone)
trap '"$ANCHORS/stop-zk.sh"' EXIT
PIDS=$(paste -sd, "$ZKBENCH_DIR/pids")

{
  echo "# $(date -Is); $(nproc) cores, $(grep MemTotal /proc/meminfo | tr -s ' '), kernel $(uname -r)"
  echo "# $(java -version 2>&1 | head -1); $(go version); $(/usr/bin/python3 --version); server $ZK"
} | tee "$OUT/env.txt" >&2

# Warm the server's JIT before the first measured point, as run-all.sh does.
"$BUILD/bench_gozk" -zk "$ZK" -workloads W4,W1 -clients 8 -w4clients 8 -dur 5s -warmup 0 >/dev/null

run() { # run PROGRAM P: one program's points of a pass, into P
  case $1 in
  curator)
    java -Xms1g -Xmx1g -cp "$BUILD/curator:$CURATOR_CP" BenchCurator \
      --zk "$ZK" --dur "$DUR" --rounds "$ROUNDS" --pids "$PIDS" --workloads W1,W1S,W2,W3,W4,W5 >"$2/curator.txt" 2>&1 ;;
  kazoo)
    /usr/bin/python3 "$ANCHORS/bench_kazoo.py" --zk "$ZK" --dur "$DUR" --rounds "$ROUNDS" --pids "$PIDS" >"$2/kazoo.txt" 2>&1 ;;
  gozk)
    "$BUILD/bench_gozk" -zk "$ZK" -dur "${DUR}s" -pids "$PIDS" -workloads W1,W1S,W2,W4,W5 >"$2/gozk.txt" 2>&1 ;;
  zkit)
    # The anchors' lines for --compare and the plot, when they ran before.
    local compare=() f
    for f in curator kazoo; do [[ -f $2/$f.txt ]] && compare+=("$2/$f.txt"); done
    local extra=()
    if [[ ${#compare[@]} -eq 2 ]]; then extra=(--compare "$(IFS=,; echo "${compare[*]}")" --plot "$PLOT"); fi
    "$OUT/zkit" bench --servers "$ZK" --pids "$PIDS" --dur "${DUR}s" --rounds "$ROUNDS" --baseline \
      "${extra[@]}" | tee "$2/zkit.txt" ;;
  esac
}

programs=(curator kazoo gozk zkit)
for pass in $(seq 1 "$PASSES"); do
  P=$OUT
  if [[ $PASSES -gt 1 ]]; then P=$OUT/pass$pass; mkdir -p "$P"; fi
  for k in 0 1 2 3; do
    prog=${programs[$(( (pass - 1 + k) % 4 ))]}
    echo "# pass $pass of $PASSES: $prog ($(date +%T))" >&2
    run "$prog" "$P"
  done
  [[ $P == "$OUT" ]] || cp "$OUT/env.txt" "$P/env.txt"
done
/usr/bin/python3 scripts/bench-table.py "$OUT" >"$OUT/table.md"
echo "# done ($(date +%T)); results in $OUT, the table in $OUT/table.md, plot in $PLOT" >&2
