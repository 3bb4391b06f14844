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
import subprocess
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
# The limit (tools/bare-verbs): every run as a ratio to the bare loop of its own verb
# and size (BARE_OF), else, in run folders from before there was one per verb, to its
# case's write loop (BARE_REF). Targets: every rdmapipe verb >= 0.97x its own bare loop
# (issue 34); the 64 B write keeps its earlier 0.98x.
BARE_OF = {"rp-write": "bare-write", "rp-write-adaptive": "bare-write", "rp-write_imm": "bare-write_imm",
           "rp-send": "bare-send", "rp-write-64k": "bare-write-64k", "rp-write_imm-64k": "bare-write_imm-64k",
           "rp-read-64k": "bare-read-64k", "rp-fetch_add": "bare-fetch_add", "rp-cmp_swap": "bare-cmp_swap",
           "pt-write": "bare-write", "pt-write-l32": "bare-write", "pt-write-l32-inl": "bare-write",
           "pt-send": "bare-send", "pt-send-l32": "bare-send", "pt-write-64k": "bare-write-64k",
           "pt-read-64k": "bare-read-64k", "pt-fetch_add": "bare-fetch_add", "pt-cmp_swap": "bare-cmp_swap"}
BARE_REF = {"write64": "bare-write", "send64": "bare-write", "atomic": "bare-write", "bw64k": "bare-write-64k"}
BARE_TARGETS = {i: 0.97 for i in BARE_OF if i.startswith("rp-")}
BARE_TARGETS.update({"rp-write": 0.98, "rp-write-adaptive": 0.98})
# Latency: (perftest ID, rdmapipe ID, target ratio rdmapipe / perftest, lower is better).
LAT_PAIRS = [("pt-send_lat", "rp-send_lat", 1.0)]
LAT_PERFTEST_ONLY = {"pt-write_lat": "not compared: rdmapipe's ping-pong mode has send and send_imm only"}
# callgrind: the target is judged on CG_TARGET_ID's whole process at the lower count.
CG_TARGET = 0.5
CG_TARGET_ID = "cg-rp-write-adaptive"
CG_PERFTEST_ID = "cg-ib_write_bw"
CG_BARE_ID = "cg-bare-write"
# Steady state (the difference of two counts per message): the requester thread
# against the bare loop and against ib_write_bw's client.
CG_BARE_TARGET = 1.3
CG_NAMES = {
    "cg-rp-write-adaptive": "`rdmapipe -v write -s 64 --poll adaptive`",
    "cg-rp-write-busy": "`rdmapipe -v write -s 64` (busy polling)",
    "cg-rdmapipe": "`rdmapipe -v write_imm -s 64` (busy polling; earlier bench version)",
    "cg-ib_write_bw": "`ib_write_bw -s 64` client",
    "cg-bare-write": "`bare-verbs -s 64` (tools/bare-verbs: the limit)",
    "cg-rp-write_imm-adaptive": "`rdmapipe -v write_imm -s 64 --poll adaptive`",
    "cg-rp-send-adaptive": "`rdmapipe -v send -s 64 --poll adaptive`",
    "cg-bare-write_imm": "`bare-verbs -v write_imm -s 64`",
    "cg-bare-send": "`bare-verbs -v send -s 64`",
    "cg-bare-write_imm-verify": "`bare-verbs --verify -v write_imm -s 64`",
    "cg-bare-send-verify": "`bare-verbs --verify -v send -s 64`",
    "cg-rp-write-cli": "`rdmapipe --peer ... -v write -s 64` (client under callgrind, server native)",
    "cg-rp-write_imm-cli": "`rdmapipe --peer ... -v write_imm -s 64` (client under callgrind, server native)",
    "cg-rp-send-cli": "`rdmapipe --peer ... -v send -s 64` (client under callgrind, server native)",
    "cg-rp-write_imm-srv": "`rdmapipe --listen ... -v write_imm -s 64` (server under callgrind, client native)",
    "cg-rp-send-srv": "`rdmapipe --listen ... -v send -s 64` (server under callgrind, client native)",
}
CG_ORDER = ["cg-rp-write-adaptive", "cg-rp-write-busy", "cg-rdmapipe"]
# Both ends, steady state: (verb, rdmapipe runs, bare loop run). The bare loop's ends are
# the inclusive costs of its two functions (tools/bare-verbs/bare_verbs.cpp).
# Each end in its own process (tools/bench.d/inner.sh's cg_end): the requester from
# the client under callgrind (-cli), the responder from the server under callgrind
# (-srv), each against a native peer; these are judged. The one-process runs (both
# lcores, -l 0-1) give the passive end of a plain write; write_imm's and send's are
# those of folders from before the split runs.
# (verb, one-process runs, {end: split run}, bare loop run, bare loop run with --verify)
CG_ENDS = [("write", ["cg-rp-write-adaptive", "cg-rp-write-busy"], {"req": "cg-rp-write-cli"}, "cg-bare-write", None),
           ("write_imm", ["cg-rp-write_imm-adaptive"], {"req": "cg-rp-write_imm-cli", "rsp": "cg-rp-write_imm-srv"},
            "cg-bare-write_imm", "cg-bare-write_imm-verify"),
           ("send", ["cg-rp-send-adaptive"], {"req": "cg-rp-send-cli", "rsp": "cg-rp-send-srv"},
            "cg-bare-send", "cg-bare-send-verify")]
BARE_SENDER_FN, BARE_RECEIVER_FN = "bare_send_side", "bare_recv_side"
# Each receiving end's work after a poll that returned completions (its own function at
# both ends, called only then): per message, the steady state without the empty polls.
RSP_WORK_FN, BARE_RECEIVER_WORK_FN = "responder_busy", "bare_recv_work"
SPLIT_IDS = {i for _, _, split, _, _ in CG_ENDS for i in split.values()}
# Issue 34's targets: the requester <= 1.1x the bare sender, the responder of a
# receiving verb <= 1.2x the bare receiver, a passive end < 5 Ir per message.
END_REQ_TARGET, END_RSP_TARGET, END_PASSIVE_MAX = 1.1, 1.2, 5
PASSIVE_VERBS = {"write", "read", "fetch_add", "cmp_swap"}
# Program-entry and thread-start wrappers, left out of the inclusive tables (as is
# anything holding more than 95% of the process).
WRAPPERS = {"(below main)", "main", "_start", "__libc_start_main@@GLIBC_2.34", "__libc_start_main",
            "__libc_start_call_main", "clone", "clone3", "start_thread"}
# How a thread's profile shows what the thread was (first match wins).
THREAD_ROLES = [
    ("rp::requester_burst", "requester lcore"),
    ("rp::responder_burst", "responder lcore"),
    ("namespace)::watch(void*)", "async-event watcher"),
    ("eal_intr_thread_main", "EAL interrupt thread"),
    ("rte_telemetry", "DPDK telemetry"),
    ("socket_listener", "DPDK telemetry"),
]


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
    for role in ("requester", "responder"):
        m = re.search(r"^\s*%s CPU:.*?\((\d+)%%[^)]*\)(?:, (\d+) sleeps, (\d+) woken)?" % role, text, re.M)
        if m:
            out[role + "_busy"] = int(m.group(1))
            if m.group(2):
                out[role + "_sleeps"], out[role + "_wakeups"] = int(m.group(2)), int(m.group(3))
    # `lcore N  STAGES; B of I iterations busy, CPU ...`: did the lcore have work?
    lc = [dict(lcore=int(m.group(1)), stages=m.group(2), busy=int(m.group(3)), iters=int(m.group(4)))
          for m in re.finditer(r"^\s*lcore (\d+)\s+(\S+?);\s*(\d+) of (\d+) iterations busy", text, re.M)]
    if lc:
        out["lcores"] = lc
    m = re.search(r"^\s*polling:\s*(\S+)", text, re.M)
    if m:
        out["polling"] = m.group(1)
    # --pingpong: half round trips in us, under perftest's names (typical = median).
    for key, name in (("t_min", "min"), ("typical", "median"), ("avg", "average"), ("p90", "p90"),
                      ("p99", "p99"), ("p999", "p99.9"), ("t_max", "max")):
        m = re.search(r"^\s*latency %s:\s*([\d.]+)\s*us" % re.escape(name), text, re.M)
        if m:
            out[key] = float(m.group(1))
    m = re.search(r"^\s*round trips:\s*([\d.]+)\s*/s", text, re.M)
    if m:
        out["round_trips"] = float(m.group(1))
    m = re.search(r"^\s*echoes verified:\s*(\d+)", text, re.M)
    if m:
        out["echoes_verified"] = int(m.group(1))
    m = re.search(r"^\s*iterations:\s*(\d+)", text, re.M)
    if m:
        out["iters"] = int(m.group(1))
    m = re.search(r"^\s*elapsed:\s*([\d.]+)\s*s", text, re.M)
    if m:
        out["elapsed"] = float(m.group(1))
    m = re.search(r"^result:\s*(\S+)", text, re.M)
    out["result"] = m.group(1) if m else None
    return out


def cg_total(text):
    """The instruction total of one callgrind profile (None when it has none)."""
    m = re.search(r"^totals:\s*(\d+)", text, re.M) or re.search(r"^summary:\s*(\d+)", text, re.M)
    return int(m.group(1)) if m else None


def end_incl(path, name):
    """A function's inclusive Ir in one callgrind_annotate --inclusive=yes listing (None
    when absent). callgrind files the lines a function inlined from headers under the
    header's file too; the entry of its own file is the whole function, the largest.
    A function template's instance counts as the function (name<...>(...))."""
    best = None
    for line in read_text(path).splitlines():
        m = re.match(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", line)
        if m and re.search(r"\b%s(<.*?>)?\(" % re.escape(name), m.group(2)):
            ir = int(m.group(1).replace(",", ""))
            best = ir if best is None else max(best, ir)
    return best


def post_loop(base):
    """ib_write_bw's post-and-poll loop: the function of the program that calls the
    provider's post_send most (from callgrind_annotate's caller tree), and its inclusive
    Ir. Its difference between two counts is the client's data path without its
    start-up and its spin-waits outside the loop (which make the whole process's
    difference unmeasurable). (None, None) when not found."""
    try:
        text = subprocess.run(["callgrind_annotate", "--auto=no", "--tree=caller", "--inclusive=yes", base + ".callgrind"],
                              capture_output=True, text=True, timeout=300).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    incl, best, callers = {}, None, []
    for line in text.splitlines():
        m = re.match(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+([<*>])\s+(.*?)(?:\s+\((\d[\d,]*)x\))?(?:\s+\[([^\]]*)\])?\s*$", line)
        if not m:
            callers = []
            continue
        ir, kind, fn, calls, obj = int(m.group(1).replace(",", "")), m.group(2), m.group(3), m.group(4), m.group(5) or ""
        if kind == "<":
            callers.append((fn, int(calls.replace(",", "")) if calls else 0, obj))
        elif kind == "*":
            incl[fn] = ir
            if "rdmav" in obj or "librxe" in obj:   # a provider function: who calls it from the program?
                for cfn, n, cobj in callers:
                    if cobj.endswith("ib_write_bw") and (best is None or n > best[1]):
                        best = (cfn, n)
            callers = []
    return (best[0], incl.get(best[0])) if best else (None, None)


def thread_profiles(base):
    """The per-thread profiles of a run under --separate-threads=yes (BASE.callgrind-NN),
    each with its total, its role (from the functions it ran) and the base name of its
    callgrind_annotate listings (BASE.tNN.self.txt / .incl.txt, written by tools/bench)."""
    out = []
    d = os.path.dirname(base) or "."
    stem = os.path.basename(base) + ".callgrind-"
    try:
        names = os.listdir(d)
    except OSError:
        return out
    for name in names:
        if not name.startswith(stem) or not name[len(stem):].isdigit():
            continue
        num = name[len(stem):]
        text = read_text(os.path.join(d, name))
        role = next((r for key, r in THREAD_ROLES if key in text), None)
        if role is None:
            role = "main thread" if int(num) == 1 else "other"
        elif int(num) == 1:
            role += " (the main thread: also EAL start-up and teardown)"
        out.append(dict(num=int(num), ir=cg_total(text), role=role,
                        listing=os.path.join(d, f"{os.path.basename(base)}.t{num}")))
    return sorted(out, key=lambda t: t["num"])


def iterations_cell(xs, end):
    """An end's loop iterations at each count, from the run's summary (`lcore N  STAGES;
    B of I iterations busy`): the lcore of the end's stage (…_tx the requester, …_rx the
    responder), or the only lcore of a one-end process. '—' when the output has none."""
    cells = []
    for x in xs[:2]:
        ls = (x.get("fig") or {}).get("lcores") or []
        suffix = "_tx" if end == "req" else "_rx"
        pick = [l for l in ls if l["stages"].endswith(suffix)] or (ls if len(ls) == 1 else [])
        if pick:
            busy = pick[0]['busy']
            per = f" ({x['n'] / busy:.1f} a busy poll)" if end == "rsp" and busy and x.get("n") else ""
            cells.append(f"{busy:,} of {pick[0]['iters']:,}{per}")
    return "; ".join(cells) if cells else "—"


def per_message(xs, key):
    """A function's Ir per message over both runs together: for a function that does
    nothing at start-up (the work after a poll with completions). No difference of the
    two runs: it breaks down when their polls returned different numbers of
    completions (an end under callgrind falls behind its native peer by varying
    amounts, and what is done once a burst is spread over more or fewer messages).
    None when either run lacks it."""
    runs = xs[:2]
    if len(runs) < 2 or not all(x.get(key) for x in runs):
        return None
    return sum(x[key] for x in runs) / sum(x["n"] for x in runs)


def ends_table(cgi, marginal, irs, w, results):
    """Issue 34's table: each end's steady-state Ir per message, rdmapipe's requester and
    responder against the bare loop's sender and receiver functions (unverified: the
    target; verified: for information)."""
    ids = [i for _, one, split, b, bv in CG_ENDS for i in one + list(split.values()) + [b, bv] if i]
    if not any(i in cgi for i in ids):
        return
    w("### Instructions per message at both ends")
    w("")
    w("Steady state: (Ir at the higher count − Ir at the lower) / the extra messages, per end. "
      "**Each end is measured in its own process under callgrind, against a native peer**: rdmapipe's server "
      "(`--listen` on rxeB, `-l 1`: the responder) under callgrind with its client native on rxeA, and, in "
      "another pair of runs, its client (`--peer`, `-l 0`: the requester) under callgrind with its server native, "
      "connected over rdma_cm on the soft-RoCE pair (a veth wire). Why: valgrind runs one thread at a time, so "
      "with both lcores in one process the responder spins through its time slices while the requester holds "
      "the CPU (several empty loop iterations per message, all counted), and the figure measures valgrind's "
      "scheduling rather than the responder's work. Under callgrind an end is the slow one, so it always has "
      "work; the loop iterations column (from the run's summary line, busy of all, at the lower and the higher "
      "count) shows it. The end measured is its process's main thread (the one that ran `rp::requester_burst` "
      "or `rp::responder_burst`; its EAL start-up and teardown cancel out in the difference). The bare loop's "
      f"ends are the inclusive Ir of its two functions, `{BARE_SENDER_FN}` (post the chains, poll the send CQ) and "
      f"`{BARE_RECEIVER_FN}` (poll the receive CQ, refill the SRQ), from `callgrind_annotate --inclusive=yes`; "
      "both ends run in its one thread, each with work on nearly every call. rdmapipe stamps and checks every "
      "message's payload; the bare loop does not, so each end is also shown against `bare-verbs --verify` "
      "(*bare loop, verified*: the sender stamps each message with rdmapipe's pattern before posting it, the "
      "receiver checks each one, inside the same two functions). "
      f"Targets (issue 34), judged against the unverified bare loop: requester <= {END_REQ_TARGET}x the bare "
      f"sender, responder <= {END_RSP_TARGET}x the bare receiver for send and write_imm; a passive end (a plain "
      f"write's responder, from the one-process runs) under {END_PASSIVE_MAX} Ir per message. The one-process "
      "runs (`-l 0-1`, both lcores) are kept below for the plain write. A figure that is not positive means the "
      "longer run counted fewer instructions: noise (a polling thread's spins) larger than the per-message cost.")
    w("")
    w("The last three columns (receiving ends only) are **work per message, empty polls left out**: the "
      "inclusive Ir of the one function each receiving end runs after a poll of its receive CQ that returned "
      "completions, and only then, over the messages of both runs together (the function does nothing at "
      "start-up, so no difference of the two runs is taken: one breaks down when their polls returned different "
      f"numbers of completions): rdmapipe's `{RSP_WORK_FN}` (check each message, "
      "hand its buffer on or give it back, refill the SRQ, return credit or ACKs, publish the counters) and the "
      f"bare loop's `{BARE_RECEIVER_WORK_FN}` (check each completion's status, count, refill the SRQ; with "
      "`--verify` also check each message). Left out at both ends: every poll of the receive CQ, empty or not, "
      "and all an empty iteration does (rdmapipe: its lcore loop, the abort and pause checks, credit "
      "completions reaped, timers, the end-of-run checks), whose count changes from session to session with how "
      "often the CQ was found empty. It still moves somewhat with how many completions a poll returned (what is "
      "done once per burst, such as the refill check, credit and counters, is spread over them; the iterations "
      "column shows busy polls against messages). It is the per-message work only, not what an end costs per "
      "message: the targets stay judged on the all-iterations figure before it. Completions a busy poll, at "
      "each count: messages / busy iterations.")
    w("")
    w("| verb | end | rdmapipe run | rdmapipe Ir / message | its loop iterations, busy of all | bare loop end | "
      "bare Ir / message | ratio | target | met? | rdmapipe work / message, empty polls left out | "
      "bare work / message, empty polls left out | ratio of the work |")
    w("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    out = {}
    whats = {"req": "requester", "rsp": "responder"}
    keys = {"req": "req_ir", "rsp": "rsp_ir"}
    bfn = {"req": BARE_SENDER_FN, "rsp": BARE_RECEIVER_FN}

    def work(verb, end, xs, bxs):
        """The work columns of a row: (rdmapipe, bare, ratio); None where not measured
        (a requester, a passive end, a listing without the function)."""
        if end != "rsp" or verb in PASSIVE_VERBS:
            return None, None, None
        a, b = per_message(xs, "rsp_work_ir"), per_message(bxs, "recv_work_ir")
        return a, b, (a / b if a and a > 0 and b and b > 0 else None)

    def row(verb, end, i, xs, a, bid, b, bxs, tgt, met, label_extra=""):
        have = len(xs) >= 2 and all(x["threads"] for x in xs[:2])
        ratio = a / b if a and a > 0 and b and b > 0 else None
        acell = ("not run" if not xs else "—" if not have else irs(a) if a is not None else "failed")
        if a is not None and a <= 0 and not (end == "rsp" and verb in PASSIVE_VERBS):
            acell = f"{irs(a)} (not meaningful)"
        bname = CG_NAMES.get(bid, bid).split(" (")[0]
        if end == "rsp" and verb in PASSIVE_VERBS:
            bcell, bval = "none (passive)", "—"
        else:
            bcell = f"`{bfn[end]}` in {bname}{label_extra}"
            bval = irs(b) if b is not None else "not run" if not bxs else "failed"
        wa, wb, wr = work(verb, end, xs, bxs)
        w(f"| {verb} | {whats[end]} | {CG_NAMES.get(i, i)} | {acell} | {iterations_cell(xs, end) if xs else '—'} | "
          f"{bcell} | {bval} | {f'{ratio:.2f}x' if ratio is not None else '—'} | {tgt} | {met} | "
          f"{irs(wa)} | {irs(wb)} | {f'{wr:.2f}x' if wr is not None else '—'} |")
        return ratio

    def judge(ratio, t):
        return ("yes" if ratio <= t else "**no**") if ratio is not None else "**no** (not measured)"

    for verb, one, split, bid, bvid in CG_ENDS:
        bxs, bvxs = cgi.get(bid, []), cgi.get(bvid, []) if bvid else []
        passive = verb in PASSIVE_VERBS
        bare = {"req": marginal(bxs, "send_ir"), "rsp": None if passive else marginal(bxs, "recv_ir")}
        barev = {"req": marginal(bvxs, "send_ir"), "rsp": None if passive else marginal(bvxs, "recv_ir")}
        # Each end in its own process: the judged figures.
        for end, i in split.items():
            if i not in cgi:
                continue
            xs = cgi[i]
            have = len(xs) >= 2 and all(x["threads"] for x in xs[:2])
            a = marginal(xs, keys[end]) if have else None
            t = END_REQ_TARGET if end == "req" else END_RSP_TARGET
            ratio = a / bare[end] if a and a > 0 and bare[end] and bare[end] > 0 else None
            met = judge(ratio, t)
            row(verb, end, i, xs, a, bid, bare[end], bxs, f"<= {t}x", met)
            wa, wb, wr = work(verb, end, xs, bxs)
            out[f"{i}:{whats[end]}"] = dict(verb=verb, ir_per_msg=a, bare=bid, bare_ir_per_msg=bare[end], ratio=ratio,
                                            target=f"<= {t}x", met=met.startswith("yes"),
                                            iterations=iterations_cell(xs, end), work_ir_per_msg=wa,
                                            bare_work_ir_per_msg=wb, work_ratio=wr)
            if bvid and bvid in cgi:
                rv = row(verb, end, i, xs, a, bvid, barev[end], bvxs, "(for information)", "", " (bare loop, verified)")
                wa, wb, wr = work(verb, end, xs, bvxs)
                out[f"{i}:{whats[end]}:verified"] = dict(verb=verb, ir_per_msg=a, bare=bvid, bare_ir_per_msg=barev[end],
                                                         ratio=rv, work_ir_per_msg=wa, bare_work_ir_per_msg=wb,
                                                         work_ratio=wr)
        # Both lcores in one process (-l 0-1): the passive end's figure, and the runs of
        # folders from before each end had its own process.
        for i in one:
            if i not in cgi:
                continue
            xs = cgi[i]
            have = len(xs) >= 2 and all(x["threads"] for x in xs[:2])
            for end in ("req", "rsp"):
                a = marginal(xs, keys[end]) if have else None
                b = bare[end]
                ratio = a / b if a and a > 0 and b and b > 0 else None
                if end == "rsp" and passive:
                    tgt = f"< {END_PASSIVE_MAX} Ir"
                    met = ("**no** (not measured)" if a is None else "yes" if abs(a) < END_PASSIVE_MAX else
                           "**no**" if a > 0 else "**no** (not measurable: the longer run counted fewer)")
                elif split.get(end) in cgi or not i.endswith("-adaptive"):
                    tgt, met = "(for information; one process)", ""
                else:   # a folder from before the split runs: judged as it was then
                    t = END_REQ_TARGET if end == "req" else END_RSP_TARGET
                    tgt, met = f"<= {t}x", judge(ratio, t)
                row(verb, end, i, xs, a, bid, b, bxs, tgt, met)
                out[f"{i}:{whats[end]}"] = dict(verb=verb, ir_per_msg=a, bare=bid, bare_ir_per_msg=b, ratio=ratio,
                                                target=tgt, met=met.startswith("yes") if met else None)
    w("")
    results["callgrind_ends"] = out


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
            elif r["tool"] == "bare":
                r["fig"] = parse_rdmapipe(text)
                m = re.search(r"^\s*cpu per message:\s*([\d.]+)\s*us", text, re.M)
                if m:
                    r["fig"]["cpu_us"] = float(m.group(1))
                r["ok"] = r["rc"] == "0" and "rate" in r["fig"]
            else:
                r["fig"] = parse_rdmapipe(text)
                r["ok"] = (r["rc"] == "0" and r["fig"].get("result") == "PASS"
                           and ("rate" in r["fig"] or "typical" in r["fig"]))
            if not r["ok"]:
                if r["rc"] == "skipped":
                    r["why"] = "skipped (time budget used up)"
                elif r["rc"] == "novalgrind":
                    r["why"] = "valgrind not installed"
                elif r["rc"] == "nopair":
                    r["why"] = "skipped (no rxeA/rxeB pair: tools/softroce --pair, or its VM)"
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


def plan_labels():
    """Labels of the plan's runs, for IDs that a run folder does not have."""
    out = {}
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "plan")) as f:
            for line in f:
                p = line.split()
                if len(p) >= 5 and not p[0].startswith("#"):
                    out[p[1]] = {"rdmapipe": "rdmapipe ", "bare": "bare-verbs "}.get(p[2], "") + " ".join(p[4:])
    except OSError:
        pass
    return out


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
    if r["tool"] == "bare":
        keep, skip_next = [], False
        for a in cmd[1:]:
            if skip_next:
                skip_next = False
            elif a in ("-d", "-x", "-n"):
                skip_next = True
            else:
                keep.append(a)
        return "bare-verbs " + " ".join(keep)
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
    labels = plan_labels()
    for i, rs in by_id.items():
        ran = [r for r in rs if not r["cmd"].startswith("(")]
        if ran or i not in labels:
            labels[i] = label(ran[0] if ran else rs[0])

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
      "`valgrind --tool=callgrind --fair-sched=yes` in the same guest (rdmapipe's with `--separate-threads=yes`: "
      "one profile per thread).")
    w("")
    counts = ", ".join(f"{k[6:]} {v}" for k, v in sorted(guest.items()) if k.startswith("count_"))
    w(f"Message counts per run (`-n`): {counts or '?'} (msg64: 64 B write/send; big: 64 KiB; atomic; lat: latency "
      "iterations, perftest's and rdmapipe's ping-pong alike). perftest runs get `-n COUNT -F -d DEV -x GID -p PORT`; rdmapipe runs get "
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
    def per_round(i, metric, style=None):
        vals = []
        for rnd in rounds_seen:
            v = fig(i, metric, rnd)
            rs = [r for r in by_id.get(i, []) if r["round"] == rnd]
            vals.append("skipped" if rs and rs[0]["rc"] == "skipped" else fmt(v[0], style or metric) if v else "—")
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

    # ---- against the limit: the bare verbs loop ------------------------------------
    plan_order = [ln.split()[1] for ln in open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "plan"))
                  if ln.split() and not ln.startswith("#")]
    order = plan_order + sorted(i for i in by_id if i not in plan_order)
    bare_ids = [i for i in order if i in by_id and by_id[i][0]["tool"] == "bare"]
    if bare_ids:
        def bare_for(i, case):
            """The bare loop run i is compared with, and whether it is of i's own verb."""
            own = BARE_OF.get(i)
            if own in by_id:
                return own, True
            return BARE_REF.get(case), False

        w("### Against the limit: the bare verbs loop")
        w("")
        w("`tools/bare-verbs` is the limit of this device for one verb: one RC QP pair in one process, messages of "
          "one verb and size from a pre-built chain of 32 work requests per `ibv_post_send` (the last one "
          "signalled, at most 128 outstanding), one thread, and nothing else (no pool, no checks, no counters). "
          "For `write_imm` and `send` the same thread also receives: the receiving QP takes its receives from an "
          "SRQ of 512 on its own receive CQ, refilled by one pre-built chain of 32 receives whenever 32 have "
          "completed, and the sender never has more messages posted than receives. `read` and the atomics keep "
          "as many outstanding as the device allows (`max_qp_init_rd_atom`). Every rate is given as a ratio to "
          "the bare loop of its own verb and size in the same session (perftest's too); a run folder from before "
          "there was one per verb falls back to the write loop of its case, marked *write loop*. The bare loop "
          "is one thread; rdmapipe runs a requester and a responder lcore, and a plain write's or read's "
          "responder has nothing to do until the end. In this guest rates spread by a few percent from round to "
          "round (and now and then drop by a third for a whole run, whatever runs): the ratio in each round is "
          "listed below, beside the bare loop's own spread.")
        w("")
        w("| case | run | median | bare loop | bare loop median | ratio | target | met? |")
        w("|---|---|---|---|---|---|---|---|")
        results["bare"] = {}
        paired = []
        for c in CASES:
            metric = c["metric"]
            ids = [i for i in order if i in by_id and by_id[i][0]["tool"] != "bare" and by_id[i][0]["case"] == c["case"]]
            for i in ids:
                ref, own = bare_for(i, c["case"])
                bm = med(ref, metric) if ref else None
                m = med(i, metric)
                t = BARE_TARGETS.get(i) if own else None
                ratio = m / bm if m is not None and bm else None
                met = ("yes" if ratio >= t else "**no**") if t and ratio is not None else ("**no** (not measured)" if t else "")
                w(f"| {c['title']} | `{labels.get(i, i)}`{note_n(i)} | {fmt(m, metric)} {UNITS[metric]} | "
                  f"`{labels.get(ref, ref) if ref else '—'}`{'' if own else ' (*write loop*)'} | {fmt(bm, metric)} | "
                  f"{ratio_str(m, bm, t)} | {f'>= {t:.2f}x' if t else ''} | {met} |")
                results["bare"][i] = dict(median=m, bare=ref, own_verb=own, bare_median=bm, ratio=ratio, target=t)
                if ref and i.startswith("rp-"):
                    paired.append((i, ref, metric))
        w("")
        if paired:
            w("rdmapipe's ratio to its own bare loop in each round (the rounds interleave them):")
            w("")
            w("| run / bare loop | " + " | ".join(f"round {x}" for x in rounds_seen) + " | min–max |")
            w("|---|" + "---|" * len(rounds_seen) + "---|")
            for i, ref, metric in paired:
                cells, vals = [], []
                for rnd in rounds_seen:
                    a, b = fig(i, metric, rnd), fig(ref, metric, rnd)
                    a, b = a[0] if a else None, b[0] if b else None
                    cells.append(ratio_str(a, b))
                    if a is not None and b:
                        vals.append(a / b)
                spread = f"{min(vals):.2f}x–{max(vals):.2f}x" if vals else "—"
                w(f"| `{labels.get(i, i)}` / `{labels.get(ref, ref)}` | " + " | ".join(cells) + f" | {spread} |")
                results["bare"][i]["per_round"] = vals
            w("")
        w("The bare loops' own figures (every round):")
        w("")
        w("| run | " + " | ".join(f"round {x}" for x in rounds_seen) + " | min–max | CPU per message (median) |")
        w("|---|" + "---|" * len(rounds_seen) + "---|---|")
        for ref in bare_ids:
            metric = "mbs" if by_id[ref][0]["case"] == "bw64k" else "rate"
            cpu = med(ref, "cpu_us")
            vals = [v for v in fig(ref, metric) if v is not None]
            spread = f"{fmt(min(vals), metric)}–{fmt(max(vals), metric)}" if vals else "—"
            w(f"| `{labels.get(ref, ref)}` ({UNITS[metric]}) | " + " | ".join(per_round(ref, metric)) +
              f" | {spread} | {f'{cpu:.2f} us' if cpu is not None else '—'} |")
        w("")

    # ---- latency -----------------------------------------------------------------
    w("### Latency, 2 B (µs; lower is better)")
    w("")
    inl = None
    for r in by_id.get("pt-send_lat", []):
        m = re.search(r"Max inline data\s*:\s*(\d+)", read_text(r["log"]))
        if m:
            inl = int(m.group(1))
            break
    rp_inl = None
    for r in by_id.get("rp-send_lat", []):
        m = re.search(r"^\s*posting:\s*(.*)$", read_text(r["log"]) if r["log"] != "-" else "", re.M)
        if m:
            rp_inl = "inline" in m.group(1)
            break
    w("Half round trips, as perftest reports them: one ping-pong iteration, post to post, divided by two. "
      "`ib_send_lat` runs as a server and a client process that echo each other's sends; "
      "`rdmapipe --pingpong` runs both sides as two lcores of one process on one QP pair"
      + (", posting its 2 B inline" if rp_inl else ", not inline" if rp_inl is False else "")
      + (f" (`ib_send_lat` reported `Max inline data : {inl}[B]`"
         + (", so it did not inline" if inl == 0 else "") + ")" if inl is not None else "")
      + ", and checks every echo's sequence and payload; perftest checks neither. "
      "perftest's *typical* (`t_typical`) is its median; p99 and p99.9 are its `99% percentile` and "
      "`99.9% percentile`. For latency **lower is better**: ratio = rdmapipe median / perftest median over "
      "the rounds, and the target is a ratio of at most 1.0x. `met?` is judged on the medians over the rounds.")
    w("")
    w("| measure | perftest | median | rdmapipe | median | ratio | target | met? |")
    w("|---|---|---|---|---|---|---|---|")
    lat_figs = (("typical", "median latency", "t_typical", "median", True),
                ("p99", "99th percentile", "99% percentile", "p99", True),
                ("p999", "99.9th percentile", "99.9% percentile", "p99.9", False))
    for p, rp, target in LAT_PAIRS:
        res = {}
        for key, what, pname, rname, judged in lat_figs:
            pm, rm = med(p, key), med(rp, key)
            ratio = rm / pm if pm and rm is not None else None
            if judged:
                tgt = f"<= {target:.1f}x"
                if rp not in by_id:
                    met = "**no** (rdmapipe not run)"
                elif rm is None:
                    met = "**no** (rdmapipe failed)"
                elif pm is None:
                    met = "**no** (perftest failed)"
                else:
                    met = "yes" if ratio <= target else "**no**"
            else:
                tgt, met = "(for information)", ""
            rcell = "not run" if rp not in by_id else fmt(rm, "us")
            w(f"| {what} | `{labels.get(p, p)}`{note_n(p)} {pname} | {fmt(pm, 'us')} | "
              f"`{labels.get(rp, rp)}`{note_n(rp)} {rname} | {rcell} | "
              f"{ratio_str(rm, pm, target if judged else None)} | {tgt} | {met} |")
            res[key] = dict(perftest_median=pm, rdmapipe_median=rm, ratio=ratio,
                            target=target if judged else None,
                            met=(ratio <= target) if judged and ratio is not None else None)
        results["latency"][rp] = dict(perftest=p, **res)
    w("")
    w("Each round (µs):")
    w("")
    w("| run | figure | " + " | ".join(f"round {x}" for x in rounds_seen) + " | min–max |")
    w("|---|---|" + "---|" * len(rounds_seen) + "---|")
    for p, rp, target in LAT_PAIRS:
        for i, names in ((p, ("t_typical", "99% percentile", "99.9% percentile")), (rp, ("median", "p99", "p99.9"))):
            if i not in by_id:
                w(f"| `{labels.get(i, i)}` | | " + " | ".join("not run" for _ in rounds_seen) + " | — |")
                continue
            for (key, *_), name in zip(lat_figs, names):
                vals = [v for v in fig(i, key) if v is not None]
                spread = f"{fmt(min(vals), 'us')}–{fmt(max(vals), 'us')}" if vals else "—"
                w(f"| `{labels.get(i, i)}` | {name} | " + " | ".join(per_round(i, key, "us")) + f" | {spread} |")
        for key, what, *_ in lat_figs[:2]:
            cells = []
            for rnd in rounds_seen:
                a, b = fig(rp, key, rnd), fig(p, key, rnd)
                cells.append(ratio_str(a[0] if a else None, b[0] if b else None))
            w(f"| ratio in the same round: rdmapipe / perftest | {what} | " + " | ".join(cells) + " | |")
    w("")
    w("perftest only:")
    w("")
    w("| test | typical (median of rounds) | p99 (median of rounds) | each round: typical / p99 | rdmapipe |")
    w("|---|---|---|---|---|")
    for i, note in LAT_PERFTEST_ONLY.items():
        if i not in by_id:
            continue
        t, p = med(i, "typical"), med(i, "p99")
        each = []
        for rnd in rounds_seen:
            a, b = fig(i, "typical", rnd), fig(i, "p99", rnd)
            rs = [r for r in by_id.get(i, []) if r["round"] == rnd]
            each.append(f"{fmt(a[0], 'us')} / {fmt(b[0], 'us')}" if a and a[0] is not None else
                        "skipped" if rs and rs[0]["rc"] == "skipped" else "failed" if a else "—")
        w(f"| `{labels.get(i, i)}`{note_n(i)} | {fmt(t, 'us')} | {fmt(p, 'us')} | {'; '.join(each)} | {note} |")
        results["latency"][i] = dict(typical_median=t, p99_median=p)
    w("")

    # ---- callgrind -----------------------------------------------------------------
    cg = [r for r in runs if r["case"] == "callgrind"]
    cgi = {}        # run ID -> its runs, by message count
    obj_tables = {}
    if cg:
        w("## User-space instructions per message (callgrind)")
        w("")
        for r in cg:
            base = r["log"][:-4] if r["log"].endswith(".out") else r["log"]
            x = dict(n=r["count"], ir=None, wall=r["wall"], base=base, run=r, threads=[], fig={})
            if r["ok"]:
                out_text = read_text(r["log"])
                m = re.search(r"Collected\s*:\s*(\d+)", out_text)
                collected = int(m.group(1)) if m else None
                x["threads"] = thread_profiles(base)
                if x["threads"]:
                    tot = sum(t["ir"] for t in x["threads"]) if all(t["ir"] is not None for t in x["threads"]) else None
                else:
                    tot = cg_total(read_text(base + ".callgrind"))
                tot = tot if tot is not None else collected
                x["collected"] = collected
                if r["tool"] == "perftest":
                    x["loop_fn"], x["loop_ir"] = post_loop(base)
                if r["tool"] == "rdmapipe":
                    x["fig"] = parse_rdmapipe(out_text)
                    if x["fig"].get("result") != "PASS":
                        tot = None
                        r["why"] = "rdmapipe did not PASS under valgrind"
                        failures.append(r)
                if tot is None and not r.get("why"):
                    r["why"] = "no instruction total in its callgrind output"
                    failures.append(r)
                x["ir"] = tot
                for t in x["threads"]:
                    for role, key in (("requester lcore", "req_ir"), ("responder lcore", "rsp_ir")):
                        if t["role"].startswith(role) and t["ir"] is not None:
                            x[key] = x.get(key, 0) + t["ir"]
                    if t["role"].startswith("responder lcore"):
                        v = end_incl(t["listing"] + ".incl.txt", RSP_WORK_FN)
                        if v is not None:
                            x["rsp_work_ir"] = x.get("rsp_work_ir", 0) + v
                # A responder lcore that never ran a burst (it slept through the run) is
                # still the main thread with -l 0-1.
                main = next((t for t in x["threads"] if t["num"] == 1 and t["ir"] is not None), None)
                if "rsp_ir" not in x and main and main["role"] == "main thread":
                    x["rsp_ir"], x["rsp_from_main"] = main["ir"], True
                if r["tool"] == "bare":
                    for fn, key in ((BARE_SENDER_FN, "send_ir"), (BARE_RECEIVER_FN, "recv_ir"),
                                    (BARE_RECEIVER_WORK_FN, "recv_work_ir")):
                        v = end_incl(base + ".incl.txt", fn)
                        if v is not None:
                            x[key] = v
            cgi.setdefault(r["id"], []).append(x)
        for k in cgi:
            cgi[k].sort(key=lambda x: x["n"] or 0)
        rp_ids = [i for i in CG_ORDER if i in cgi] + sorted(
            i for i in cgi if i not in CG_ORDER and i != CG_PERFTEST_ID and not i.startswith("cg-bare-"))
        # The comparisons with ib_write_bw and the bare write loop: plain writes only, both
        # lcores in one process (the runs of one end per process are in the both-ends table).
        rp_write_ids = [i for i in rp_ids if i in CG_ORDER or (i.startswith("cg-rp-write-") and i not in SPLIT_IDS)]
        bare_cg_ids = [i for i in cgi if i.startswith("cg-bare-")]
        bxs = cgi.get(CG_BARE_ID, [])
        pxs = cgi.get(CG_PERFTEST_ID, [])

        def at(xs, n):
            return next((x for x in xs if x["n"] == n), None)

        def per_msg(x, key="ir"):
            return x[key] / x["n"] if x and x.get(key) and x["n"] else None

        def marginal(xs, key="ir"):
            """(Ir(n2) - Ir(n1)) / (n2 - n1); None when not measured, negative or zero
            when the longer run counted no more (busy polling: not meaningful)."""
            if len(xs) >= 2 and xs[0].get(key) and xs[1].get(key) and xs[1]["n"] > xs[0]["n"]:
                return (xs[1][key] - xs[0][key]) / (xs[1]["n"] - xs[0]["n"])
            return None

        def irs(v):
            return "{:,.0f}".format(v) if v is not None else "—"

        tx = cgi.get(CG_TARGET_ID, [])
        n1 = tx[0]["n"] if tx else (pxs[0]["n"] if pxs else "?")
        w("Instructions (Ir) counted by `valgrind --tool=callgrind --fair-sched=yes` in the same guest, divided by "
          "the messages of the run. The workload is the same on both sides: plain RDMA WRITE of 64 B on one RC QP "
          "(`rdmapipe -v write -s 64`, chains of 32 work requests per `ibv_post_send`; `ib_write_bw -s 64`, one "
          "per call). It is not the same work: rdmapipe stamps a per-message pattern into the payloads the final check reads (each QP's last window of a run of known length), checks "
          "every completion and its sequence, keeps a responder lcore running beside the requester (a plain write "
          "gives the responder no per-message completion; it checks the final contents of its window at the end) "
          "and starts DPDK's EAL; ib_write_bw's client only posts and polls, checks nothing, and its server (not "
          "under valgrind) only waits. rdmapipe ran twice per message count: polling without pause (busy, the "
          "default) and with `--poll adaptive` (an lcore that found nothing in 256 polls in a row arms its CQs and "
          "sleeps on a completion channel for at most 1 ms). valgrind runs one thread at a time, so a busy-polling "
          "lcore spends whatever CPU time it gets spinning, and those empty polls are counted too; the same goes "
          "for ib_write_bw's own polling loop. rdmapipe ran with `--separate-threads=yes`, which gives one profile "
          "per thread: the requester lcore (the thread that ran `rp::requester_burst`), the responder lcore "
          "(`rp::responder_burst`; with `-l 0-1` it is the main thread, which also runs EAL start-up and teardown) "
          "and EAL's and rdmapipe's helper threads. "
          f"**The target (<= {CG_TARGET}x ib_write_bw's Ir per message) is judged on the whole process of "
          f"{CG_NAMES[CG_TARGET_ID]} at -n {n1}, start-up included.** The requester thread alone and the cost "
          "without start-up (the difference between the run with twice the messages and the shorter run, divided "
          "by the extra messages) are shown for information only. The runs of one end per process (rdmapipe's "
          "server or client alone under callgrind, its peer native on the rxeA/rxeB pair) and `bare-verbs --verify` "
          "are listed here too; they are compared in the both-ends table below."
          + ("" if any(i in cgi for i in ("cg-rp-write-adaptive", "cg-rp-write-busy")) else
             " (This run folder comes from an earlier version of the bench, which ran other rdmapipe workloads, "
             "named in the tables, as one profile for the whole process; the target's run is missing.)"))
        w("")
        w("| program | messages | Ir total (all threads) | Ir / message | requester thread Ir / message | "
          "responder (main) thread Ir / message | other threads Ir | wall under valgrind | the program's own report |")
        w("|---|---|---|---|---|---|---|---|---|")

        def run_note(x):
            f = x.get("fig") or {}
            if "requester_busy" not in f:
                return ""
            note = (f"requester lcore on CPU {f['requester_busy']}%, responder lcore "
                    f"{f.get('responder_busy', '?')}% of its {f.get('elapsed', 0):.1f} s data path")
            if "requester_sleeps" in f:
                note += (f"; sleeps: requester {f['requester_sleeps']:,} ({f['requester_wakeups']:,} woken by a "
                         f"completion), responder {f.get('responder_sleeps', 0):,} ({f.get('responder_wakeups', 0):,})")
            return note

        for i in rp_ids + ([CG_PERFTEST_ID] if pxs else []) + bare_cg_ids:
            for x in cgi[i]:
                if not x["ir"]:
                    w(f"| {CG_NAMES.get(i, i)} | {x['n']} | failed: {(x['run'].get('why') or '?').replace('|', '/')} "
                      f"| — | — | — | — | {x['wall']:.0f} s | |")
                    continue
                thr = x["threads"]
                other = (x["ir"] - x.get("req_ir", 0) - x.get("rsp_ir", 0)) if thr else None
                w(f"| {CG_NAMES.get(i, i)} | {x['n']} | {x['ir']:,} | {irs(per_msg(x))} | "
                  f"{irs(per_msg(x, 'req_ir')) if thr else '—'} | {irs(per_msg(x, 'rsp_ir')) if thr else '—'} | "
                  f"{('{:,} in %d thread(s)'.format(other) % (len(thr) - ('req_ir' in x) - ('rsp_ir' in x))) if thr else '—'} | "
                  f"{x['wall']:.0f} s | {run_note(x)} |")
        w("")
        if any(x["threads"] for i in rp_ids for x in cgi[i]):
            w(f"Threads of the rdmapipe runs at -n {n1} (from their per-thread profiles):")
            w("")
            w("| run | thread | what it ran | Ir | share of the process | Ir / message |")
            w("|---|---|---|---|---|---|")
            for i in rp_ids:
                x = at(cgi[i], n1)
                if not x or not x["ir"]:
                    continue
                for t in x["threads"]:
                    w(f"| {CG_NAMES.get(i, i)} | {t['num']} | {t['role']} | {irs(t['ir'])} | "
                      f"{100 * t['ir'] / x['ir']:.1f}% | {irs(t['ir'] / x['n'] if t['ir'] else None)} |"
                      if t["ir"] is not None else f"| {CG_NAMES.get(i, i)} | {t['num']} | {t['role']} | no total | | |")
            w("")

        # The comparisons: rdmapipe's figure against ib_write_bw's at the same count.
        pmarg_raw = marginal(pxs)
        pmarg = pmarg_raw if pmarg_raw and pmarg_raw > 0 else None
        w("Ratio = rdmapipe / ib_write_bw (lower is better: fewer instructions per message).")
        w("")
        w("| rdmapipe run | what is counted | rdmapipe Ir / message | ib_write_bw client Ir / message | ratio | target | met? |")
        w("|---|---|---|---|---|---|---|")
        comp = {}

        def crow(i, what, a, b, judged=False, why=None):
            ratio = a / b if a and b else None
            if judged:
                tgt = f"<= {CG_TARGET}x"
                met = ("yes" if ratio <= CG_TARGET else "**no**") if ratio is not None else f"**no** ({why or 'not measured'})"
            else:
                tgt, met = "(for information)", ""
            w(f"| {CG_NAMES.get(i, i)} | {what} | {irs(a) if a is not None else (why or 'failed')} | "
              f"{irs(b) if b is not None else 'failed'} | {f'{ratio:.2f}x' if ratio is not None else '—'} | {tgt} | {met} |")
            return ratio

        if CG_TARGET_ID not in cgi:
            crow(CG_TARGET_ID, f"**whole process, -n {n1}, start-up included**", None,
                 per_msg(at(pxs, n1)) if isinstance(n1, int) else None, True, "not run")
        for i in rp_write_ids:
            xs = cgi[i]
            judged = i == CG_TARGET_ID
            x1 = xs[0]
            b1 = per_msg(at(pxs, x1["n"]))
            c = comp.setdefault(i, {})
            c["whole_n1"] = crow(i, (f"**whole process, -n {x1['n']}, start-up included**" if judged else
                                     f"whole process, -n {x1['n']}, start-up included"),
                                 per_msg(x1), b1, judged, None if x1["ir"] else "failed")
            if x1["threads"]:
                c["requester_n1"] = crow(i, f"requester thread alone, -n {x1['n']} (its thread start included)",
                                         per_msg(x1, "req_ir"), b1)
            for x in xs[1:]:
                c["whole_n%d" % x["n"]] = crow(i, f"whole process, -n {x['n']}, start-up included",
                                               per_msg(x), per_msg(at(pxs, x["n"])))
            if len(xs) >= 2:
                dn = f"(-n {xs[1]['n']}) − (-n {xs[0]['n']})"
                for key, what in (("ir", "whole process"), ("req_ir", "requester thread alone")):
                    if key == "req_ir" and not (xs[0]["threads"] and xs[1]["threads"]):
                        continue
                    a = marginal(xs, key)
                    note = None
                    if a is not None and a <= 0:
                        note, a = "not meaningful: the longer run counted fewer", None
                    b = pmarg
                    w_what = f"{what}, without start-up: {dn}"
                    ratio = a / b if a and b else None
                    bcell = (irs(b) if b is not None else
                             "not meaningful: the longer run counted fewer" if pmarg_raw is not None else "failed")
                    w(f"| {CG_NAMES.get(i, i)} | {w_what} | {irs(a) if a is not None else (note or 'failed')} | "
                      f"{bcell} | {f'{ratio:.2f}x' if ratio is not None else '—'} | (for information) | |")
                    c["marginal_" + key] = a
        w("")
        if pmarg_raw is not None and pmarg is None:
            w(f"ib_write_bw counted {pxs[1]['ir']:,} Ir for {pxs[1]['n']} messages but {pxs[0]['ir']:,} for "
              f"{pxs[0]['n']}: its polling loop spun longer in the shorter run, so its cost without start-up is not "
              "measurable this time.")
            w("")
        # Steady state: what one more message costs, start-up and connection set-up out.
        bmarg = marginal(bxs)
        bmarg = bmarg if bmarg and bmarg > 0 else None
        # ib_write_bw's client spin-waits outside its data path (start-up, the handshakes)
        # for as long as the guest takes, so its whole process's difference is noise; its
        # post-and-poll loop, inclusive, is not.
        ploop = marginal(pxs, "loop_ir")
        ploop = ploop if ploop and ploop > 0 else None
        loop_name = next((f"`{x['loop_fn'].replace('???:', '')}`" for x in pxs if x.get("loop_fn")), "not found")
        if bxs:
            dn = f"(-n {bxs[1]['n']}) − (-n {bxs[0]['n']})" if len(bxs) >= 2 else "two counts"
            w(f"Steady state, against the limit: instructions per message as {dn}, divided by the extra messages, "
              f"for the bare verbs loop ({CG_NAMES[CG_BARE_ID]}), ib_write_bw's client and each rdmapipe run's "
              f"requester and responder threads. Targets: the requester at most {CG_BARE_TARGET}x the bare loop and "
              f"at most {CG_TARGET}x ib_write_bw's client. A busy-polling thread's spins under valgrind are counted too, "
              "so a busy run's difference is noisy; the adaptive run's is the one judged. ib_write_bw's client "
              "also spins outside its data path (waiting on its peer at start-up and in its handshakes), for as long "
              "as the guest takes, so its whole-process difference is noise; its figure here is its post-and-poll "
              "loop, inclusive: the function of ib_write_bw that calls the provider's post_send (perftest's "
              "`run_iter_bw`; the Debian binary is stripped, so it is named by address). It posts one work request "
              "per `ibv_post_send` (no `-l`), where rdmapipe and the bare loop chain 32.")
            w("")
            w("| program / thread | Ir per extra message | / bare loop | / ib_write_bw client | targets | met? |")
            w("|---|---|---|---|---|---|")

            def srow(name, a, judged=False):
                rb = a / bmarg if a and bmarg else None
                rp = a / ploop if a and ploop else None
                if judged:
                    tg = f"<= {CG_BARE_TARGET}x bare, <= {CG_TARGET}x ib_write_bw"
                    if rb and rb > CG_BARE_TARGET or rp and rp > CG_TARGET:
                        met = "**no**"
                    elif rb and rp:
                        met = "yes"
                    else:
                        met = "**no** (not measured: " + ("ib_write_bw's" if rb else "the bare loop's") + " difference)"
                else:
                    tg, met = "(for information)", ""
                w(f"| {name} | {irs(a) if a else 'not measurable'} | {f'{rb:.2f}x' if rb else '—'} | "
                  f"{f'{rp:.2f}x' if rp else '—'} | {tg} | {met} |")
                return dict(ir_per_msg=a, vs_bare=rb, vs_perftest=rp)

            steady = {"bare": srow(CG_NAMES[CG_BARE_ID], bmarg),
                      "perftest": srow(f"{CG_NAMES[CG_PERFTEST_ID]}: its post-and-poll loop ({loop_name})", ploop)}
            for i in rp_write_ids:
                xs = cgi[i]
                if len(xs) < 2 or not (xs[0]["threads"] and xs[1]["threads"]):
                    continue
                for key, what in (("req_ir", "requester thread"), ("rsp_ir", "responder thread")):
                    a = marginal(xs, key)
                    steady[f"{i}:{what}"] = srow(f"{CG_NAMES.get(i, i)}: {what}", a if a and a > 0 else None,
                                                 judged=(i == CG_TARGET_ID and key == "req_ir"))
            w("")
            results.setdefault("callgrind_steady", steady)
        ends_table(cgi, marginal, irs, w, results)
        tper = per_msg(tx[0]) if tx else None
        pper = per_msg(at(pxs, tx[0]["n"])) if tx else None
        results["callgrind"] = dict(
            target_run=CG_TARGET_ID, target=CG_TARGET, n=n1, rdmapipe_per_msg=tper, perftest_per_msg=pper,
            ratio=(tper / pper if tper and pper else None), perftest_marginal=pmarg, comparisons=comp,
            runs={i: [dict(n=x["n"], ir=x["ir"], collected=x.get("collected"), wall=x["wall"],
                           threads=[dict(num=t["num"], role=t["role"], ir=t["ir"]) for t in x["threads"]])
                      for x in xs] for i, xs in cgi.items()})

        # Functions and objects from callgrind_annotate's listings.
        def listing_rows(path):
            """(function, object or None, Ir) rows of one callgrind_annotate listing."""
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
            return rows

        def listing(paths, merge):
            """Rows of one or more listings (one per thread), merged by function and
            object. callgrind splits a function by source file, and only one part names
            the object: within a listing the parts are merged (merge=sum for self Ir,
            max for inclusive Ir); across threads the figures add up."""
            total = {}
            for path in paths:
                rows = listing_rows(path)
                objof = {fn: obj for fn, obj, ir in rows if obj}
                merged = {}
                for fn, obj, ir in rows:
                    key = (fn, obj or objof.get(fn, "?"))
                    merged[key] = merge(merged[key], ir) if key in merged else ir
                for key, ir in merged.items():
                    total[key] = total.get(key, 0) + ir
            # A function named without its object in one thread's listing: file it
            # under the object another thread's listing names.
            objof = {fn: obj for (fn, obj) in total if obj != "?"}
            out = {}
            for (fn, obj), ir in total.items():
                key = (fn, objof.get(fn, obj) if obj == "?" else obj)
                out[key] = out.get(key, 0) + ir
            return sorted(((fn, obj, ir) for (fn, obj), ir in out.items()), key=lambda r: -r[2])

        def listings(x, kind, thread=None):
            if x["threads"]:
                ts = [t for t in x["threads"] if thread is None or t["role"].startswith(thread)]
                return [t["listing"] + kind for t in ts]
            return [x["base"] + kind] if thread is None else []

        def short(fn):
            fn = fn.strip()
            return fn if len(fn) <= 90 else fn[:87] + "..."

        def funcs(xs, thread=None):
            if not xs or not xs[0]["ir"]:
                return None
            a = listing(listings(xs[0], ".self.txt", thread), lambda x, y: x + y)
            if not a:
                return None
            b = {}
            if len(xs) >= 2 and xs[1]["ir"]:
                for fn, obj, ir in listing(listings(xs[1], ".self.txt", thread), lambda x, y: x + y):
                    b[(fn, obj)] = ir
            dn = (xs[1]["n"] - xs[0]["n"]) if len(xs) >= 2 else None
            return [(fn, obj, ir, (b.get((fn, obj), 0) - ir) / dn if b and dn else None) for fn, obj, ir in a]

        def self_table(name, xs, marg_ok, thread=None, tot=None):
            rows = funcs(xs, thread)
            if rows and not marg_ok:  # per-message differences are noise when the totals are
                rows = [(fn, obj, ir, None) for fn, obj, ir, m in rows]
            if not rows:
                return None
            tot = tot or xs[0]["ir"]
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
            return rows

        def incl_table(name, xs):
            tot = xs[0]["ir"]
            incl = listing(listings(xs[0], ".incl.txt"), max)
            if not incl:
                return
            w(f"Top functions of {name} by inclusive Ir at -n {xs[0]['n']}"
              + (", added up over its threads" if xs[0]["threads"] else "")
              + " (leaving out the program-entry and thread-start wrappers):")
            w("")
            w("| function | object | inclusive Ir | share |")
            w("|---|---|---|---|")
            # A thread's entry points (shown by address when the object is stripped)
            # hold all of its instructions.
            roots = set()
            for t in xs[0]["threads"]:
                for fn, obj, ir in listing([t["listing"] + ".incl.txt"], max):
                    if t["ir"] and ir >= 0.9999 * t["ir"]:
                        roots.add(fn)
            k = 0
            for fn, obj, ir in incl:
                # callgrind's per-recursion-level copies (name'2) count twice
                if ir > 0.95 * tot or re.search(r"'\d+$", fn) or fn.strip() in WRAPPERS or fn in roots:
                    continue
                w(f"| `{short(fn)}` | {obj} | {ir:,} | {100 * ir / tot:.1f}% |")
                k += 1
                if k == 8:
                    break
            w("")

        obj_cols = []
        for i in rp_write_ids + ([CG_PERFTEST_ID] if pxs else []):
            xs = cgi[i]
            if not xs or not xs[0]["ir"]:
                continue
            m = marginal(xs)
            name = CG_NAMES.get(i, i) + (", all threads" if xs[0]["threads"] else "")
            rows = self_table(name, xs, bool(m and m > 0))
            if not rows:
                continue
            if i == CG_TARGET_ID or (CG_TARGET_ID not in cgi and i == rp_ids[0]) or i == CG_PERFTEST_ID:
                if xs[0]["threads"] and xs[0].get("req_ir"):
                    rm = marginal(xs, "req_ir")
                    self_table(CG_NAMES.get(i, i) + ", requester thread alone", xs, bool(rm and rm > 0),
                               "requester lcore", xs[0]["req_ir"])
                incl_table(CG_NAMES.get(i, i), xs)
            objs = {}
            for fn, obj, ir, mm in rows:
                o = objs.setdefault(obj, [0, 0.0, mm is not None])
                o[0] += ir
                o[1] += mm or 0
            obj_tables[i] = (xs[0]["ir"], objs)
            obj_cols.append(i)
        if obj_tables:
            w("Functions shown as addresses are in stripped objects (perftest, the rxe provider, DPDK's drivers), "
              "named by their offset; callgrind can file two such functions with the same offset in different "
              "objects under one of the objects, so trust the object column of those rows less.")
            w("")
            w("Instructions by object (self Ir, all threads): share of the whole run at the lower count, and per "
              "message without start-up:")
            w("")
            short_name = {"cg-rp-write-adaptive": "rdmapipe adaptive", "cg-rp-write-busy": "rdmapipe busy",
                          "cg-rdmapipe": "rdmapipe write_imm", "cg-ib_write_bw": "ib_write_bw"}
            w("| object | " + " | ".join(f"{short_name.get(i, i)} share | {short_name.get(i, i)} Ir / msg w/o start-up"
                                        for i in obj_cols) + " |")
            w("|---|" + "---|---|" * len(obj_cols))
            allobj = {}
            for i, (tot, objs) in obj_tables.items():
                for o, v in objs.items():
                    allobj[o] = max(allobj.get(o, 0), v[0] / tot)
            for o in sorted(allobj, key=lambda o: -allobj[o])[:10]:
                cells = []
                for i in obj_cols:
                    tot, objs = obj_tables[i]
                    if o in objs:
                        v = objs[o]
                        cells += [f"{100 * v[0] / tot:.1f}%", f"{round(v[1]) or 0:,}" if v[2] else "—"]
                    else:
                        cells += ["—", "—"]
                w(f"| {o} | " + " | ".join(cells) + " |")
            w("")
            w("A negative figure without start-up means the longer run spent fewer instructions there "
              "(start-up work varies a little from run to run).")
            w("")
            results["callgrind"]["objects"] = {i: {o: v[0] for o, v in objs.items()} for i, (tot, objs) in obj_tables.items()}

    # ---- stages vs bare rings (host) ---------------------------------------------------
    rtext = read_text(os.path.join(d, "ring-bench.txt"))
    w("## Stages joined by rings vs bare rte_ring (host)")
    w("")
    if not rtext:
        w("Not run in this session (tools/bench runs `rdmapipe-ring-bench` on the host after the VM).")
        w("")
    else:
        rounds = re.findall(r"round (\d+): bare ([\d.]+) Mmsg/s, stages ([\d.]+) Mmsg/s", rtext)
        head = re.search(r"ring-bench: (.*)", rtext)
        over = re.search(r"overhead: (-?[\d.]+)%", rtext)
        w("`rdmapipe-ring-bench -l 0-1 --no-huge -m 256 --no-pci --no-shconf -- -n 20000000 -r 5`, on the host "
          "with no VM running. The same messages move from one lcore to another twice per round, in alternating "
          "order: through two bare loops (mempool get, sequence and payload pattern written, SP/SC ring "
          "bursts of 32, `rte_pause()` when the ring is full or empty, buffers put back untouched), and "
          "through a source stage and a sink stage run by the lcore loop (the same work, plus the loop's "
          "per-stage calls, its done checks and back-pressure holding). "
          + (f"Setup: {head.group(1)}." if head else ""))
        w("")
        if rounds:
            w("| round | bare (Mmsg/s) | stages (Mmsg/s) | time per message, stages / bare |")
            w("|---|---|---|---|")
            for n, b, st in rounds:
                w(f"| {n} | {float(b):.2f} | {float(st):.2f} | {float(b) / float(st):.3f}x |")
            w("")
            mb = statistics.median(float(b) for _, b, _ in rounds)
            ms = statistics.median(float(st) for _, _, st in rounds)
            ov = (mb / ms - 1) * 100
            w("| comparison | bare | stages | overhead | target | met? |")
            w("|---|---|---|---|---|---|")
            w(f"| median message rate | {mb:.2f} Mmsg/s | {ms:.2f} Mmsg/s | {ov:+.1f}% | <= 20% | "
              f"{'yes' if ov <= 20 else '**no**'} |")
            w("")
            w("Between separate runs of the program both figures move by up to 2x (where the ring and the "
              "pool's per-lcore caches land relative to each other's cache lines); within one run the two "
              "sides share that placement, so only their ratio is reported.")
            w("")
            results["ring_bench"] = {"bare_mmsgs": mb, "stages_mmsgs": ms, "overhead_pct": ov}
        else:
            w("The ring bench printed no rounds: " + (rtext.strip().splitlines() or ["(empty)"])[-1])
            w("")

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
        bl.append(f"rdmapipe's 64 B write_imm run posted {f['posts']:,} chains for {f.get('verified', 0):,} messages "
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
    for i in [k for k in CG_ORDER if k in cgi]:
        xs = cgi[i]
        nm = CG_NAMES.get(i, i)
        m = marginal(xs)
        if m and m > 0 and xs[0]["ir"]:
            n = xs[0]["n"]
            fixed = xs[0]["ir"] - m * n
            bl.append(f"Under callgrind, {fixed / 1e6:,.0f} M of the {xs[0]['ir'] / 1e6:,.0f} M instructions of {nm} "
                      f"at -n {n} do not grow with the message count (start-up: EAL, device and memory set-up, "
                      f"teardown); the rest is {m:,.0f} per message"
                      + (f" against ib_write_bw's {pmarg:,.0f}." if pmarg else "."))
        x = xs[0]
        f = x.get("fig") or {}
        if "requester_busy" in f and "responder_busy" in f and x["ir"]:
            if f.get("polling") == "busy":
                bl.append(f"Under valgrind, which runs one thread at a time, the requester lcore of {nm} was on the "
                          f"CPU {f['requester_busy']}% and its responder lcore {f['responder_busy']}% of the data-path "
                          "time: a polling lcore keeps polling for as long as it holds the CPU, so a busy-polling "
                          "count depends on valgrind's scheduling as much as on work per message. A count with each "
                          "lcore on its own CPU, as in a real run, is not something valgrind can give; `--poll "
                          "adaptive` makes an idle lcore sleep instead, which is why the target is judged on it.")
            elif "requester_sleeps" in f:
                bl.append(f"With {nm} under valgrind, the requester lcore was on the CPU {f['requester_busy']}% and "
                          f"the responder lcore {f['responder_busy']}% of the data-path time; they slept "
                          f"{f['requester_sleeps']:,} and {f.get('responder_sleeps', 0):,} times (at most 1 ms each) "
                          "instead of polling, and those sleeps cost no instructions.")
        if x["threads"] and x["ir"] and x.get("req_ir"):
            pct = lambda v: f"{100 * v / x['ir']:.1f}%"
            bl.append(f"In {nm} at -n {x['n']}, the requester thread counted {pct(x['req_ir'])} of "
                      f"the process's instructions ({x['req_ir'] / x['n']:,.0f} per message), the responder (main) "
                      f"thread {pct(x.get('rsp_ir', 0))} (EAL start-up and teardown included) and "
                      f"the other threads {pct(x['ir'] - x['req_ir'] - x.get('rsp_ir', 0))}.")
    if cg:
        for i in ([CG_PERFTEST_ID] if pxs else []) + [k for k in CG_ORDER if k in cgi]:
            xs = cgi[i]
            if len(xs) >= 2 and xs[0]["ir"] and xs[1]["ir"] and xs[1]["ir"] <= xs[0]["ir"]:
                bl.append(f"{CG_NAMES.get(i, i)}: the two callgrind runs counted {xs[0]['ir'] / xs[0]['n']:,.0f} and "
                          f"{xs[1]['ir'] / xs[1]['n']:,.0f} Ir per message (-n {xs[0]['n']} and {xs[1]['n']}): the longer "
                          "run counted fewer instructions in all, so its polling loop spun for different lengths of "
                          "time; single callgrind figures of polling programs are uncertain by about that much.")
    ot = next((i for i in CG_ORDER if i in obj_tables), None)
    if ot:
        tot, objs = obj_tables[ot]
        verbs = sum(v[1] for o, v in objs.items() if "rxe" in o or "ibverbs" in o)
        allm = sum(v[1] for v in objs.values())
        if allm > 0:
            bl.append(f"Of the per-message instructions without start-up of {CG_NAMES.get(ot, ot)}, "
                      f"{100 * verbs / allm:.0f}% are in libibverbs and the rxe provider (posting and polling, "
                      "including empty polls).")
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
            if r["case"] == "callgrind":
                name = f"callgrind: {CG_NAMES.get(r['id'], '`' + r['id'] + '`')} -n {r['count']}"
            else:
                name = "`" + (label(r) if r["cmd"] and not r["cmd"].startswith("(") else r["id"]) + "`"
            w(f"| {r['round']} | {name} | "
              f"{(r.get('why') or '?').replace('|', '/')} |")
        w("")

    # Sections written by hand or by other tools into the same file (the analysis of both ends; tools/qp-share's, tools/bench-qps's, tools/bench-loss's,
    # tools/ab's, tools/bench-metrics's, tools/bench-perftest's, the receive burst's) are kept.
    if os.path.exists(out):
        with open(out, errors="replace") as f:
            old = f.read()
        for heading in ("## Both ends, per message", "## QP sharing", "## QP scaling", "## Goodput under loss",
                        "## A/B of two builds", "## Soak", "## Metrics on and off", "## perftest's command lines",
                        "## The receive burst"):
            at = old.find("\n" + heading)
            if at >= 0:
                nxt = old.find("\n## ", at + 1)
                md.append(old[at + 1:nxt if nxt >= 0 else len(old)].rstrip("\n"))
                md.append("")
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
