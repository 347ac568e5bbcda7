#!/usr/bin/env bash
# zkit against one of go-zookeeper's in-run baselines, in many short pairs.
#
#   scripts/bench-pairs.sh [WORKLOAD] [CLIENTS] [PAIRS] [DUR]   # default W4 8 24 2s
#
# A 5 s point moves by 10-20% from one run to the next, so a table cell of
# two close programs says little about which is ahead. Here every pair is one
# `zkit bench --baseline` run of a single point: zkit's implementation, then
# go-zookeeper's, back to back against the same server. The script prints
# each pair's operations/s and ratio, then the median and mean ratio and a
# bootstrap 95% interval of the mean: an interval that holds 1.0 says the
# two are level. Starts a standalone ZooKeeper 3.8 on 127.0.0.1:2381 with
# bench/anchors/start-zk.sh and stops it by the PIDs that script recorded.
# Run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-W4}
N=${2:-8}
PAIRS=${3:-24}
DUR=${4:-2s}
OUT=${OUT:-/tmp/zkit-pairs}
export ZKBENCH_DIR=${ZKBENCH_DIR:-/tmp/zkbench}

mkdir -p "$OUT"
go build -C cmd/zkit -o "$OUT/zkit" .
ZK=$(bench/anchors/start-zk.sh standalone)
trap 'bench/anchors/stop-zk.sh' EXIT

# Warm the server's JIT, as bench.sh does, before the first pair.
"$OUT/zkit" bench --servers "$ZK" --workloads "$W" --clients "$N" --dur 5s >/dev/null 2>&1

echo "# $(date -Is) $W with $N clients, $PAIRS pairs of $DUR: zkit, go-zookeeper (ops/s), ratio"
for i in $(seq "$PAIRS"); do
  "$OUT/zkit" bench --servers "$ZK" --warmup 0 --workloads "$W" --clients "$N" --baseline --dur "$DUR" 2>/dev/null |
    awk '!/^#/ { r[++n] = $6 } END { printf "%s %s %.3f\n", r[1], r[2], r[1] / r[2] }'
done | tee "$OUT/pairs.txt"

/usr/bin/python3 - "$OUT/pairs.txt" <<'EOF'
import random, statistics, sys
r = [float(l.split()[2]) for l in open(sys.argv[1]) if l.strip()]
random.seed(1)
means = sorted(statistics.mean(random.choices(r, k=len(r))) for _ in range(5000))
print(f"# median {statistics.median(r):.3f}, mean {statistics.mean(r):.3f}, "
      f"95% interval of the mean {means[125]:.3f}-{means[4874]:.3f} ({len(r)} pairs)")
EOF
