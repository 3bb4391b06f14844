#!/usr/bin/env python3
"""Writes tools/bench's Markdown report from one run folder.

    report.py RUN_DIR OUT.md

RUN_DIR (build/bench/run-*) holds manifest.tsv (one line per run, from
tools/bench.d/inner.sh), facts.host, facts.guest, and logs/ with every run's
output, the callgrind files and their callgrind_annotate listings. Every figure
in the report is parsed from those logs; a run whose log has no figure is shown
as failed, never estimated. Also writes RUN_DIR/results.json.
"""
import json
import os
import re
import statistics
import sys

# perftest prints MB/sec with MB = 2^20 bytes (its MsgRate x size agrees);
# rdmapipe prints Gbit/s with G = 10^9. Both become MB/s = 10^6 bytes/s.
MIB = 1048576 / 1e6

# How the plan's run IDs pair up. A case's "best" comparison takes the best
# perftest median of its list; "pairs" compare one perftest run with one rdmapipe run.
CASES = [
    {"case": "write64", "title": "64 B message rate: RDMA write",
     "metric": "rate", "best": (["pt-write", "pt-write-l32", "pt-write-l32-inl"], "rp-write_imm", 1.25)},
    {"case": "send64", "title": "64 B message rate: send",
     "metric": "rate", "best": (["pt-send", "pt-send-l32"], "rp-send", None)},
    {"case": "bw64k", "title": "64 KiB bandwidth",
     "metric": "mbs", "pairs": [("pt-write-64k", "rp-write_imm-64k", 1.0),
                                ("pt-write-64k", "rp-write-64k", 1.0),
                                ("pt-read-64k", "rp-read-64k", 1.0)]},
    {"case": "atomic", "title": "Atomics (8 B)",
     "metric": "rate", "pairs": [("pt-fetch_add", "rp-fetch_add", None),
                                 ("pt-cmp_swap", "rp-cmp_swap", None)]},
]
UNITS = {"rate": "Mmsg/s", "mbs": "MB/s"}
LAT_NOTE = "not measured: rdmapipe has no ping-pong mode yet"
CG_TARGET = 0.5


def read_facts(path):
    facts = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    facts[k] = v
    except OSError:
        pass
    return facts


def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def parse_perftest(text):
    """Figures from a perftest client log: bw tests give mbs/rate, lat tests typical/p99."""
    out = {}
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if "MsgRate[Mpps]" in line or "t_typical" in line:
            for data in lines[i + 1:i + 4]:
                f = data.split()
                if len(f) >= 5 and f[0].isdigit() and all(num(x) is not None for x in f):
                    if "MsgRate[Mpps]" in line:
                        out["iters"] = int(f[1])
                        out["mbs"] = num(f[3]) * MIB
                        out["rate"] = num(f[4])
                    elif len(f) >= 9:
                        out.update(iters=int(f[1]), t_min=num(f[2]), t_max=num(f[3]),
                                   typical=num(f[4]), avg=num(f[5]), p99=num(f[7]), p999=num(f[8]))
                    break
    return out


def parse_rdmapipe(text):
    out = {}
    m = re.search(r"^\s*message rate:\s*([\d.]+)\s*Mmsg/s", text, re.M)
    if m:
        out["rate"] = float(m.group(1))
    m = re.search(r"^\s*throughput:\s*([\d.]+)\s*Gbit/s", text, re.M)
    if m:
        out["mbs"] = float(m.group(1)) * 1000 / 8
    m = re.search(r"^\s*send posts:\s*(\d+)\s*\(([\d.]+) WRs per", text, re.M)
    if m:
        out["posts"], out["wrs_per_post"] = int(m.group(1)), float(m.group(2))
    m = re.search(r"^\s*messages verified:\s*(\d+)", text, re.M)
    if m:
        out["verified"] = int(m.group(1))
    m = re.search(r"^\s*requester CPU:.*\((\d+)%", text, re.M)
    if m:
        out["requester_busy"] = int(m.group(1))
    m = re.search(r"^\s*responder CPU:.*\((\d+)%", text, re.M)
    if m:
        out["responder_busy"] = int(m.group(1))
    m = re.search(r"^\s*elapsed:\s*([\d.]+)\s*s", text, re.M)
    if m:
        out["elapsed"] = float(m.group(1))
    m = re.search(r"^result:\s*(\S+)", text, re.M)
    out["result"] = m.group(1) if m else None
    return out


def first_error_line(text):
    for line in text.splitlines():
        l = line.strip()
        if not l or l.startswith("=="):
            continue
        if re.search(r"(error|fail|couldn|unable|cannot|timed out|refused|abort)", l, re.I):
            return l[:160]
    return None


def load_runs(d):
    runs = []
    with open(os.path.join(d, "manifest.tsv"), errors="replace") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) < 10:
                continue
            r = dict(round=p[0], case=p[1], id=p[2], tool=p[3], count=int(p[4]) if p[4].isdigit() else None,
                     rc=p[5], wall=num(p[6]), cpu=[int(x) for x in p[7].split()] if p[7].strip() else [],
                     log=p[8], cmd=p[9], tmo=p[10] if len(p) > 10 else "")
            text = read_text(r["log"]) if r["log"] != "-" else ""
            if r["case"] == "callgrind":
                r["ok"] = r["rc"] == "0"
            elif r["tool"] == "perftest":
                r["fig"] = parse_perftest(text)
                r["ok"] = r["rc"] == "0" and bool(r["fig"])
            else:
                r["fig"] = parse_rdmapipe(text)
                r["ok"] = r["rc"] == "0" and r["fig"].get("result") == "PASS" and "rate" in r["fig"]
            if not r["ok"]:
                if r["rc"] == "skipped":
                    r["why"] = "skipped (time budget used up)"
                elif r["rc"] == "novalgrind":
                    r["why"] = "valgrind not installed"
                else:
                    after = f" after {r['tmo']} s" if r["tmo"] else ""
                    why = {"124": "timed out" + after, "137": "killed after its timeout" + after}.get(
                        r["rc"], "exit status " + r["rc"])
                    err = first_error_line(text)
                    if r["tool"] == "perftest" and r["case"] != "callgrind" and not err:
                        err = first_error_line(read_text(r["log"][:-4] + ".srv")) if r["log"].endswith(".cli") else None
                    r["why"] = why + (": " + err if err else "")
            runs.append(r)
    return runs


def label(r):
    """The run's distinguishing options, without the bench's common ones."""
    cmd = r["cmd"].split()
    if r["tool"] == "perftest":
        keep, skip_next = [], False
        for i, a in enumerate(cmd):
            if skip_next:
                skip_next = False
                continue
            if a in ("-n", "-d", "-x", "-p"):
                skip_next = True
                continue
            if a in ("-F", "127.0.0.1"):
                continue
            keep.append(a)
        return " ".join(keep)
    if "--" in cmd:
        app = cmd[cmd.index("--") + 1:]
        keep, skip_next = [], False
        for a in app:
            if skip_next:
                skip_next = False
                continue
            if a in ("-d", "-n"):
                skip_next = True
                continue
            if a == "-q":
                continue
            keep.append(a)
        return "rdmapipe " + " ".join(keep)
    return r["cmd"]


def fmt(v, metric):
    if v is None:
        return "failed"
    if metric == "rate":
        return f"{v:.4f}"
    if metric in ("mbs",):
        return f"{v:.1f}"
    if metric == "us":
        return f"{v:.2f}"
    return f"{v:.3g}"


def median(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def cpu_split(r):
    """Shares of guest CPU time during a run: user, kernel (system+irq+softirq), idle."""
    c = r.get("cpu") or []
    if len(c) < 8 or sum(c) <= 0:
        return None
    tot = sum(c)
    return {"user": (c[0] + c[1]) / tot, "kernel": (c[2] + c[5] + c[6]) / tot,
            "idle": (c[3] + c[4]) / tot, "steal": c[7] / tot}


def main():
    d, out = sys.argv[1], sys.argv[2]
    host = read_facts(os.path.join(d, "facts.host"))
    guest = read_facts(os.path.join(d, "facts.guest"))
    for k, v in host.items():  # package versions: the guest runs the host's /usr
        if k.startswith("pkg_"):
            guest.setdefault(k, v)
    runs = load_runs(d)
    rounds_seen = sorted({r["round"] for r in runs if r["round"].isdigit()}, key=int)
    by_id = {}
    for r in runs:
        if r["case"] != "callgrind":
            by_id.setdefault(r["id"], []).append(r)
    labels = {i: label(rs[0]) for i, rs in by_id.items()}

    def fig(i, metric, rnd=None):
        rs = [r for r in by_id.get(i, []) if rnd is None or r["round"] == rnd]
        return [r["fig"].get(metric) if r["ok"] else None for r in rs]

    def med(i, metric):
        return median(fig(i, metric))

    def nok(i):
        rs = by_id.get(i, [])
        return sum(1 for r in rs if r["ok"]), len(rs)

    failures = [r for r in runs if not r["ok"]]
    results = {"run_dir": d, "host": host, "guest": guest, "cases": {}, "latency": {}, "callgrind": {},
               "failures": [dict(id=r["id"], round=r["round"], why=r.get("why")) for r in failures]}
    md = []
    w = md.append
    quick = host.get("quick") == "1"
    w("# Benchmarks: rdmapipe vs perftest on soft-RoCE")
    w("")
    w("Generated by `tools/bench` — do not edit by hand; rerun it instead. "
      + ("**This is a `--quick` smoke run: its counts are too small for the figures to mean much.** " if quick else "")
      + f"Raw logs of this run: `{d}/` (not committed).")
    w("")
    w("## What was measured, and how")
    w("")
    nrounds = host.get("rounds", str(len(rounds_seen)))
    w("One soft-RoCE session (`tools/softroce`: "
      + ("a qemu TCG guest" if guest.get("softroce_mode") == "vm" else f"mode {guest.get('softroce_mode', '?')}")
      + f") ran every case {nrounds} time(s), round after round, each case as perftest first and rdmapipe "
      "right after, so drift in the guest's speed hits both sides of a comparison alike. Everything runs on "
      f"one loopback rxe device ({guest.get('device', 'rxe0')}, GID index {guest.get('gid_index', '?')}, "
      f"MTU {guest.get('device_mtu') or '?'}): perftest as a server and a client process (each under "
      "`timeout`, the server started first and the client connecting over TCP to 127.0.0.1 with its own "
      "`-p` port), rdmapipe as one process whose requester and responder lcores share the device "
      "(`-l 0-1 --in-memory`), verifying every message. Figures are medians over the rounds; "
      "each round's figure is listed too, because rxe under TCG varies by up to 1.5x from run to run and "
      "only ratios from the same session mean anything. perftest's `BW average` is in MiB/s and is "
      "converted to MB/s (10^6 B/s) like rdmapipe's Gbit/s (x 1000 / 8); message rates are perftest's "
      "`MsgRate` (Mpps) and rdmapipe's `message rate` (Mmsg/s). A run that failed is shown as failed, "
      "with its reason below; nothing is estimated. Instruction counts come from "
      "`valgrind --tool=callgrind --fair-sched=yes` in the same guest.")
    w("")
    counts = ", ".join(f"{k[6:]} {v}" for k, v in sorted(guest.items()) if k.startswith("count_"))
    w(f"Message counts per run (`-n`): {counts or '?'} (msg64: 64 B write/send; big: 64 KiB; atomic; lat: latency "
      "iterations). perftest runs get `-n COUNT -F -d DEV -x GID -p PORT`; rdmapipe runs get "
      "`build/app/rdmapipe/rdmapipe -l 0-1 --in-memory --no-pci --log-level=lib.eal:error -- ... -d DEV -n COUNT -q`. "
      "The exact command of every run is in the run folder's `manifest.tsv`.")
    w("")
    w("Reproduce: `tools/bench` (options: `tools/bench --help`; this run: `"
      + host.get("command", "tools/bench") + "`).")
    w("")
    w("## Machine")
    w("")
    w("| | |")
    w("|---|---|")
    w(f"| date | {host.get('date_utc', '?')} |")
    w(f"| repository | {host.get('git_head', '?')}"
      + (f" plus uncommitted changes in {host.get('git_dirty')} tracked file(s)" if host.get("git_dirty", "0") not in ("0", "") else "")
      + " |")
    w(f"| host | {host.get('host_os', '?')}, kernel {host.get('host_kernel', '?')}, {host.get('host_cpus', '?')} CPUs "
      f"({host.get('host_cpu_model', '?')}) |")
    w(f"| host load average (1/5/15 min) | {host.get('load_start', '?')} at the start, {host.get('load_end', '?')} at the end |")
    if guest.get("softroce_mode") == "vm":
        w(f"| guest | {host.get('qemu', 'qemu')}, TCG (software emulation, `-accel tcg,thread=multi -cpu max`), "
          f"{guest.get('guest_cpus', '?')} vCPUs, {int(guest['guest_mem_kb']) // 1024 if guest.get('guest_mem_kb', '').isdigit() else '?'} MiB |")
    else:
        w(f"| devices | soft-RoCE in mode {guest.get('softroce_mode', '?')}, {guest.get('guest_cpus', '?')} CPUs |")
    w(f"| guest kernel | {guest.get('guest_kernel', '?')} (rdma_rxe) |")
    w(f"| rdma-core / ibverbs-providers | {guest.get('pkg_rdma-core', '?')} / {guest.get('pkg_ibverbs-providers', '?')} |")
    w(f"| perftest | {guest.get('pkg_perftest', '?')} |")
    w(f"| DPDK (librte-eal23) | {guest.get('pkg_librte-eal23', '?')} |")
    w(f"| valgrind | {guest.get('pkg_valgrind', '?')} |")
    w(f"| rdmapipe | {guest.get('rdmapipe_version', '?')} |")
    w(f"| session | {host.get('session_wall_s', '?')} s wall, rounds: {len(rounds_seen)} |")
    w("")

    # ---- the comparison tables -------------------------------------------------
    def per_round(i, metric):
        vals = []
        for rnd in rounds_seen:
            v = fig(i, metric, rnd)
            rs = [r for r in by_id.get(i, []) if r["round"] == rnd]
            vals.append("skipped" if rs and rs[0]["rc"] == "skipped" else fmt(v[0], metric) if v else "—")
        return vals

    def note_n(i):
        ok, n = nok(i)
        return "" if ok == n else f" ({ok} of {n} runs)"

    def ratio_str(a, b, target=None):
        if a is None or not b:
            return "—"
        # Near the target, two decimals could show 1.00x for a ratio that misses 1.00.
        return f"{a / b:.3f}x" if target and abs(a / b - target) < 0.005 else f"{a / b:.2f}x"

    w("## Results")
    w("")
    w("Ratio = rdmapipe median / perftest median (higher is better for rdmapipe). "
      "`met?` is judged on the medians.")
    w("")
    for c in CASES:
        metric, unit = c["metric"], UNITS[c["metric"]]
        w(f"### {c['title']} ({unit})")
        w("")
        w(f"| perftest | median | rdmapipe | median | ratio | target | met? |")
        w("|---|---|---|---|---|---|---|")
        res = []
        if "best" in c:
            pts, rp, target = c["best"]
            meds = {p: med(p, metric) for p in pts}
            ok = [p for p in pts if meds[p] is not None]
            best = max(ok, key=lambda p: meds[p]) if ok else None
            rm = med(rp, metric)
            for p in pts:
                is_best = p == best
                tgt = (f">= {target:.2f}x the best" if target else "none set") if is_best else ""
                met = ("yes" if rm is not None and rm / meds[p] >= target else "**no**") if is_best and target and rm is not None else ""
                if is_best and target and rm is None:
                    met = "**no** (rdmapipe failed)"
                w(f"| `{labels.get(p, p)}`{' (best)' if is_best else ''}{note_n(p)} | {fmt(meds[p], metric)} | "
                  f"`{labels.get(rp, rp)}`{note_n(rp)} | {fmt(rm, metric)} | {ratio_str(rm, meds[p], target if is_best else None)} | {tgt} | {met} |")
                res.append(dict(perftest=p, perftest_median=meds[p], rdmapipe=rp, rdmapipe_median=rm,
                                ratio=(rm / meds[p] if rm is not None and meds[p] else None),
                                target=target if is_best else None, best=is_best))
            if best is None:
                w(f"| every perftest variant failed | | | | | {'>= %.2fx' % target if target else ''} | {'**no**' if target else ''} |")
            ids = pts + [rp]
            pairs_for_rounds = [(best, rp)] if best else []
        else:
            ids, pairs_for_rounds = [], []
            for p, rp, target in c["pairs"]:
                pm, rm = med(p, metric), med(rp, metric)
                tgt = f">= {target:.2f}x" if target else "none set"
                met = ("yes" if pm is not None and rm is not None and rm / pm >= target else "**no**") if target else ""
                w(f"| `{labels.get(p, p)}`{note_n(p)} | {fmt(pm, metric)} | `{labels.get(rp, rp)}`{note_n(rp)} | "
                  f"{fmt(rm, metric)} | {ratio_str(rm, pm, target)} | {tgt} | {met} |")
                res.append(dict(perftest=p, perftest_median=pm, rdmapipe=rp, rdmapipe_median=rm,
                                ratio=(rm / pm if rm is not None and pm else None), target=target))
                ids += [x for x in (p, rp) if x not in ids]
                pairs_for_rounds.append((p, rp))
        results["cases"][c["case"]] = res
        w("")
        # Every round's figure: the spread is part of the result.
        w(f"Each round ({unit}):")
        w("")
        w("| run | " + " | ".join(f"round {x}" for x in rounds_seen) + " | min–max |")
        w("|---|" + "---|" * len(rounds_seen) + "---|")
        for i in ids:
            vals = [v for v in fig(i, metric) if v is not None]
            spread = f"{fmt(min(vals), metric)}–{fmt(max(vals), metric)}" if vals else "—"
            w(f"| `{labels.get(i, i)}` | " + " | ".join(per_round(i, metric)) + f" | {spread} |")
        for p, rp in pairs_for_rounds:
            cells = []
            for rnd in rounds_seen:
                a, b = fig(rp, metric, rnd), fig(p, metric, rnd)
                cells.append(ratio_str(a[0] if a else None, b[0] if b else None))
            w(f"| ratio in the same round: `{labels.get(rp, rp)}` / `{labels.get(p, p)}` | "
              + " | ".join(cells) + " | |")
        w("")

    # ---- latency -----------------------------------------------------------------
    w("### Latency, 2 B (µs)")
    w("")
    w("| test | typical (median of rounds) | p99 (median of rounds) | each round: typical / p99 | rdmapipe |")
    w("|---|---|---|---|---|")
    for i in ("pt-send_lat", "pt-write_lat"):
        if i not in by_id:
            continue
        t, p = med(i, "typical"), med(i, "p99")
        each = []
        for rnd in rounds_seen:
            a, b = fig(i, "typical", rnd), fig(i, "p99", rnd)
            rs = [r for r in by_id.get(i, []) if r["round"] == rnd]
            each.append(f"{fmt(a[0], 'us')} / {fmt(b[0], 'us')}" if a and a[0] is not None else
                        "skipped" if rs and rs[0]["rc"] == "skipped" else "failed" if a else "—")
        w(f"| `{labels.get(i, i)}`{note_n(i)} | {fmt(t, 'us')} | {fmt(p, 'us')} | {'; '.join(each)} | {LAT_NOTE} |")
        results["latency"][i] = dict(typical_median=t, p99_median=p)
    w("")
    w("perftest's *typical* is its median latency; p99 is its `99% percentile`. "
      "Both are half a round trip, as perftest reports them.")
    w("")

    # ---- callgrind -----------------------------------------------------------------
    cg = [r for r in runs if r["case"] == "callgrind"]
    cgi = {}
    if cg:
        w("## User-space instructions per message (callgrind)")
        w("")
        for r in cg:
            base = r["log"][:-4] if r["log"].endswith(".out") else r["log"]
            tot = None
            if r["ok"]:
                cgtext = read_text(base + ".callgrind")
                m = re.search(r"^(?:summary|totals):\s*(\d+)", cgtext, re.M)
                if not m:
                    m = re.search(r"Collected\s*:\s*(\d+)", read_text(r["log"]))
                tot = int(m.group(1)) if m else None
                if r["tool"] == "rdmapipe":
                    f = parse_rdmapipe(read_text(r["log"]))
                    if f.get("result") != "PASS":
                        tot = None
                        r["why"] = "rdmapipe did not PASS under valgrind"
                if tot is None and not r.get("why"):
                    r["why"] = "no instruction total in its callgrind output"
                    failures.append(r)
            cgi.setdefault(r["tool"], []).append(dict(n=r["count"], ir=tot, wall=r["wall"], base=base, run=r))
        for k in cgi:
            cgi[k].sort(key=lambda x: x["n"])

        def cg_figs(tool):
            xs = cgi.get(tool, [])
            first = xs[0] if xs else None
            per = first["ir"] / first["n"] if first and first["ir"] else None
            marg = None
            if len(xs) >= 2 and xs[0]["ir"] and xs[1]["ir"] and xs[1]["n"] > xs[0]["n"]:
                marg = (xs[1]["ir"] - xs[0]["ir"]) / (xs[1]["n"] - xs[0]["n"])
            return first, per, marg, xs

        rf, rper, rmarg, rxs = cg_figs("rdmapipe")
        pf, pper, pmarg, pxs = cg_figs("perftest")
        # A marginal cost is only meaningful when it is positive: busy polling
        # makes a program's count depend on how long it waited, not only on work.
        rmarg = rmarg if rmarg and rmarg > 0 else None
        pmarg_raw, pmarg = pmarg, (pmarg if pmarg and pmarg > 0 else None)
        n1 = rf["n"] if rf else (pf["n"] if pf else "?")
        w(f"Instructions (Ir) of the whole process divided by its messages; the target is judged at -n {n1}, "
          "start-up included. Each program also ran with twice the messages: the difference between the two "
          "runs, divided by the extra messages, is the cost per message without start-up. rdmapipe's process "
          "holds both roles (requester and responder, every payload verified); for ib_write_bw only the "
          "client runs under valgrind (the server of a write test is idle). Both poll their completion queues "
          "without pause, so the instructions of empty polls are counted too, and their number depends on how "
          "long each program waited: valgrind runs one thread at a time, so while one of rdmapipe's lcores runs, "
          "the other cannot.")
        w("")
        w("| program | messages | Ir total | Ir / message | wall under valgrind | rdmapipe's own CPU report |")
        w("|---|---|---|---|---|---|")

        def cg_row(name, xs):
            for x in xs:
                note = ""
                if x["run"]["tool"] == "rdmapipe":
                    f = parse_rdmapipe(read_text(x["run"]["log"]))
                    if "requester_busy" in f:
                        note = (f"requester lcore on CPU {f['requester_busy']}%, responder lcore "
                                f"{f.get('responder_busy', '?')}% of its {f.get('elapsed', 0):.1f} s data path")
                w(f"| {name} | {x['n']} | {'{:,}'.format(x['ir']) if x['ir'] else 'failed: ' + (x['run'].get('why') or '?')} | "
                  f"{'{:,.0f}'.format(x['ir'] / x['n']) if x['ir'] else '—'} | {x['wall']:.0f} s | {note} |")

        cg_row("`rdmapipe -v write_imm -s 64` (EAL `--no-huge -m 512 --no-shconf`)", rxs)
        cg_row("`ib_write_bw -s 64` client", pxs)
        w("")
        w("| comparison | rdmapipe | perftest | ratio | target | met? |")
        w("|---|---|---|---|---|---|")
        if rper and pper:
            ratio = rper / pper
            w(f"| Ir / message, whole process, -n {n1} | {rper:,.0f} | {pper:,.0f} | {ratio:.2f}x | <= {CG_TARGET}x | "
              f"{'yes' if ratio <= CG_TARGET else '**no**'} |")
        else:
            w(f"| Ir / message, whole process, -n {n1} | {'{:,.0f}'.format(rper) if rper else 'failed'} | "
              f"{'{:,.0f}'.format(pper) if pper else 'failed'} | — | <= {CG_TARGET}x | **no** (not measured) |")
        if len(rxs) >= 2 and len(pxs) >= 2 and rxs[1]["ir"] and pxs[1]["ir"] and rxs[1]["n"] == pxs[1]["n"]:
            a2, b2 = rxs[1]["ir"] / rxs[1]["n"], pxs[1]["ir"] / pxs[1]["n"]
            w(f"| Ir / message, whole process, -n {rxs[1]['n']} | {a2:,.0f} | {b2:,.0f} | {a2 / b2:.2f}x | (for information) | |")
        if rmarg and pmarg:
            w(f"| Ir / message without start-up | {rmarg:,.0f} | {pmarg:,.0f} | {rmarg / pmarg:.2f}x | (for information) | |")
        elif len(rxs) >= 2 or len(pxs) >= 2:
            why = []
            for nm, xs, mg in (("rdmapipe", rxs, rmarg), ("ib_write_bw", pxs, pmarg)):
                if len(xs) >= 2 and xs[0]["ir"] and xs[1]["ir"] and not mg:
                    why.append(f"{nm} counted {xs[1]['ir']:,} Ir for {xs[1]['n']} messages but {xs[0]['ir']:,} for "
                               f"{xs[0]['n']}: its polling loop spun longer in the shorter run")
            w(f"| Ir / message without start-up | {'{:,.0f}'.format(rmarg) if rmarg else '—'} | "
              f"{'{:,.0f}'.format(pmarg) if pmarg else '—'} | not meaningful this time"
              + (": " + "; ".join(why) if why else ": a callgrind run failed") + " | | |")
        w("")
        results["callgrind"] = dict(rdmapipe_per_msg=rper, perftest_per_msg=pper,
                                    rdmapipe_marginal=rmarg, perftest_marginal=pmarg,
                                    ratio=(rper / pper if rper and pper else None), target=CG_TARGET)

        # Functions and objects from callgrind_annotate's listings.
        def listing(path, merge):
            """(function, object, Ir) rows of a callgrind_annotate listing. callgrind
            splits a function by source file, and only one part names the object:
            the parts are merged (merge=sum for self Ir, max for inclusive Ir)."""
            rows = []
            text = read_text(path)
            body = text.split("file:function", 1)
            if len(body) < 2:
                return rows
            for line in body[1].splitlines()[2:]:
                if not line.strip() or line.startswith("-----"):
                    break  # the end of the function table
                m = re.match(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*?)(?:\s+\[([^\]]*)\])?\s*$", line)
                if not m:
                    continue
                ir = int(m.group(1).replace(",", ""))
                fn = m.group(2)
                fn = fn.split(":", 1)[1] if ":" in fn and not fn.startswith(":") else fn
                obj = os.path.basename(m.group(3)) if m.group(3) else None
                rows.append((fn, obj, ir))
            objof = {fn: obj for fn, obj, ir in rows if obj}
            merged = {}
            for fn, obj, ir in rows:
                key = (fn, obj or objof.get(fn, "?"))
                merged[key] = merge(merged[key], ir) if key in merged else ir
            return sorted(((fn, obj, ir) for (fn, obj), ir in merged.items()), key=lambda r: -r[2])

        def short(fn):
            fn = fn.strip()
            return fn if len(fn) <= 90 else fn[:87] + "..."

        def funcs(tool, xs, marg):
            if not xs or not xs[0]["ir"]:
                return None
            a = listing(xs[0]["base"] + ".self.txt", lambda x, y: x + y)
            if not a:
                return None
            b = {}
            if len(xs) >= 2 and xs[1]["ir"]:
                for fn, obj, ir in listing(xs[1]["base"] + ".self.txt", lambda x, y: x + y):
                    b[(fn, obj)] = ir
            dn = (xs[1]["n"] - xs[0]["n"]) if len(xs) >= 2 else None
            rows = []
            for fn, obj, ir in a:
                m = (b.get((fn, obj), 0) - ir) / dn if b and dn else None
                rows.append((fn, obj, ir, m))
            return rows

        obj_tables = {}
        for tool, name, xs, marg in (("rdmapipe", "rdmapipe", rxs, rmarg), ("perftest", "ib_write_bw client", pxs, pmarg)):
            rows = funcs(tool, xs, marg)
            if rows and not marg:  # per-message differences are noise when the totals are
                rows = [(fn, obj, ir, None) for fn, obj, ir, m in rows]
            if not rows:
                continue
            tot = xs[0]["ir"]
            have_m = any(r[3] is not None for r in rows)
            w(f"Top functions of {name} by self Ir"
              + (", ranked by their cost per message without start-up" if have_m else "") + ":")
            w("")
            w(f"| function | object | self Ir at -n {xs[0]['n']} | share |" + (" Ir / message without start-up |" if have_m else ""))
            w("|---|---|---|---|" + ("---|" if have_m else ""))
            ranked = sorted(rows, key=lambda r: -(r[3] if r[3] is not None else r[2] / 1e9)) if have_m else rows
            for fn, obj, ir, m in ranked[:8]:
                w(f"| `{short(fn)}` | {obj} | {ir:,} | {100 * ir / tot:.1f}% |"
                  + (f" {'{:,.0f}'.format(m) if m is not None else '—'} |" if have_m else ""))
            w("")
            incl = listing(xs[0]["base"] + ".incl.txt", max)
            if incl:
                w(f"Top functions of {name} by inclusive Ir at -n {xs[0]['n']} (leaving out the program-entry wrappers "
                  "that hold more than 95%):")
                w("")
                w("| function | object | inclusive Ir | share |")
                w("|---|---|---|---|")
                k = 0
                for fn, obj, ir in incl:
                    # callgrind's per-recursion-level copies (name'2) count twice
                    if ir > 0.95 * tot or re.search(r"'\d+$", fn):
                        continue
                    w(f"| `{short(fn)}` | {obj} | {ir:,} | {100 * ir / tot:.1f}% |")
                    k += 1
                    if k == 8:
                        break
                w("")
            objs = {}
            for fn, obj, ir, m in rows:
                o = objs.setdefault(obj, [0, 0.0, m is not None])
                o[0] += ir
                o[1] += m or 0
            obj_tables[tool] = (tot, objs)
        if obj_tables:
            w("Functions shown as addresses are in stripped objects (perftest, the rxe provider, DPDK's drivers), "
              "named by their offset; callgrind can file two such functions with the same offset in different "
              "objects under one of the objects, so trust the object column of those rows less.")
            w("")
            w("Instructions by object (self Ir): share of the whole run, and per message without start-up:")
            w("")
            w("| object | rdmapipe share | rdmapipe Ir / msg w/o start-up | ib_write_bw share | ib_write_bw Ir / msg w/o start-up |")
            w("|---|---|---|---|---|")
            allobj = {}
            for tool, (tot, objs) in obj_tables.items():
                for o, v in objs.items():
                    allobj[o] = max(allobj.get(o, 0), v[0] / tot)
            for o in sorted(allobj, key=lambda o: -allobj[o])[:10]:
                cells = []
                for tool in ("rdmapipe", "perftest"):
                    if tool in obj_tables and o in obj_tables[tool][1]:
                        tot, objs = obj_tables[tool]
                        v = objs[o]
                        cells += [f"{100 * v[0] / tot:.1f}%", f"{v[1]:,.0f}" if v[2] else "—"]
                    else:
                        cells += ["—", "—"]
                w(f"| {o} | " + " | ".join(cells) + " |")
            w("")
            results["callgrind"]["objects"] = {t: {o: v[0] for o, v in objs.items()} for t, (tot, objs) in obj_tables.items()}

    # ---- guest CPU ------------------------------------------------------------------
    w("## Guest CPU during the runs")
    w("")
    w("From /proc/stat in the guest, before and after each run (whole run, including process start-up), "
      "medians over the rounds; kernel = system + irq + softirq, where rxe does its packet work.")
    w("")
    w("| run | user | kernel | idle | wall per run (median) |")
    w("|---|---|---|---|---|")
    splits = {}
    for i, rs in by_id.items():
        ss = [cpu_split(r) for r in rs if r["ok"]]
        ss = [s for s in ss if s]
        if not ss:
            continue
        s = {k: statistics.median(x[k] for x in ss) for k in ("user", "kernel", "idle")}
        splits[i] = s
        wall = median([r["wall"] for r in rs if r["ok"]])
        w(f"| `{labels.get(i, i)}` | {100 * s['user']:.0f}% | {100 * s['kernel']:.0f}% | {100 * s['idle']:.0f}% | "
          f"{wall:.1f} s |")
    w("")

    # ---- what limits it ---------------------------------------------------------------
    w("## What limits it (from these measurements)")
    w("")
    bl = []
    rp64 = [r for r in by_id.get("rp-write_imm", []) if r["ok"] and "wrs_per_post" in r["fig"]]
    if rp64:
        f = rp64[0]["fig"]
        bl.append(f"rdmapipe's 64 B write run posted {f['posts']:,} chains for {f.get('verified', 0):,} messages "
                  f"({f['wrs_per_post']:.1f} work requests per `ibv_post_send`); perftest posts one work request "
                  "per call by default and 32 with `-l 32`. On rxe every `ibv_post_send` is a system call into "
                  "the guest kernel, which builds, checksums and loops back each packet itself."
                  + (f" rdmapipe reported its requester lcore busy {f['requester_busy']}% and its responder lcore "
                     f"{f['responder_busy']}% of the data-path time (both poll without pause), so during the data "
                     "path its two lcores occupy both vCPUs and the kernel's rxe work has to share them."
                     if "requester_busy" in f and "responder_busy" in f else ""))
    for i, j in (("rp-write_imm", "pt-write-l32"), ("rp-write_imm-64k", "pt-write-64k")):
        if i in splits and j in splits:
            a, b = splits[i], splits[j]
            bl.append(f"While `{labels[i]}` ran, the guest's {guest.get('guest_cpus', '?')} vCPUs were "
                      f"{100 * a['user']:.0f}% in user space, {100 * a['kernel']:.0f}% in the kernel and "
                      f"{100 * a['idle']:.0f}% idle; during `{labels[j]}`: {100 * b['user']:.0f}% / "
                      f"{100 * b['kernel']:.0f}% / {100 * b['idle']:.0f}%."
                      + " (Whole runs, start-up included: see the table above.)")
    cgr = results.get("callgrind") or {}
    if cgr.get("rdmapipe_per_msg") and cgr.get("rdmapipe_marginal"):
        n = cgi["rdmapipe"][0]["n"]
        fixed = cgi["rdmapipe"][0]["ir"] - cgr["rdmapipe_marginal"] * n
        bl.append(f"Under callgrind, {fixed / 1e6:,.0f} M of rdmapipe's {cgi['rdmapipe'][0]['ir'] / 1e6:,.0f} M "
                  f"instructions at -n {n} do not grow with the message count (start-up: EAL, device and "
                  f"memory set-up, teardown); the rest is {cgr['rdmapipe_marginal']:,.0f} per message"
                  + (f" against ib_write_bw's {cgr['perftest_marginal']:,.0f}." if cgr.get("perftest_marginal") else "."))
    if cg and cgi.get("rdmapipe"):
        x = cgi["rdmapipe"][0]
        f = parse_rdmapipe(read_text(x["run"]["log"]))
        if "requester_busy" in f and "responder_busy" in f and x["ir"]:
            bl.append(f"Under valgrind, which runs one thread at a time, rdmapipe's requester lcore was on the CPU "
                      f"{f['requester_busy']}% and its responder lcore {f['responder_busy']}% of the data-path time: a "
                      "polling lcore keeps polling for as long as it holds the CPU, so what rdmapipe's count measures "
                      "depends on valgrind's scheduling as much as on work per message; its top self-Ir functions are "
                      "the polling loop and the provider function under it. A count with each lcore on its own CPU, as "
                      "in a real run, is not something valgrind can give.")
    if cg:
        for nm, tool in (("ib_write_bw", "perftest"), ("rdmapipe", "rdmapipe")):
            xs = cgi.get(tool, [])
            if len(xs) >= 2 and xs[0]["ir"] and xs[1]["ir"] and xs[1]["ir"] <= xs[0]["ir"]:
                bl.append(f"{nm}'s two callgrind runs counted {xs[0]['ir'] / xs[0]['n']:,.0f} and "
                          f"{xs[1]['ir'] / xs[1]['n']:,.0f} Ir per message (-n {xs[0]['n']} and {xs[1]['n']}): the longer "
                          "run counted fewer instructions in all, so its polling loop spun for different lengths of "
                          "time; single callgrind figures of polling programs are uncertain by about that much.")
    if "rdmapipe" in obj_tables if cg else False:
        tot, objs = obj_tables["rdmapipe"]
        verbs = sum(v[1] for o, v in objs.items() if "rxe" in o or "ibverbs" in o)
        allm = sum(v[1] for v in objs.values())
        if allm > 0:
            bl.append(f"Of rdmapipe's per-message instructions without start-up, {100 * verbs / allm:.0f}% are in "
                      "libibverbs and the rxe provider (posting and polling, including empty polls).")
    mtu = guest.get("device_mtu", "")
    m = re.match(r"(\d+)", mtu)
    if m:
        bl.append(f"The device MTU is {m.group(1)} B, so each 64 KiB message is {65536 // int(m.group(1))} packets that "
                  "the guest kernel copies and checksums in software; the 64 KiB results measure that path more than "
                  "either program.")
    if guest.get("softroce_mode") == "vm":
        bl.append("All of it runs under qemu's TCG software emulation: absolute figures are far below real "
                  "hardware and say nothing about it; only the ratios measured side by side in this session do.")
    for b in bl:
        w(f"- {b}")
    w("")

    # ---- failures ---------------------------------------------------------------------
    st = host.get("session_status", "0")
    if st not in ("0", "1"):
        w("## The session did not finish")
        w("")
        w(("The soft-RoCE session hit its time bound (`--timeout`)" if st == "124" else
           f"The soft-RoCE session ended with status {st}")
          + "; runs that had not finished by then are missing from every table above.")
        w("")
    if failures:
        w("## Runs that failed or were skipped")
        w("")
        w("| round | run | why |")
        w("|---|---|---|")
        for r in failures:
            name = (f"callgrind: {'rdmapipe' if r['tool'] == 'rdmapipe' else 'ib_write_bw'} -n {r['count']}"
                    if r["case"] == "callgrind" else label(r) if r["cmd"] and not r["cmd"].startswith("(") else r["id"])
            w(f"| {r['round']} | `{name}` | "
              f"{(r.get('why') or '?').replace('|', '/')} |")
        w("")

    text = "\n".join(md)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, out)
    with open(os.path.join(d, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    # 10: written, but some runs failed (any other non-zero status: not written).
    return 10 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
