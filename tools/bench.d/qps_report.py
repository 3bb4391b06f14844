#!/usr/bin/env python3
"""tools/bench-qps's report: the medians of RUN_DIR/runs.tsv per verb, receive queue kind
(the SRQ, or per-QP queues) and QP count, a
PNG (docs/img/qp-scaling.png) and the "## QP scaling" section of OUT.md (replaced in
place, or appended; tools/bench keeps it when it rewrites the file).

    qps_report.py RUN_DIR OUT.md COMMAND
"""
import csv
import os
import re
import statistics
import sys

HEADING = "## QP scaling on one lcore pair (tools/bench-qps)"
TARGET = 0.8   # 1024 QPs at >= 0.8x the rate of 1 QP


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def recv_posts(d, r):
    """Receive post calls of one run (its summary's srq posts or receive posts line)."""
    names = [f"r{r['round']}-{r['verb']}-{r['rq']}-{r['qps']}.out", f"r{r['round']}-{r['verb']}-{r['qps']}.out"]
    for n in names:
        p = os.path.join(d, n)
        if os.path.exists(p):
            m = re.search(r"^  (?:srq|receive) posts: +([0-9]+)", open(p, errors="replace").read(), re.M)
            return float(m.group(1)) if m else None
    return None


def load(d):
    rows = []
    with open(os.path.join(d, "runs.tsv")) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            r["qps"] = int(r["qps"])
            r["rq"] = r.get("rq") or "srq"   # runs before --recv-queue: the SRQ
            r["srq"] = r.get("receives", r.get("srq"))
            r["posts"] = recv_posts(d, r)
            r["ok"] = r["rc"] == "0" and num(r["rate_mmsg"]) is not None
            for k in ("rate_mmsg", "cpu_ns", "rss_kib", "srq", "rx_buffers", "rx_buffer_bytes", "window", "flow_window"):
                r[k] = num(r.get(k))
            # Receive memory registered: the receive pool's buffers (send), and the
            # windows the writes land in (write_imm: QPs x window x 64 B).
            r["rx_buf"] = (r["rx_buffers"] or 0) * (r["rx_buffer_bytes"] or 0)
            r["rx_win"] = r["qps"] * r["window"] * 64 if r["verb"] == "write_imm" and r["window"] else 0
            r["rx_bytes"] = r["rx_buf"] + r["rx_win"]
            rows.append(r)
    return rows


RQ_NAME = {"srq": "SRQ", "qp": "per-QP RQs"}


def summarize(rows):
    """{"send, SRQ": {qps: figures}, "send, per-QP RQs": ..., ...}"""
    out = {}
    series = sorted({(r["verb"], r["rq"]) for r in rows}, key=lambda s: (s[0] != "send", s[0], s[1] != "srq"))
    for verb, rq in series:
        per = {}
        for q in sorted({r["qps"] for r in rows if r["verb"] == verb and r["rq"] == rq}):
            rs = [r for r in rows if r["verb"] == verb and r["rq"] == rq and r["qps"] == q]
            ok = [r for r in rs if r["ok"]]
            per[q] = dict(runs=len(rs), ok=len(ok), rate=med([r["rate_mmsg"] for r in ok]),
                          cpu=med([r["cpu_ns"] for r in ok]), rss=med([r["rss_kib"] for r in ok]),
                          srq=med([r["srq"] for r in ok]), rxn=med([r["rx_buffers"] for r in ok]),
                          rx=med([r["rx_bytes"] for r in ok]), window=med([r["window"] for r in ok]),
                          rx_buf=med([r["rx_buf"] for r in ok]), rx_win=med([r["rx_win"] for r in ok]),
                          flow_window=med([r["flow_window"] for r in ok]),
                          posts=med([r["posts"] for r in ok]),
                          fitted=any(r["fitted"] not in ("", "0") for r in ok),
                          rates=[r["rate_mmsg"] if r["ok"] else None for r in rs])
        out[f"{verb}, {RQ_NAME.get(rq, rq)}"] = per
    return out


def plot(summary, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
    verbs = []
    for verb, per in summary.items():
        v = verb.split(",")[0]
        verbs += [v] if v not in verbs else []
        col = f"C{verbs.index(v)}"
        per_qp = "per-QP" in verb
        qs = [q for q in per if per[q]["rate"] is not None]
        base = per.get(min(per), {}).get("rate")
        ls = "--" if per_qp else "-"
        ax[0].plot(qs, [per[q]["rate"] / base if base else None for q in qs], "o" + ls, color=col, label=verb)
        ax[1].plot(qs, [per[q]["cpu"] for q in qs], "o" + ls, color=col, label=verb)
        ax[2].plot(qs, [per[q]["rx"] / 1024 for q in qs], "o" + ls, color=col, label=f"{verb}: receive memory")
        ax[2].plot(qs, [per[q]["rss"] / 1024 for q in qs], "s" + ls, color=col, alpha=0.4, label=f"{verb}: peak RSS (MiB)")
    ax[0].axhline(TARGET, color="grey", lw=0.8, ls=":")
    ax[0].set_title("message rate / rate at 1 QP")
    ax[1].set_title("CPU per message (ns, both lcores)")
    ax[2].set_title("receive memory (KiB) and RSS (MiB)")
    for a in ax:
        a.set_xscale("log", base=2)
        a.set_xlabel("QPs on one lcore pair")
        a.grid(True, alpha=0.3)
        a.legend(fontsize=7)
    ax[2].set_yscale("log")
    fig.tight_layout()
    os.makedirs(os.path.dirname(png), exist_ok=True)
    fig.savefig(png, dpi=90)


def receive_verdict(verb, q0, lo, q1, hi):
    """Whether the receive side stays flat from q0 to q1 QPs, and what keeps it from it."""
    grows = hi["srq"] / lo["srq"]
    text = (f"{verb}: receives posted {lo['srq']:,.0f} at {q0} QP, {hi['srq']:,.0f} at {q1} ({grows:.1f}x); "
            f"receive buffers {lo['rx_buf'] / 1024:,.0f} KiB, {hi['rx_buf'] / 1024:,.0f} KiB")
    if hi["rx_win"]:
        text += f"; write windows {lo['rx_win'] / 1024:,.0f} KiB, {hi['rx_win'] / 1024:,.0f} KiB"
    if hi["flow_window"]:
        text += (f": the {q1} QPs share a flow window of {hi['flow_window']:.0f} messages, credited once for the flow, "
                 "which is what the SRQ holds at every QP count")
        if hi["rx_win"] > 1.5 * lo["rx_win"]:
            text += (f"; the write windows still grow, each QP keeping {hi['window']:.0f} slots of its own (a sender "
                     "must not rewrite a slot before the receiver checked it: one-sided writes need per-QP targets)")
    elif grows > 1.5 and hi["window"]:
        text += (f": every QP keeps a window of {hi['window']:.0f} messages (the default is 1024 / QPs but at least "
                 "a batch, so a chain fits it) and its receives are posted for all of them"
                 + (" (per-QP receive queues take no flow window)" if "per-QP" in verb else ""))
    return text


def section(summary, d, command):
    commit = open(os.path.join(d, "commit")).read().strip() if os.path.exists(os.path.join(d, "commit")) else "?"
    w = []
    w.append(HEADING)
    w.append("")
    w.append(f"`{command}` on repository {commit} (it boots the VM itself). One process, rdma_tx on lcore 1 and "
             "rdma_rx on lcore 0 of the 2-vCPU guest, one flow of 64 B messages over N QPs of rxe0, the builder's "
             "defaults (where they would not fit the device, fitted: a budget of outstanding WRs for the send CQ, "
             "smaller windows for the receive queues; docs/configuration.md), every message verified, once with the "
             "lcore's SRQ (`--recv-queue srq`, the default: from 33 QPs up the flow's QPs share a flow window of 1024 "
             "messages, credited once for the flow, which the SRQ holds) and once with a receive queue per QP "
             "(`--recv-queue qp`: each QP keeps its window and an eighth, refilled per QP). `send` takes a receive "
             "and a buffer from the receive pool per message; `write_imm` takes a receive "
             "without a buffer, its payload landing in the receiver's window (QPs x window x 64 B, per QP under a flow "
             "window too: a slot is not rewritten before the receiver checked it). The QP counts "
             "and the receive queue kinds interleave within each round; figures are medians of the rounds. CPU per message is both lcores' CPU "
             "time over the messages: both busy-poll, so it follows the wall clock rather than the work.")
    w.append("")
    w.append("![QP scaling](img/qp-scaling.png)")
    w.append("")
    w.append("| verb, receive queues | QPs | Mmsg/s | / 1 QP | CPU ns/msg | peak RSS MiB | sizes fitted to the device | window per QP | "
             "flow window | receives posted | receive post calls | receive buffers | receive buffer KiB | write windows KiB | runs passed |")
    w.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    verdicts = []
    for verb, per in summary.items():
        base = per.get(min(per), {}).get("rate")
        for q, x in per.items():
            ratio = x["rate"] / base if x["rate"] is not None and base else None
            f = lambda v, spec: (spec.format(v) if v is not None else "—")
            w.append(f"| {verb} | {q} | {f(x['rate'], '{:.4f}')} | {f(ratio, '{:.2f}x')} | {f(x['cpu'], '{:,.0f}')} | "
                     f"{f(x['rss'] / 1024 if x['rss'] else None, '{:.1f}')} | {'yes' if x['fitted'] else 'no'} | "
                     f"{f(x['window'], '{:.0f}')} | {f(x['flow_window'], '{:.0f}')} | {f(x['srq'], '{:,.0f}')} | "
                     f"{f(x['posts'], '{:,.0f}')} | {f(x['rxn'], '{:,.0f}')} | "
                     f"{f(x['rx_buf'] / 1024 if x['rx_buf'] is not None else None, '{:,.0f}')} | "
                     f"{f(x['rx_win'] / 1024 if x['rx_win'] is not None else None, '{:,.0f}')} | {x['ok']} of {x['runs']} |")
        top = max(per)
        if top >= 1024 and base and per[top]["rate"]:
            r = per[top]["rate"] / base
            verdicts.append(f"{verb}: {top} QPs at {r:.2f}x the rate of 1 QP (target >= {TARGET}x: "
                            f"{'met' if r >= TARGET else '**not met**'})")
        lo = per[min(per)]
        if lo["srq"] and per[top]["srq"]:
            verdicts.append(receive_verdict(verb, min(per), lo, top, per[top]))
    for verb, per in summary.items():   # per-QP queues against the SRQ, at each QP count
        if "per-QP" not in verb:
            continue
        srq = summary.get(verb.replace("per-QP RQs", "SRQ"))
        if not srq:
            continue
        pairs = [(q, per[q]["rate"] / srq[q]["rate"]) for q in per
                 if q in srq and per[q]["rate"] and srq[q]["rate"]]
        if pairs:
            top = max(q for q, _ in pairs)
            calls = ""
            if per[top]["posts"] and srq[top]["posts"]:
                # What the per-QP queues cost: a repost per QP per eighth of its window.
                calls = (f"; at {top} QPs they took {per[top]['posts']:,.0f} receive post calls against the SRQ's "
                         f"{srq[top]['posts']:,.0f} (each QP reposts an eighth of its window of {per[top]['window']:.0f}, "
                         f"the SRQ an eighth of all windows at once)")
            verdicts.append(f"{verb.split(',')[0]}: per-QP receive queues at " +
                            ", ".join(f"{r:.2f}x ({q} QPs)" for q, r in pairs) + " the SRQ's rate" + calls)
    w.append("")
    w.append("Each round's rate (Mmsg/s): " + "; ".join(
        f"{verb} {q} QPs: " + " / ".join(f"{v:.4f}" if v is not None else "failed" for v in x["rates"])
        for verb, per in summary.items() for q, x in per.items()) + ".")
    w.append("")
    for v in verdicts:
        w.append(f"- {v}")
    w.append("")
    return "\n".join(w)


def main():
    d, out, command = sys.argv[1], sys.argv[2], sys.argv[3]
    summary = summarize(load(d))
    png = os.path.join(os.path.dirname(os.path.abspath(out)), "img", "qp-scaling.png")
    plot(summary, png)
    text = section(summary, d, command)
    old = open(out).read() if os.path.exists(out) else ""
    at = old.find("\n" + HEADING.split(" (")[0])
    if at >= 0:
        nxt = old.find("\n## ", at + 1)
        new = old[:at + 1] + text + ("\n" + old[nxt + 1:] if nxt >= 0 else "")
    else:
        new = old.rstrip("\n") + "\n\n" + text
    with open(out + ".tmp", "w") as f:
        f.write(new)
    os.replace(out + ".tmp", out)
    print(text)
    failed = sum(x["runs"] - x["ok"] for per in summary.values() for x in per.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
