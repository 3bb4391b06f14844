/* The summary's lines of its parts: the head (devices, the shape the flows share,
 * posting and polling), a line per flow and per stage, each flow's errors, lanes'
 * figures, a ping-pong's latency and the first bad message. */
#include "control/shape_report.h"
#include "control/report.h"
#include "pipeline/stage_kind.h"

#include <cinttypes>
#include <cstring>

namespace rp {

namespace {

/* A reliable write_imm flow sends here: its retransmissions carry two SGEs. */
bool rel_writes_here(const Graph &g)
{
	for (const auto &f : g.flows)
		if (f->reliable() && f->tx && f->params.verb == Verb::write_imm && f->params.post_api == PostApi::wr)
			return true;
	return false;
}

/* Each QP's window, the flow's shared one, or both (write_imm's slots under a flow window). */
std::string window_str(const FlowParams &o)
{
	if (o.flow_window == 0)
		return "window " + std::to_string(o.slots);
	const std::string flow = "window " + std::to_string(o.flow_window) + " over the flow's QPs";
	return qp_credit(o) ? flow + ", " + std::to_string(o.slots) + " per QP" : flow;
}

/* The flows' windows: one phrase when they agree, else each flow's. */
std::string windows_str(const Graph &g)
{
	const std::string first = window_str(g.flows[0]->params);
	std::string each = "windows";
	bool same = true;
	for (const auto &f : g.flows) {
		const std::string w = window_str(f->params);
		same &= w == first;
		each += (&f == &g.flows[0] ? " " : ", ") + f->conf->name + w.substr(strlen("window"));
	}
	return same ? first : each;
}

/* A stage: its messages and bursts, what its kind says of it, its cost. */
void print_stage(Report &out, const GraphStage &s)
{
	const StageStats &st = s.st.st;
	out.put("  stage %-13s %s on lcore %u: %" PRIu64 " messages in %" PRIu64 " bursts", (s.conf->name + ":").c_str(),
	        s.conf->kind->name, s.lcore->lcore, st.msgs, st.bursts);
	out.put("%s; %" PRIu64 " calls", stage_describe(s).c_str(), st.calls);
	if (s.lcore->loop.count_cycles)
		out.put(", %.1f cycles per message", st.msgs ? static_cast<double>(st.cycles) / static_cast<double>(st.msgs) : 0.0);
	out.put("\n");
}

} // namespace

/* A ping-pong's errors and failures, when the run has several flows (one flow's are
 * the run's). */
void detail_pingpong(Report &out, const GraphFlow &f, bool several)
{
	if (!several)
		return;
	const std::string name = "flow " + f.conf->name;
	print_wc_errors(out, (name + " ping").c_str(), f.ping.c.wc_errors);
	print_wc_errors(out, (name + " echo").c_str(), f.pong.c.wc_errors);
	for (const PingPong *pp : {&f.ping, &f.pong})
		if (pp->c.fail_reason)
			out.put("  %s %s failed: %s\n", name.c_str(), pp->echo ? "echo" : "ping", pp->c.fail_reason);
}

/* A requester's and a responder's errors and failures, when the run has several flows. */
void detail_ends(Report &out, const GraphFlow &f, bool several)
{
	if (!several)
		return;
	const std::string name = "flow " + f.conf->name;
	print_wc_errors(out, (name + " requester").c_str(), f.requester.c.wc_errors);
	print_wc_errors(out, (name + " responder").c_str(), f.responder.c.wc_errors);
	if (f.requester.c.fail_reason)
		out.put("  %s requester failed: %s\n", name.c_str(), f.requester.c.fail_reason);
	if (f.responder.c.fail_reason)
		out.put("  %s responder failed: %s\n", name.c_str(), f.responder.c.fail_reason);
	if (f.responder.c.held_overflow)
		out.put("  %s receiver:    %" PRIu64 " beyond the window\n", name.c_str(), f.responder.c.held_overflow);
}

/* Under a flow with lanes, seed 002's figures: how the QPs were shared, each lane's
 * work and CPU per message, and the completions the lanes handed each other. */
void detail_lanes(Report &out, const GraphFlow &f, bool)
{
	const size_t nl = f.lanes.size();
	if (f.share_qps)
		out.put("  QP sharing:          %u QPs shared by %zu lcores (each posts to every QP; one send CQ, polled by all, "
		        "completions handed to their lane through rings)\n", f.params.qps, nl);
	else
		out.put("  QP sharing:          none: %u QPs split over %zu lcores (%zu each, a send CQ each)\n", f.params.qps, nl,
		        f.params.qps / nl);
	uint64_t completed = 0, handed = 0;
	double cpu = 0;
	for (const auto &ln : f.lanes) {
		const RequesterCounters &c = ln->requester.c;
		const double lane_cpu = ln->lcore->cpu_s;
		out.put("  lane on lcore %-3u    sent %" PRIu64 ", completed %" PRIu64 ", verified %" PRIu64 ", handed over %" PRIu64
		        ", handed in %" PRIu64 ", CPU %.3f s (%.0f ns/msg)\n", ln->lcore->lcore, c.sent, c.completed, lane_verified(f, ln->requester),
		        c.handed_over, c.handed_in, lane_cpu, c.completed ? lane_cpu * 1e9 / static_cast<double>(c.completed) : 0.0);
		print_wc_errors(out, ("lane " + std::to_string(ln->lcore->lcore)).c_str(), c.wc_errors);
		if (c.fail_reason)
			out.put("  lane lcore %u failed: %s\n", ln->lcore->lcore, c.fail_reason);
		completed += c.completed;
		handed += c.handed_over;
		cpu += lane_cpu;
	}
	out.put("  CPU per message:     %.0f ns (the lanes' lcores' CPU time / messages)\n",
	        completed ? cpu * 1e9 / static_cast<double>(completed) : 0.0);
	out.put("  completions handed between lanes: %" PRIu64 "\n", handed);
}

/* A ping-pong's first bad message: the echoing side sees a bad ping first. */
bool first_bad_pingpong(Report &out, const GraphFlow &f, const std::string &who)
{
	for (const PingPong *pp : {&f.pong, &f.ping}) {
		const ResponderCounters &b = pp->c;
		if (b.first_bad_seq == UINT64_MAX)
			continue;
		out.put("  first bad message:   %sQP %u seq %" PRIu64 " at the %s side", who.c_str(), b.first_bad_qp,
		        b.first_bad_seq, pp->echo ? "echoing" : "pinging");
		if (b.first_bad_offset >= 0)
			out.put(", byte %" PRId64 " differs from the pattern", b.first_bad_offset);
		out.put("\n");
		return true;
	}
	return false;
}

/* A lane's read result that did not check out. */
bool first_bad_lanes(Report &out, const GraphFlow &f, const std::string &who)
{
	for (const auto &ln : f.lanes)
		if (ln->requester.c.first_bad_seq != UINT64_MAX) {
			out.put("  first bad message:   %slane on lcore %u, QP %u seq %" PRIu64 "\n", who.c_str(), ln->lcore->lcore,
			        ln->requester.c.first_bad_qp, ln->requester.c.first_bad_seq);
			return true;
		}
	return false;
}

/* The responder's first bad message, else the requester's (a read result or an
 * atomic's return value). */
bool first_bad_ends(Report &out, const GraphFlow &f, const std::string &who)
{
	const ResponderCounters &v = f.responder.c;
	const RequesterCounters &q = f.requester.c;
	if (v.first_bad_seq == UINT64_MAX && q.first_bad_seq == UINT64_MAX)
		return false;
	const bool rsp = v.first_bad_seq != UINT64_MAX;
	const uint64_t seq = rsp ? v.first_bad_seq : q.first_bad_seq;
	const uint32_t qp = rsp ? v.first_bad_qp : q.first_bad_qp;
	const int64_t off = rsp ? v.first_bad_offset : q.first_bad_offset;
	if (off >= 0)
		out.put("  first bad message:   %sQP %u seq %" PRIu64 ", byte %" PRId64 " differs from the pattern\n",
		        who.c_str(), qp, seq, off);
	else if (verb_is_atomic(f.params.verb) && rsp)   // the responder judges a QP's word at the end
		out.put("  first bad message:   %sQP %u: its word ended at %" PRIu64 ", not what its atomics make\n",
		        who.c_str(), qp, seq);
	else if (verb_is_atomic(f.params.verb))
		out.put("  first bad message:   %sQP %u seq %" PRIu64 " returned a wrong value\n", who.c_str(), qp, seq);
	else
		out.put("  first bad message:   %sQP %u seq %" PRIu64 "\n", who.c_str(), qp, seq);
	return true;
}

/* Where a flow with lanes goes: from their lcores. */
std::string lanes_ends(const GraphFlow &f)
{
	std::string ends = "lanes on lcores ";
	for (const auto &ln : f.lanes)
		ends += (ln == f.lanes[0] ? "" : ",") + std::to_string(ln->lcore->lcore);
	if (f.rx_stage)   // the far end's memory is checked at the end there
		return ends + " -> a passive far end, checked by lcore " + std::to_string(f.rx->lcore);
	return ends + " -> a passive far end";
}

/* Devices, the pipeline, the shape the flows share, how QPs were connected, posted
 * and polled. */
void print_header(Report &out, const PipelineConf &c, const Graph &g, const Totals &x)
{
	const GraphFlow &f0 = *g.flows[0];
	const FlowParams &o0 = f0.params;
	const std::string in_flows = g.flows.size() > 1 ? " in " + std::to_string(g.flows.size()) + " flows" : "";
	for (const GraphDevice &d : g.devs)
		out.put("  device:              %s port %u, GID index %d, MTU %s\n", d.dev->name.c_str(), d.dev->port,
		        d.dev->gid_index, mtu_str(d.dev->port_attr.active_mtu));
	out.put("  pipeline:            %s: %zu flow%s, %zu stages on %zu lcores\n", c.file.c_str(), g.flows.size(),
	        g.flows.size() > 1 ? "s" : "", g.stages.size(), g.lcores.size());
	if (x.same && x.npingpong == g.flows.size())
		out.put("  mode:                ping-pong, %s, %u B, %u QP%s each way%s, one message in flight on each, signal every %u, "
		        "send queue %u\n", verb_opcode_name(o0.verb), o0.msg_bytes, x.qps, x.qps > 1 ? "s" : "", in_flows.c_str(),
		        o0.signal_every, o0.sq_depth);
	else if (x.same)
		out.put("  verb:                %s, %u B, %u QP%s%s, batch %u, signal every %u, send queue %u, %s\n",
		        verb_opcode_name(o0.verb), o0.msg_bytes, x.qps, x.qps > 1 ? "s" : "", in_flows.c_str(), o0.batch,
		        o0.signal_every, o0.sq_depth, windows_str(g).c_str());
	for (const auto &f : g.flows) {   // two hosts: which end this is
		if (!f->remote)
			continue;
		const Device &dev = *f->end_here()->dev;
		out.put("  role:                %s%s (%s) %s %s, %s port %u, GID index %d\n",
		        g.flows.size() > 1 ? ("flow " + f->conf->name + ": ").c_str() : "", f->listens() ? "server" : "client",
		        f->serves() ? "responder" : "requester", f->listens() ? "on" : "of", f->remote->addr.str.c_str(),
		        dev.name.c_str(), dev.port, dev.gid_index);
	}
	for (const auto &f : g.flows)   // each flow's pairs: through rdma_cm (each its own port), or directly
		out.put("  connected:           %s%s\n", g.flows.size() > 1 ? ("flow " + f->conf->name + ": ").c_str() : "",
		        connected_of(*f).c_str());
	out.put("  completions:         %s\n", cq_ops_str(f0.end_here()->ops));
	if (x.npingpong == g.flows.size())
		out.put("  posting:             one ibv_post_send per message%s\n", f0.ping.p.inline_send ? ", inline" : "");
	else
		out.put("  posting:             %s%s%s%s\n", g.use_wr ? "ibv_qp_ex (ibv_wr_start .. ibv_wr_complete)" : "chained ibv_post_send",
		        o0.inline_send ? ", inline" : "", o0.fence ? ", fenced chains" : "",
		        rel_writes_here(g) ? "; retransmitted writes (two SGEs) through ibv_post_send" : "");
	if (o0.rate_pps > 0)
		out.put("  rate limit:          %.0f msg/s per flow (paced by %s)\n", o0.rate_pps,
		        f0.params.tx_gen_stage ? "its gen stages" : "the requester");
}

/* Why a flow failed, as its roles (or its connections) said it first: "" if none did. */
std::string flow_failure(const GraphFlow &f)
{
	for (const char *why : {f.requester.c.fail_reason, f.responder.c.fail_reason, f.ping.c.fail_reason, f.pong.c.fail_reason})
		if (why)
			return why;
	return f.remote ? f.remote->why : std::string();
}

/* A line per flow (its lanes, its errors), then the stages that are not RDMA roles. */
void print_flows(Report &out, const Graph &g, const Totals &x)
{
	for (size_t i = 0; i < g.flows.size(); i++) {
		const GraphFlow &f = *g.flows[i];
		const FlowTally &ft = x.t[i];
		std::string tail = f.fed ? " (sends what its ring brings)"
				   : f.params.rate_pps > 0 ? ", at " + std::to_string(static_cast<uint64_t>(f.params.rate_pps)) + " msg/s" : "";
		if (ft.failed_qps)
			tail += ", failed QPs " + std::to_string(ft.failed_qps);
		const ShapeReport &r = shape_report(f);
		const std::string ends = r.ends(f);
		out.put("  flow %-14s %s, %u B, %u QP%s, %s: sent %" PRIu64 ", completed %" PRIu64 ", received %" PRIu64
		        ", verified %" PRIu64 "%s\n",
		        (f.conf->name + ":").c_str(), verb_opcode_name(f.params.verb), f.params.msg_bytes, f.params.qps, f.params.qps > 1 ? "s" : "",
		        ends.c_str(), ft.sent, ft.completed, ft.delivered, ft.verified, tail.c_str());
		r.detail(out, f, g.flows.size() > 1);
	}
	/* The RDMA stages' work is in the flow lines; their cost too when cycles are counted. */
	for (const auto &s : g.stages)
		if (!s->conf->kind->needs_io ||
		    s->lcore->loop.count_cycles)
			print_stage(out, *s);
}

/* perftest's lat tests print the same figures, of half round trips. */
void print_pingpong(Report &out, const GraphFlow &f, bool named)
{
	const Histogram &h = *f.hist;
	const std::string n = named ? " (" + f.conf->name + ")" : "";
	auto line = [&](const char *what, double v) {
		out.put("  %-20s %.2f us\n", ("latency " + std::string(what) + n + ":").c_str(), v);
	};
	auto count = [&](const char *what, uint64_t v, const std::string &tail = "") {
		out.put("  %-20s %" PRIu64 "%s\n", (what + n + ":").c_str(), v, tail.c_str());
	};
	const ResponderCounters &pc = f.ping.c, &ec = f.pong.c;
	const bool until = until_stopped(f.params.duration_s);
	count("iterations", until ? f.ping.sent : f.params.messages,
	      " (round trips over " + std::to_string(f.params.qps) + " QP" + (f.params.qps > 1 ? "s" : "") + (until ? ", until stopped)" : ")"));
	count("pings received", ec.received, " (verified " + std::to_string(ec.verified) + ")");
	count("echoes received", pc.received);
	count("echoes verified", pc.verified);
	const double secs = pc.end_tsc > pc.start_tsc ? tsc_to_s(pc.end_tsc - pc.start_tsc) : 0;
	out.put("  %-20s %.0f /s\n", ("round trips" + n + ":").c_str(), secs > 0 ? static_cast<double>(pc.received) / secs : 0.0);
	out.put("  %-20s %" PRIu64 " (half round trips: one iteration per QP, post to post, / 2; %u QP%s, one message in flight on each)\n",
	        ("latency samples" + n + ":").c_str(), h.count(), f.params.qps, f.params.qps > 1 ? "s" : "");
	line("min", us(h.min()));
	line("median", us(h.percentile(0.5)));
	line("average", h.mean() / 1000.0);
	line("p90", us(h.percentile(0.90)));
	line("p99", us(h.percentile(0.99)));
	line("p99.9", us(h.percentile(0.999)));
	line("max", us(h.max()));
}

/* The first message that did not check out, of the first flow that had one. */
void print_first_bad(Report &out, const Graph &g)
{
	for (const auto &f : g.flows) {
		const std::string who = g.flows.size() > 1 ? "flow " + f->conf->name + " " : "";
		if (shape_report(*f).first_bad(out, *f, who))
			return;
	}
}

} // namespace rp
