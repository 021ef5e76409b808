#!/usr/bin/env python3
"""make_curves.py: derive the catalog's collective efficiency curves from
published nccl-tests all_reduce_perf runs (nccl_allreduce_busbw.csv, a copy
of the project's reference table; row ids below are that table's row_id).

A build-time data tool, not product code: its output is the "curves" array of
data/catalog.json, so the numbers there can be reproduced and re-derived when
the reference table grows.

    python3 data/reference/make_curves.py            # print the curves array
    python3 data/reference/make_curves.py --check data/catalog.json
                                                     # exit 1 if the file differs

What a curve means. The planner (planner/plan_hw.c) times a collective phase as

    t(S) = latency + traffic(S) / (bandwidth * eff(S))

so a curve holds, at x = log2(S bytes), the eff that makes this reproduce the
measured time of the series it comes from:

    eff(S) = traffic(S) / ((t(S) - latency) * bandwidth)

with each curve expressed against the bandwidth the planner multiplies it by:

  intra (one node, NVSwitch): bandwidth = the node's all-reduce bus bandwidth
      at 1 GiB (intra_busbw_bps, the figure nccl-tests users quote), traffic =
      2(n-1)/n * S (nccl-tests PERFORMANCE.md). eff is capped at 1, so larger
      messages run at the 1 GiB figure.
  net (across nodes): bandwidth = the node's network line rate (net_bps),
      traffic = what plan_hw.c's hierarchical all-reduce sends per node:
      2(N-1)/N * S / r per GPU at net_bps / gpus_per_node, r = ranks per node.
      So eff is the fraction of line rate the measured run reached.

Cleaning, stated so a reviewer can disagree:
  - t(S) = min(out-of-place, in-place time): both time the same collective on
    the same buffers; the gap between them is noise (row 71: 22.25 vs 13.34 us).
  - t(S) is made non-decreasing in S from the large end (a larger message never
    takes less time; a slower small-size reading, e.g. row 43, is noise).
  - latency = median t over sizes <= 1 KiB (where the byte term is nil).
  - points with t < 1.2 * latency are dropped: there t - latency is mostly
    noise; the curve is flat below its first point, where the byte term is
    small against the latency anyway.
"""
import csv
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CSV = os.path.join(HERE, "nccl_allreduce_busbw.csv")

KIB = 1024
GIB = 1 << 30
LAT_MAX_BYTES = 1 * KIB      # sizes whose time is taken as pure latency
KEEP_T_OVER_LAT = 1.2        # keep points whose time is at least this x latency
DIGITS = 4                   # eff rounded to this many significant digits

# Line rates, bytes/s, one direction per node (hardware.md).
P4DE_NET_BPS = 400e9 / 8     # 400 Gbps EFA (4 x 100 Gb/s)
P5_NET_BPS = 3200e9 / 8      # 3200 Gbps EFAv2 (32 x 100 Gb/s)

SERIES = [
    dict(name="efa-p4de-2node", rows=(1, 29), kind="net", nodes=2, gpn=8,
         net_bps=P4DE_NET_BPS,
         source="nccl-tests csv rows 1-29 (aws-samples awsome-distributed-training "
                "nccl-tests README, 2 x p4de.24xlarge, EFA 400 Gbps); make_curves.py"),
    dict(name="efa-p5-2node", rows=(30, 61), kind="net", nodes=2, gpn=8,
         net_bps=P5_NET_BPS,
         source="nccl-tests csv rows 30-61 (aws-samples awsome-distributed-training "
                "nccl-tests README, 2 x p5.48xlarge, EFA 3200 Gbps); make_curves.py"),
    dict(name="nvswitch-h100", rows=(69, 100), kind="intra", ranks=8,
         source="nccl-tests csv rows 69-100 (aws-samples aws-batch README, one "
                "p5.48xlarge: busbw/algbw = 1.75 so 8 ranks); make_curves.py"),
]

# Curves with no size sweep of their own: a measured shape reused, said so.
DERIVED = [
    dict(name="generic-nvlink", like="nvswitch-h100",
         source="shape of nvswitch-h100 (rows 69-100): no single-node size sweep for "
                "A100/V100/PCIe nodes in the reference data; recalibrate when one exists"),
    dict(name="generic-ib", like="efa-p5-2node",
         source="shape of efa-p5-2node (rows 30-61): no InfiniBand/Omni-Path size sweep "
                "in the reference data; likely pessimistic for IB; recalibrate"),
]


def read_rows(path):
    with open(path, newline="") as f:
        return {int(r["row_id"]): r for r in csv.DictReader(f)}


def num(s):
    s = (s or "").strip()
    return float(s) if s else None


def series_points(rows, lo, hi):
    """(bytes, time_s) for rows lo..hi, cleaned as the module doc says."""
    pts = []
    for i in range(lo, hi + 1):
        r = rows[i]
        times = [t for t in (num(r["time_us_oop"]), num(r["time_us_ip"])) if t]
        pts.append([int(r["size_bytes"]), min(times) * 1e-6])
    pts.sort()
    for k in range(len(pts) - 2, -1, -1):
        pts[k][1] = min(pts[k][1], pts[k + 1][1])
    return pts


def latency_s(pts):
    return statistics.median(t for s, t in pts if s <= LAT_MAX_BYTES)


def traffic_rate(sr, s, t, lat):
    """Bytes/s the planner's formula would need at size s to take time t."""
    if sr["kind"] == "intra":
        n = sr["ranks"]
        return 2.0 * (n - 1) / n * s / (t - lat)
    nodes, gpn = sr["nodes"], sr["gpn"]
    per_gpu = 2.0 * (nodes - 1) / nodes * s / gpn
    return per_gpu / (t - lat) * gpn  # per node


def make_series(rows, sr):
    pts = series_points(rows, *sr["rows"])
    lat = latency_s(pts)
    if sr["kind"] == "intra":
        ref = [traffic_rate(sr, s, t, lat) for s, t in pts if s == GIB][0]
    else:
        ref = sr["net_bps"]
    xs, ys = [], []
    for s, t in pts:
        if t < KEEP_T_OVER_LAT * lat:
            continue
        eff = min(1.0, traffic_rate(sr, s, t, lat) / ref)
        xs.append(s.bit_length() - 1)
        ys.append(float(f"{eff:.{DIGITS}g}"))
    first, last = sr["rows"]
    note = (f"latency {lat * 1e6:.1f} us = median time of rows {first}-{last} at <= 1 KiB; "
            f"eff = traffic / ((t - latency) x {'busbw at 1 GiB' if sr['kind'] == 'intra' else 'line rate'}"
            f" {ref / 1e9:.2f} GB/s), t = min(oop, ip) made non-decreasing; "
            f"points with t < {KEEP_T_OVER_LAT} x latency dropped")
    return dict(name=sr["name"], source=sr["source"], _note=note,
                log2_bytes=xs, eff=ys), lat


def make_all(path):
    rows = read_rows(path)
    curves, lats = [], {}
    for sr in SERIES:
        c, lat = make_series(rows, sr)
        curves.append(c)
        lats[sr["name"]] = lat
    by_name = {c["name"]: c for c in curves}
    for d in DERIVED:
        base = by_name[d["like"]]
        curves.append(dict(name=d["name"], source=d["source"],
                           _note=f"copy of {d['like']}: " + base["_note"],
                           log2_bytes=list(base["log2_bytes"]), eff=list(base["eff"])))
    return curves, lats


def dump(curves):
    """The array as it sits in catalog.json: one curve per block, arrays on one line."""
    out = []
    for c in curves:
        lines = [f'      "{k}": {json.dumps(c[k])}' for k in ("name", "source", "_note",
                                                            "log2_bytes", "eff")]
        out.append("    {\n" + ",\n".join(lines) + "\n    }")
    return "[\n" + ",\n".join(out) + "\n  ]"


def main(argv):
    curves, lats = make_all(CSV)
    if len(argv) == 3 and argv[1] == "--check":
        with open(argv[2]) as f:
            have = json.load(f)["curves"]
        ok = {c["name"]: c for c in have}
        bad = [c["name"] for c in curves
               if c["name"] not in ok or any(ok[c["name"]][k] != c[k]
                                             for k in ("log2_bytes", "eff"))]
        for n in bad:
            print(f"{argv[2]}: curve {n} differs from make_curves.py output", file=sys.stderr)
        return 1 if bad else 0
    if len(argv) != 1:
        print("usage: make_curves.py [--check catalog.json]", file=sys.stderr)
        return 2
    for name, lat in lats.items():
        print(f"# {name}: latency {lat * 1e6:.2f} us", file=sys.stderr)
    print(dump(curves))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
