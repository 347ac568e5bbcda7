#!/usr/bin/python3
"""The benchmark table of docs/benchmarks.md from one sitting of scripts/bench.sh.

usage: scripts/bench-table.py OUT_DIR > table.md

OUT_DIR holds the sitting's zkit.txt, curator.txt, kazoo.txt and gozk.txt (the
anchors' result format), or, for a sitting of several passes, one directory
per pass (pass1, pass2, ...) holding them; every cell is then the median of
the passes (ops/s, p50, p99 and requests each on their own), and a ratio is
the ratio of the medians. go-zookeeper's columns come from zkit bench's
in-run baselines (zkit.txt); the anchors' own go-zookeeper run (gozk.txt) only
fills points zkit bench has no baseline for. Cells: ops/s (p50 / p99 ms); the
last column is the requests the server received per operation (mntr's
packets_received), zkit / go-zookeeper / Curator / kazoo. A run that stranded
members (a note with HUNG_CLIENTS) has no rate: its cell says so, and it gets
no ratio; with several passes the cell is the median of the others and says
in how many passes the run hung.
"""
import glob
import re
import statistics
import sys


def read(d):
    """One pass: {key: (ops/s, p50, p99)}, {key: rx}, {key: hung clients}, {key: ops}."""
    res, rx, hung, ops = {}, {}, {}, {}
    for f in ['zkit', 'curator', 'kazoo', 'gozk']:
        for line in open(f'{d}/{f}.txt'):
            p = line.split()
            if not p: continue
            if p[0] == '#' and len(p) > 2 and p[1] == 'stats':
                m = re.search(r'rx_per_op=([\d.]+)', line)
                if m: rx[(p[2], p[3], p[4])] = float(m.group(1))
                continue
            if p[0] == '#' and len(p) > 5 and p[1] == 'note':
                m = re.match(r'HUNG_CLIENTS=(\d+)', p[5])
                if m and int(m.group(1)) > 0: hung[(p[2], p[3], p[4])] = int(m.group(1))
                continue
            if line.startswith('#'): continue
            if len(p) >= 8:
                if f != 'zkit' and p[0].startswith('gozk') and (p[0], p[1], p[2]) in res:
                    continue  # gozk columns from zkit's in-run baseline
                res[(p[0], p[1], p[2])] = (float(p[5]), float(p[6]), float(p[7]))
                ops[(p[0], p[1], p[2])] = int(p[3])
    return res, rx, hung, ops


d = sys.argv[1]
passes = [read(x) for x in (sorted(glob.glob(f'{d}/pass*')) or [d])]
res, rx, hung, ops = {}, {}, {}, {}
for k in set().union(*(p[0] for p in passes)):
    ok = [p[0][k] for p in passes if k in p[0] and k not in p[2]]
    if ok:
        res[k] = tuple(statistics.median(v[i] for v in ok) for i in range(3))
    hung_in = [p for p in passes if k in p[2]]
    if hung_in:
        hung[k] = (len(hung_in), hung_in[0][2][k], hung_in[0][3][k])
for k in set().union(*(p[1] for p in passes)):
    rx[k] = statistics.median(p[1][k] for p in passes if k in p[1])
rows = [('W1 lock', 'W1_lock', '1', 'zkit.Lock', 'gozk.Lock', 'curator.InterProcessMutex', 'kazoo.Lock'),
        ('W1 lock', 'W1_lock', '8', 'zkit.Lock', 'gozk.Lock', 'curator.InterProcessMutex', 'kazoo.Lock'),
        ('W1 lock', 'W1_lock', '32', 'zkit.Lock', 'gozk.Lock', 'curator.InterProcessMutex', 'kazoo.Lock'),
        ('W1S lock, goroutines over 4 sessions', 'W1_lock_shared', '32', 'zkit.Lock', 'gozk.Lock', 'curator.InterProcessMutex', None),
        ('W1 rwlock (writers)', 'W1_lock', '8', 'zkit.RWLock', 'gozk.Lock', 'curator.InterProcessMutex', 'kazoo.Lock'),
        ('W1 rwlock (writers)', 'W1_lock', '32', 'zkit.RWLock', 'gozk.Lock', 'curator.InterProcessMutex', 'kazoo.Lock'),
        ('W2 counter', 'W2_counter', '1', 'zkit.Counter', 'gozk.CASCounter', 'curator.SharedCount', 'kazoo.Counter(default_retry)'),
        ('W2 counter', 'W2_counter', '8', 'zkit.Counter', 'gozk.CASCounter', 'curator.SharedCount', 'kazoo.Counter(default_retry)'),
        ('W2 counter', 'W2_counter', '32', 'zkit.Counter', 'gozk.CASCounter', 'curator.SharedCount', 'kazoo.Counter(default_retry)'),
        ('W3 double barrier', 'W3_dbarrier', '8', 'zkit.DoubleBarrier', None, 'curator.DistributedDoubleBarrier', 'kazoo.DoubleBarrier'),
        ('W3, every round on one path', 'W3_dbarrier', '8', 'zkit.DoubleBarrier.reuse', None, 'curator.DistributedDoubleBarrier', None),
        ('W4 create+delete', 'W4_createdelete', '1', 'zkit.raw', 'gozk.raw', 'curator.raw', 'kazoo.raw'),
        ('W4 create+delete', 'W4_createdelete', '8', 'zkit.raw', 'gozk.raw', 'curator.raw', 'kazoo.raw'),
        ('W5 leader failover', 'W5_failover', '8', 'zkit.Election', 'gozk.Lock', 'curator.LeaderLatch', 'kazoo.Election')]
def fmt(v):
    return f'{v:.1f}' if v < 100 else f'{v:.0f}'
def cell(k):
    if k in hung and k not in res:
        n, stuck, rounds = hung[k]
        return f'hung ({stuck} of {k[2]} members stuck after {rounds} rounds)'
    if k not in res: return '–'
    o, p50, p99 = res[k]
    c = f'{o:.0f} ({fmt(p50)} / {fmt(p99)})'
    if k in hung: c += f', hung in {hung[k][0]} of {len(passes)} passes'
    return c
def req(k):
    return f'{rx[k]:.1f}' if k in rx else '–'
print('| workload | clients | zkit | go-zookeeper | Curator | kazoo | zkit ÷ go-zookeeper | zkit ÷ Curator | requests per op (zkit / go-zookeeper / Curator / kazoo) |')
print('|---|---|---|---|---|---|---|---|---|')
for name, w, n, z, g, c, k in rows:
    keys = [(i, w, n) if i else None for i in (z, g, c, k)]
    zc = res.get(keys[0])
    def ratio(key):
        if not key or key not in res or not zc: return '–'
        return f'{zc[0]/res[key][0]:.2f}×'
    cells = [cell(x) if x else '–' for x in keys]
    reqs = ' / '.join(req(x) if x else '–' for x in keys)
    print(f'| {name} | {n} | ' + ' | '.join(cells) + f' | {ratio(keys[1])} | {ratio(keys[2])} | {reqs} |')
