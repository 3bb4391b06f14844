#include "control/graph_report.h"

#include "control/report.h"
#include "engine/verbs_ops.h"
#include "stages/stage_kind.h"

#include <rte_cycles.h>

#include <algorithm>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace rp {

namespace {

/* What each flow delivered and how much of it checked out. What "verified" means
 * depends on the verb: the responder checks what it receives (its header, and its
 * payload unless a verify stage downstream does); the requester checks read results
 * and atomic return values; plain writes are acknowledged, then checked by the
 * window's final state. */
struct FlowTally {
	uint64_t sent = 0, completed = 0, delivered = 0, verified = 0, failed_qps = 0, errors = 0, data_errors = 0;
	bool ok = false;
	bool unobserved = false;   // a two-host server of a one-sided verb: nothing arrives that it sees
};

/* A ping-pong: pings sent, echoes back and checked; the echoing side checked each ping. */
FlowTally tally_pingpong(const GraphFlow &f)
{
	const ResponderCounters &pc = f.ping.c, &ec = f.pong.c;
	FlowTally t;
	if (f.remote) {   // one side here: the pings and their echoes, or the echoes of the client's pings
		const bool echo = f.remote->server;
		const PingPong &pp = echo ? f.pong : f.ping;
		const Stage &st = echo ? *f.rx_stage : *f.tx_stage;
		t.sent = echo ? f.o.messages : f.ping.sent;
		t.completed = t.delivered = pp.c.received;
		t.verified = pp.c.verified;
		t.errors = pp.c.wc_errors.total;
		t.failed_qps = t.errors ? 1 : 0;
		t.data_errors = pp.c.payload_errors;
		t.ok = st.done.load() && st.rc == 0 && t.sent == f.o.messages && t.completed == t.sent && t.verified == t.sent &&
		       t.errors == 0 && t.data_errors == 0 && (echo || (f.hist->count() == f.o.messages && f.remote->why.empty()));
		return t;
	}
	t.sent = f.ping.sent;
	t.completed = pc.received;
	t.delivered = ec.received;
	t.verified = std::min(pc.verified, ec.verified);
	t.errors = pc.wc_errors.total + ec.wc_errors.total;
	t.failed_qps = t.errors ? 1 : 0;
	t.data_errors = pc.payload_errors + ec.payload_errors;
	const bool done = f.tx_stage->done.load() && f.tx_stage->rc == 0 && f.rx_stage->done.load() && f.rx_stage->rc == 0;
	t.ok = done && t.sent == f.o.messages && t.completed == t.sent && t.delivered == t.sent && t.verified == t.sent &&
	       t.errors == 0 && t.data_errors == 0 && f.hist->count() == f.o.messages;
	return t;
}

/* What the stages before a fed flow's rdma_tx put on its ring. */
uint64_t ring_brought(const GraphFlow &f, const Graph &g)
{
	uint64_t n = 0;
	for (const auto &s : g.stages)
		if (s->flow == &f && stage_kind(s->conf->kind).end == FlowEnd::requester)
			for (const auto &r : g.rings)
				if (r->conf->name == s->conf->inputs[0])
					for (const GraphStage *p : r->producers)
						n += p->st.st.msgs;
	return n;
}

/* Lanes: what each lane's requester posted and checked (READs check their results). */
FlowTally tally_lanes(const GraphFlow &f)
{
	FlowTally t;
	bool done = true;
	for (const auto &ln : f.lanes) {
		const RequesterCounters &c = ln->q.c;
		t.sent += c.sent;
		t.completed += c.completed;
		t.verified += c.verified;
		t.failed_qps += c.failed_qps;
		t.errors += c.wc_errors.total;
		t.data_errors += c.result_errors;
		done &= ln->stage->st.done.load() && ln->stage->st.rc == 0;
	}
	t.delivered = t.completed;
	const bool count_ok = f.o.duration_s > 0 || t.sent == f.o.messages;
	t.ok = done && count_ok && t.verified == t.sent && t.errors == 0 && t.data_errors == 0;
	return t;
}

/* A two-host flow's end here. The client: what it posted and what completed, read
 * results and atomic return values checked (the server checks the rest). The server:
 * what arrived of what the client announced, or for one-sided verbs, which it does not
 * see, the window's or words' final state; nothing else is observed here. */
FlowTally tally_remote(const GraphFlow &f)
{
	const RemoteEnd &e = *f.remote;
	const Verb verb = f.o.verb;
	const bool self_checked = verb_info(verb).self_checked;
	FlowTally t;
	if (!e.server) {
		const RequesterCounters &c = f.q.c;
		t.sent = c.sent;
		t.completed = t.delivered = c.completed;
		t.verified = self_checked ? c.verified : 0;
		t.failed_qps = c.failed_qps;
		t.errors = c.wc_errors.total;
		t.data_errors = c.result_errors;
		const bool count_ok = e.duration ? e.counts_written + t.failed_qps == f.o.qps : t.sent == f.o.messages;
		t.ok = f.tx_stage->done.load() && f.tx_stage->rc == 0 && count_ok && t.completed == t.sent && t.errors == 0 &&
		       t.data_errors == 0 && (!self_checked || t.verified == t.sent) && e.why.empty();
		return t;
	}
	const ResponderCounters &c = f.v.c;
	const bool two_sided = verb_consumes_receive(verb);
	unsigned told = 0;   // a duration run: the QPs whose final count came from the client
	t.sent = remote_sent(e, f.o.qps, &told);
	const bool memory_ok = c.payload_errors == 0 && c.fail_reason == nullptr &&
			       ((verb == Verb::write && (c.window_slots_checked > 0 || !f.o.verify)) ||
				(verb_is_atomic(verb) && c.counters_checked == f.o.qps));
	t.completed = t.delivered = two_sided ? c.received : 0;
	t.verified = two_sided ? c.verified : memory_ok ? t.sent : 0;
	for (uint32_t i = 0; i < f.v.nqps; i++)
		t.failed_qps += f.v.qps[i].failed;
	t.errors = c.wc_errors.total;
	t.data_errors = c.payload_errors;
	t.unobserved = !two_sided;
	t.ok = f.rx_stage->done.load() && f.rx_stage->rc == 0 && told == f.o.qps && t.errors == 0 && t.data_errors == 0 &&
	       (two_sided ? t.delivered == t.sent && t.verified == t.sent : !verb_info(verb).responder_checks || memory_ok);
	return t;
}

FlowTally tally(const GraphFlow &f, const Graph &g)
{
	if (f.pingpong)
		return tally_pingpong(f);
	if (f.remote)
		return tally_remote(f);
	if (!f.lanes.empty())
		return tally_lanes(f);
	const Requester &q = f.q;
	const Responder &v = f.v;
	const Verb verb = f.o.verb;
	const bool two_sided = verb_consumes_receive(verb);
	FlowTally t;
	t.sent = q.c.sent;
	t.completed = q.c.completed;
	t.delivered = two_sided ? v.c.received : q.c.completed;
	if (two_sided)
		t.verified = v.c.verified;
	else if (verb == Verb::write)
		t.verified = v.c.payload_errors == 0 && (v.c.window_slots_checked || !f.o.verify) ? q.c.completed : 0;
	else
		t.verified = q.c.verified;
	/* Payload errors a verify stage found in this flow's messages (when it sees only this flow's). */
	for (const auto &s : g.stages)
		if (stage_kind(s->conf->kind).checks_payload && s->origins.size() == 1 && s->origins[0] == &f) {
			t.data_errors += s->st.st.payload_errors;
			t.verified -= std::min(t.verified, s->st.st.payload_errors);
		}
	t.failed_qps = q.c.failed_qps;
	t.errors = q.c.wc_errors.total + v.c.wc_errors.total;
	t.data_errors += v.c.payload_errors + q.c.result_errors;
	const bool done = f.tx_stage->done.load() && f.tx_stage->rc == 0 && f.rx_stage->done.load() && f.rx_stage->rc == 0;
	const bool count_ok = f.o.duration_s > 0 || t.sent == (f.o.tx_count_from_input ? ring_brought(f, g) : f.o.messages);
	t.ok = done && count_ok && t.delivered == t.sent && t.verified == t.sent && t.errors == 0 && t.data_errors == 0;
	return t;
}

/* An lcore's stages, by name. */
std::string lcore_stages(const GraphLcore &l)
{
	std::string s;
	for (uint32_t i = 0; i < l.loop.nstages; i++)
		s += (i ? "," : "") + std::string(l.loop.stages[i]->name);
	return s;
}

/* An lcore's roles: "requester", "responder", "requester+responder", or its other
 * stages' kinds. */
std::string lcore_roles(const GraphLcore &l)
{
	std::string r;
	if (!l.requesters.empty() || !l.lanes.empty())
		r = "requester";
	if (!l.responders.empty())
		r += r.empty() ? "responder" : "+responder";
	if (!l.pingers.empty())
		r += r.empty() ? "ping" : "+ping";
	if (!l.echoers.empty())
		r += r.empty() ? "echo" : "+echo";
	if (r.empty())
		for (uint32_t i = 0; i < l.loop.nstages; i++)
			r += (i ? "+" : "") + std::string(l.loop.stages[i]->ops->kind);
	return r;
}

/* Where a flow goes: "lcore 1 -> lcore 2", or to (from) another host. */
std::string ends_of(const GraphFlow &f)
{
	const std::string tx = f.tx ? "lcore " + std::to_string(f.tx->lcore) : f.remote->addr.str + "'s client";
	const std::string rx = f.rx ? "lcore " + std::to_string(f.rx->lcore) : f.remote->addr.str;
	return tx + " -> " + rx;
}

/* How a flow's QP pairs were connected (lanes that own their QPs: each lane's). */
std::string connected_of(const GraphFlow &f)
{
	if (!f.lanes.empty() && !f.share_qps)
		return f.lanes[0]->objs->pairs.connected + " (per lane)";
	return f.objs->pairs.connected;
}

} // namespace

RunView graph_view(const PipelineConf &c, const Graph &g, const std::string &what)
{
	RunView v;
	for (const GraphDevice &d : g.devs) {
		v.device += (v.device.empty() ? "" : ", ") + d.dev->name;
		v.ports.push_back({d.dev->name, d.dev->port, hw_counters_read(d.dev->name, d.dev->port)});
	}
	v.what = what;
	v.tsc_hz = static_cast<double>(rte_get_tsc_hz());
	v.duration_s = c.run.duration_s;
	v.ctl = const_cast<RunControl *>(&g.run);
	for (const auto &fp : g.flows) {
		const GraphFlow &f = *fp;
		if (!f.lanes.empty()) {   // a flow per lane: its messages over the QPs it posts to
			for (const auto &ln : f.lanes) {
				const std::string name = f.conf->name + "@lcore" + std::to_string(ln->lcore->lcore);
				v.flows.push_back({name, ln->q.nqps, f.o.verb, f.o.msg_bytes, f.o.batch, f.o.signal_every,
						   ln->o.duration_s > 0 ? 0 : ln->o.messages, &ln->q.flow_live[0], &ln->q.flow_ctl[0]});
				for (uint32_t k = 0; k < ln->q.nqps; k++)
					v.qps.push_back({name, k, ln->q.qps[k].qp->qp_num, "requester"});
			}
			continue;
		}
		if (f.pingpong) {   // nothing to set: one message in flight per QP
			v.flows.push_back({f.conf->name, f.o.qps, f.o.verb, f.o.msg_bytes, 1, f.o.signal_every, f.o.messages,
					   f.tx ? &f.ping.live : &f.pong.live, nullptr});
			for (uint32_t k = 0; k < f.o.qps; k++) {
				if (f.tx)
					v.qps.push_back({f.conf->name, k, f.ping.qps[k].qp->qp_num, "ping"});
				if (f.rx)
					v.qps.push_back({f.conf->name, k, f.pong.qps[k].qp->qp_num, "echo"});
			}
			continue;
		}
		if (f.rx && !f.tx) {   // a server: what arrives of a requester on another host
			v.flows.push_back({f.conf->name, f.o.qps, f.o.verb, f.o.msg_bytes, f.o.batch, f.o.signal_every, f.o.messages,
					   &f.v.arrived, nullptr});
		} else {
			v.flows.push_back({f.conf->name, f.o.qps, f.o.verb, f.o.msg_bytes, f.o.batch, f.o.signal_every,
					   f.o.duration_s > 0 ? 0 : f.o.messages, &f.q.flow_live[0], &f.q.flow_ctl[0]});
		}
		for (uint32_t k = 0; k < f.o.qps; k++) {
			if (f.tx)
				v.qps.push_back({f.conf->name, k, f.q.qps[k].qp->qp_num, "requester"});
			if (f.rx)
				v.qps.push_back({f.conf->name, k, f.v.qps[k].qp->qp_num, "responder"});
		}
	}
	for (const auto &l : g.lcores) {
		const RoleLive *live = !l->requesters.empty() ? &l->requesters[0]->q.live
				       : !l->responders.empty() ? &l->responders[0]->v.live
				       : !l->lanes.empty() ? &l->lanes[0]->q.live : nullptr;
		v.lcores.push_back({l->lcore, lcore_roles(*l), live});
	}
	for (const auto &f : g.flows)
		if (f->objs->tx_pool)   // a fed flow sends from its ring's pool
			v.pools.push_back({f->conf->name + " send buffers", f->objs->tx_pool});
	for (const auto &l : g.lcores)
		if (l->rx_pool)
			v.pools.push_back({"lcore " + std::to_string(l->lcore) + " receive buffers", l->rx_pool});
	for (const auto &r : g.rings)
		v.rings.push_back({r->conf->name, r->ring});
	for (const auto &s : g.stages)
		v.stages.push_back({s->conf->name, stage_kind_name(s->conf->kind), s->lcore->lcore, &s->st.live});
	v.stage_cycles = !g.lcores.empty() && g.lcores[0]->loop.count_cycles;
	v.config = {"pipeline file: " + c.file,
		    "flows: " + std::to_string(g.flows.size()) + ", stages: " + std::to_string(g.stages.size()) +
			    ", lcores: " + std::to_string(g.lcores.size())};
	for (const auto &f : g.flows)
		v.config.push_back("connected: " + (g.flows.size() > 1 ? "flow " + f->conf->name + ": " : std::string()) +
				   connected_of(*f));
	for (const auto &f : g.flows)
		v.config.push_back("flow " + f->conf->name + ": " + verb_name(f->o.verb) + ", " + std::to_string(f->o.msg_bytes) +
				   " B, " + std::to_string(f->o.qps) + " QPs, " + ends_of(*f));
	return v;
}

namespace {

void print_stage(Report &out, const GraphStage &s)
{
	const StageStats &st = s.st.st;
	out.put("  stage %-13s %s on lcore %u: %" PRIu64 " messages in %" PRIu64 " bursts", (s.conf->name + ":").c_str(),
	        stage_kind_name(s.conf->kind), s.lcore->lcore, st.msgs, st.bursts);
	out.put("%s; %" PRIu64 " calls", stage_describe(s).c_str(), st.calls);
	if (s.lcore->loop.count_cycles)
		out.put(", %.1f cycles per message", st.msgs ? static_cast<double>(st.cycles) / static_cast<double>(st.msgs) : 0.0);
	out.put("\n");
}

/* Counts merged over flows (what a single flow's run printed as its own). */
void merge(WcErrorCounts *to, const WcErrorCounts &e)
{
	for (unsigned st = 0; st < kWcStatusCount; st++)
		to->by_status[st] += e.by_status[st];
	if (to->total == 0 && e.total) {
		to->first_status = e.first_status;
		to->first_opcode = e.first_opcode;
		to->first_wr_id = e.first_wr_id;
	}
	to->total += e.total;
}

/* The flows share a verb, size and chain shape (every command-line run): the summary
 * then says it once, as a single flow's run did. */
bool uniform(const Graph &g)
{
	const FlowParams &a = g.flows[0]->o;
	for (const auto &f : g.flows) {
		const FlowParams &b = f->o;
		if (b.verb != a.verb || b.msg_bytes != a.msg_bytes || b.batch != a.batch || b.signal_every != a.signal_every ||
		    b.sq_depth != a.sq_depth || b.verify != a.verify)
			return false;
	}
	return true;
}

const char *verified_how(const GraphFlow &f)
{
	const FlowParams &o = f.o;
	if (f.remote && !f.remote->server && !verb_info(o.verb).self_checked)
		return " here (the server checks what arrives)";
	if (f.serves() && !verb_info(o.verb).responder_checks)
		return " here (reads are checked by the client)";
	return !o.verify ? " (sequence only: --no-verify)" : verb_info(o.verb).verified_how;
}

void print_first_bad(Report &out, const Graph &g)
{
	for (const auto &f : g.flows) {
		const std::string who = g.flows.size() > 1 ? "flow " + f->conf->name + " " : "";
		if (f->pingpong) {
			for (const PingPong *pp : {&f->pong, &f->ping}) {   // the echoing side sees a bad ping first
				const ResponderCounters &b = pp->c;
				if (b.first_bad_seq == UINT64_MAX)
					continue;
				out.put("  first bad message:   %sQP %u seq %" PRIu64 " at the %s side", who.c_str(), b.first_bad_qp,
				        b.first_bad_seq, pp->echo ? "echoing" : "pinging");
				if (b.first_bad_offset >= 0)
					out.put(", byte %" PRId64 " differs from the pattern", b.first_bad_offset);
				out.put("\n");
				return;
			}
			continue;
		}
		for (const auto &ln : f->lanes)   // a lane's read result that did not check out
			if (ln->q.c.first_bad_seq != UINT64_MAX) {
				out.put("  first bad message:   %slane on lcore %u, QP %u seq %" PRIu64 "\n", who.c_str(), ln->lcore->lcore,
				        ln->q.c.first_bad_qp, ln->q.c.first_bad_seq);
				return;
			}
		const ResponderCounters &v = f->v.c;
		const RequesterCounters &q = f->q.c;
		if (v.first_bad_seq == UINT64_MAX && q.first_bad_seq == UINT64_MAX)
			continue;
		const bool rsp = v.first_bad_seq != UINT64_MAX;
		const uint64_t seq = rsp ? v.first_bad_seq : q.first_bad_seq;
		const uint32_t qp = rsp ? v.first_bad_qp : q.first_bad_qp;
		const int64_t off = rsp ? v.first_bad_offset : q.first_bad_offset;
		if (off >= 0)
			out.put("  first bad message:   %sQP %u seq %" PRIu64 ", byte %" PRId64 " differs from the pattern\n",
			        who.c_str(), qp, seq, off);
		else if (verb_is_atomic(f->o.verb))
			out.put("  first bad message:   %sQP %u value %" PRIu64 "\n", who.c_str(), qp, seq);
		else
			out.put("  first bad message:   %sQP %u seq %" PRIu64 "\n", who.c_str(), qp, seq);
		return;
	}
}

double us(uint64_t ns)
{
	return static_cast<double>(ns) / 1000.0;
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
	count("iterations", f.o.messages, " (round trips over " + std::to_string(f.o.qps) + " QP" + (f.o.qps > 1 ? "s)" : ")"));
	count("pings received", ec.received, " (verified " + std::to_string(ec.verified) + ")");
	count("echoes received", pc.received);
	count("echoes verified", pc.verified);
	const double secs = pc.end_tsc > pc.start_tsc ? tsc_to_s(pc.end_tsc - pc.start_tsc) : 0;
	out.put("  %-20s %.0f /s\n", ("round trips" + n + ":").c_str(), secs > 0 ? static_cast<double>(pc.received) / secs : 0.0);
	out.put("  %-20s %" PRIu64 " (half round trips: one iteration per QP, post to post, / 2; %u QP%s, one message in flight on each)\n",
	        ("latency samples" + n + ":").c_str(), h.count(), f.o.qps, f.o.qps > 1 ? "s" : "");
	line("min", us(h.min()));
	line("median", us(h.percentile(0.5)));
	line("average", h.mean() / 1000.0);
	line("p90", us(h.percentile(0.90)));
	line("p99", us(h.percentile(0.99)));
	line("p99.9", us(h.percentile(0.999)));
	line("max", us(h.max()));
}

/* Seed 002's figures: how the QPs were shared, each lane's work and CPU per message,
 * and the completions the lanes handed each other. */
void print_lanes(Report &out, const GraphFlow &f)
{
	const size_t nl = f.lanes.size();
	if (f.share_qps)
		out.put("  QP sharing:          %u QPs shared by %zu lcores (each posts to every QP; one send CQ, polled by all, "
		        "completions handed to their lane through rings)\n", f.o.qps, nl);
	else
		out.put("  QP sharing:          none: %u QPs split over %zu lcores (%zu each, a send CQ each)\n", f.o.qps, nl,
		        f.o.qps / nl);
	uint64_t completed = 0, handed = 0;
	double cpu = 0;
	for (const auto &ln : f.lanes) {
		const RequesterCounters &c = ln->q.c;
		const double lane_cpu = ln->lcore->cpu_s;
		out.put("  lane on lcore %-3u    sent %" PRIu64 ", completed %" PRIu64 ", verified %" PRIu64 ", handed over %" PRIu64
		        ", handed in %" PRIu64 ", CPU %.3f s (%.0f ns/msg)\n", ln->lcore->lcore, c.sent, c.completed, c.verified,
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


/* The run's figures over all its flows, for the summary and the results. */
struct Totals {
	std::vector<FlowTally> t;   // per flow
	FlowTally all;
	RequesterCounters q;        // merged over the flows
	ResponderCounters v;
	uint64_t start = UINT64_MAX, end = 0, bytes = 0, wrs = 0, held = 0, srq_posts = 0, rq_posts = 0, shortfalls = 0, lost = 0;
	bool pass = true, two_sided = false, writes = false, atomics = false, same = false;
	size_t npingpong = 0;
	uint32_t qps = 0;
	double secs = 0;
};

/* One flow's counters into the merged ones (its roles: requester and responder,
 * ping-pong's two sides, or its lanes). */
void merge_roles(Totals *x, const GraphFlow &f)
{
	RequesterCounters &q = x->q;
	ResponderCounters &v = x->v;
	if (!f.lanes.empty()) {
		for (const auto &ln : f.lanes) {
			x->start = std::min(x->start, ln->q.c.start_tsc);
			x->end = std::max(x->end, ln->q.c.end_tsc);
			q.post_calls += ln->q.c.post_calls;
			q.handed_over += ln->q.c.handed_over;
			merge(&q.wc_errors, ln->q.c.wc_errors);
		}
		return;
	}
	if (f.pingpong) {
		const PingPong &timed = f.tx ? f.ping : f.pong;   // the pinging side, unless it is on another host
		x->start = std::min(x->start, timed.c.start_tsc);
		x->end = std::max(x->end, timed.c.end_tsc);
		q.post_calls += f.ping.post_calls + f.pong.post_calls;
		merge(&q.wc_errors, f.ping.c.wc_errors);
		merge(&v.wc_errors, f.pong.c.wc_errors);
		for (const ResponderCounters *r : {&f.ping.c, &f.pong.c}) {
			v.sequence_errors += r->sequence_errors;
			v.length_errors += r->length_errors;
			v.unexpected_opcodes += r->unexpected_opcodes;
			v.unknown_qps += r->unknown_qps;
		}
		return;
	}
	if (f.tx) {
		x->start = std::min(x->start, f.q.c.start_tsc);
		x->end = std::max(x->end, f.q.c.end_tsc);
	}
	if (f.rx && verb_consumes_receive(f.o.verb)) {
		if (!f.tx)   // a server: from the first message in
			x->start = std::min(x->start, f.v.c.start_tsc);
		x->end = std::max(x->end, f.v.c.end_tsc);
	}
	q.post_calls += f.q.c.post_calls;
	q.credit_anomalies += f.q.c.credit_anomalies;
	merge(&q.wc_errors, f.q.c.wc_errors);
	const ResponderCounters &r = f.v.c;
	v.sequence_errors += r.sequence_errors;
	v.length_errors += r.length_errors;
	v.unexpected_opcodes += r.unexpected_opcodes;
	v.unknown_qps += r.unknown_qps;
	v.window_slots_checked += r.window_slots_checked;
	v.counters_checked += r.counters_checked;
	v.credit_writes += r.credit_writes;
	v.flow_credit_moves += r.flow_credit_moves;
	merge(&v.wc_errors, r.wc_errors);
}

Totals totals_of(const Graph &g)
{
	Totals x;
	for (const auto &f : g.flows) {
		x.t.push_back(tally(*f, g));
		const FlowTally &ft = x.t.back();
		x.all.sent += ft.sent;
		x.all.completed += ft.completed;
		x.all.delivered += ft.delivered;
		x.all.verified += ft.verified;
		x.all.failed_qps += ft.failed_qps;
		x.all.errors += ft.errors;
		x.all.data_errors += ft.data_errors;
		x.lost += ft.unobserved || ft.sent <= ft.delivered ? 0 : ft.sent - ft.delivered;
		x.pass &= ft.ok;
		x.two_sided |= verb_consumes_receive(f->o.verb);
		x.writes |= f->o.verb == Verb::write;
		x.atomics |= verb_is_atomic(f->o.verb);
		x.npingpong += f->pingpong;
		x.qps += f->o.qps;
		x.bytes += ft.delivered * f->o.msg_bytes;
		if (f->reliable() && f->tx && !f->pingpong && f->q.qps)   // chunks and retransmissions are WRs too
			for (uint32_t i = 0; i < f->q.nqps; i++)
				x.wrs += f->q.qps[i].wr_posted;
		else if (f->pingpong)   // one WR per post: pings, echoes, and the repeats of either
			x.wrs += f->ping.post_calls + f->pong.post_calls;
		else
			x.wrs += ft.sent;
		merge_roles(&x, *f);
	}
	/* Verify stages: their errors fail the run; those of several flows' messages are
	 * no one flow's. */
	uint64_t stage_errors = 0, unattributed = 0;
	for (const auto &s : g.stages)
		if (stage_kind(s->conf->kind).checks_payload) {
			stage_errors += s->st.st.payload_errors + (s->st.ordered ? s->st.st.seq_errors : 0);
			x.pass &= s->st.done.load();
			if (s->origins.size() != 1)
				unattributed += s->st.st.payload_errors;
		}
	x.all.verified -= std::min(x.all.verified, unattributed);
	x.all.data_errors += unattributed;
	for (const auto &l : g.lcores) {
		(l->refill.per_qp() ? x.rq_posts : x.srq_posts) += l->refill.post_calls();
		x.shortfalls += l->refill.buffer_shortfalls();
	}
	x.held = graph_buffers_out(g);
	x.pass &= stage_errors == 0 && x.held == 0 && !g.run.abort.load();
	x.secs = x.end > x.start ? tsc_to_s(x.end - x.start) : 1e-9;
	x.same = uniform(g);
	return x;
}

/* A reliable write_imm flow sends here: its retransmissions carry two SGEs. */
bool rel_writes_here(const Graph &g)
{
	for (const auto &f : g.flows)
		if (f->reliable() && f->tx && f->o.verb == Verb::write_imm && f->o.post_api == PostApi::wr)
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
	const std::string first = window_str(g.flows[0]->o);
	std::string each = "windows";
	bool same = true;
	for (const auto &f : g.flows) {
		const std::string w = window_str(f->o);
		same &= w == first;
		each += (&f == &g.flows[0] ? " " : ", ") + f->conf->name + w.substr(strlen("window"));
	}
	return same ? first : each;
}

/* Devices, the pipeline, the shape the flows share, how QPs were connected, posted
 * and polled. */
void print_header(Report &out, const PipelineConf &c, const Graph &g, const Totals &x)
{
	const GraphFlow &f0 = *g.flows[0];
	const FlowParams &o0 = f0.o;
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
		out.put("  role:                %s%s %s, %s port %u, GID index %d\n",
		        g.flows.size() > 1 ? ("flow " + f->conf->name + ": ").c_str() : "",
		        f->serves() ? "server (responder) on" : "client (requester) of", f->remote->addr.str.c_str(),
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
	if (o0.rate_pps > 0 && !f0.o.tx_gen_stage)
		out.put("  rate limit:          %.0f msg/s per flow (paced by the requester)\n", o0.rate_pps);
}

/* Why a flow failed, as its roles (or its connections) said it first: "" if none did. */
std::string flow_failure(const GraphFlow &f)
{
	for (const char *why : {f.q.c.fail_reason, f.v.c.fail_reason, f.ping.c.fail_reason, f.pong.c.fail_reason})
		if (why)
			return why;
	return f.remote ? f.remote->why : std::string();
}

/* A flow's errors and failures, when the run has several (one flow's are the run's). */
void print_flow_errors(Report &out, const GraphFlow &f)
{
	const std::string name = "flow " + f.conf->name;
	if (f.pingpong) {
		print_wc_errors(out, (name + " ping").c_str(), f.ping.c.wc_errors);
		print_wc_errors(out, (name + " echo").c_str(), f.pong.c.wc_errors);
		for (const PingPong *pp : {&f.ping, &f.pong})
			if (pp->c.fail_reason)
				out.put("  %s %s failed: %s\n", name.c_str(), pp->echo ? "echo" : "ping", pp->c.fail_reason);
		return;
	}
	print_wc_errors(out, (name + " requester").c_str(), f.q.c.wc_errors);
	print_wc_errors(out, (name + " responder").c_str(), f.v.c.wc_errors);
	if (f.q.c.fail_reason)
		out.put("  %s requester failed: %s\n", name.c_str(), f.q.c.fail_reason);
	if (f.v.c.fail_reason)
		out.put("  %s responder failed: %s\n", name.c_str(), f.v.c.fail_reason);
	if (f.v.c.held_overflow)
		out.put("  %s receiver:    %" PRIu64 " beyond the window\n", name.c_str(), f.v.c.held_overflow);
}

/* A line per flow (its lanes, its errors), then the stages that are not RDMA roles. */
void print_flows(Report &out, const Graph &g, const Totals &x)
{
	for (size_t i = 0; i < g.flows.size(); i++) {
		const GraphFlow &f = *g.flows[i];
		const FlowTally &ft = x.t[i];
		std::string tail = f.fed ? " (sends what its ring brings)"
				   : f.o.rate_pps > 0 ? ", at " + std::to_string(static_cast<uint64_t>(f.o.rate_pps)) + " msg/s" : "";
		if (ft.failed_qps)
			tail += ", failed QPs " + std::to_string(ft.failed_qps);
		std::string ends = ends_of(f);
		if (!f.lanes.empty()) {
			ends = "lanes on lcores ";
			for (const auto &ln : f.lanes)
				ends += (ln == f.lanes[0] ? "" : ",") + std::to_string(ln->lcore->lcore);
			ends += " -> a passive far end";
		}
		out.put("  flow %-14s %s, %u B, %u QP%s, %s: sent %" PRIu64 ", completed %" PRIu64 ", received %" PRIu64
		        ", verified %" PRIu64 "%s\n",
		        (f.conf->name + ":").c_str(), verb_opcode_name(f.o.verb), f.o.msg_bytes, f.o.qps, f.o.qps > 1 ? "s" : "",
		        ends.c_str(), ft.sent, ft.completed, ft.delivered, ft.verified, tail.c_str());
		if (!f.lanes.empty())
			print_lanes(out, f);
		else if (g.flows.size() > 1)
			print_flow_errors(out, f);
	}
	/* The RDMA stages' work is in the flow lines; their cost too when cycles are counted. */
	for (const auto &s : g.stages)
		if (!stage_kind(s->conf->kind).needs_io ||
		    s->lcore->loop.count_cycles)
			print_stage(out, *s);
}

/* run.warmup: the rate of what completed after it, up to the last completion. */
void print_warmup(Report &out, const Graph &g)
{
	const double warmup_s = g.flows[0]->o.warmup_s;
	uint64_t warm = UINT64_MAX, after = 0, after_bytes = 0, left = 0, last = 0;
	for (const auto &f : g.flows)
		if (f->q.warm_tsc) {
			warm = std::min(warm, f->q.warm_tsc);
			last = std::max(last, f->q.c.end_tsc);
			after += f->q.c.completed - f->q.warm_completed;
			after_bytes += (f->q.c.completed - f->q.warm_completed) * f->o.msg_bytes;
			left += f->q.warm_completed;
		}
	if (warm != UINT64_MAX && last > warm) {
		double ws = tsc_to_s(last - warm);
		out.put("  after warm-up:       %.4f Mmsg/s, %.4f Gbit/s (%" PRIu64 " messages in the first %.1f s left out)\n",
		        static_cast<double>(after) / ws / 1e6, static_cast<double>(after_bytes) * 8 / ws / 1e9, left, warmup_s);
	} else {
		out.put("  after warm-up:       none: the run ended within the %.1f s warm-up\n", warmup_s);
	}
}

/* Two hosts: each end's connections, and how the run ended for them. */
void print_remote(Report &out, const Graph &g)
{
	for (const auto &f : g.flows) {
		if (!f->remote)
			continue;
		const RemoteEnd &e = *f->remote;
		const std::string who = g.flows.size() > 1 ? "flow " + f->conf->name + ": " : "";
		const unsigned n = f->o.qps;
		if (e.server)
			out.put("  disconnected:        %s%u of %u connection%s%s%s\n", who.c_str(), e.down, n, n > 1 ? "s" : "",
			        e.why.empty() ? "" : ", first: ", e.why.c_str());
		else if (!e.why.empty())
			out.put("  connection lost:     %s%s\n", who.c_str(), e.why.c_str());
		if (e.probe_cq)
			out.put("  keep-alive reads:    %s%" PRIu64 " posted, %" PRIu64 " answered\n", who.c_str(), e.probes_posted,
			        e.probes_answered);
		if (e.final_counts && !e.server)
			out.put("  final counts:        %s%" PRIu64 " of %u written to the server\n", who.c_str(), e.counts_written, n);
		if (e.final_counts && e.server) {
			unsigned told = 0;
			remote_sent(e, n, &told);
			out.put("  final counts:        %s%u of %u told by the client%s\n", who.c_str(), told, n,
			        told < n ? " (it went away before its end)" : "");
		}
	}
}

/* A reliable ping-pong (stop-and-wait): pings sent again, repeats on either side. */
void print_pingpong_reliability(Report &out, const GraphFlow &f, const std::string &n)
{
	out.put("  reliability:         %ssoftware over UC, stop-and-wait (each echo acknowledges its ping)\n", n.c_str());
	if (f.tx)
		out.put("  retransmissions:     %s%" PRIu64 " (fast 0, timeout %" PRIu64 ")\n", n.c_str(), f.ping.retx_timeout,
		        f.ping.retx_timeout);
	if (f.rx)
		out.put("  repeated pings:      %s%" PRIu64 " (echoed again)\n", n.c_str(), f.pong.duplicates);
	if (f.tx)
		out.put("  duplicates dropped:  %s%" PRIu64 " (echoes already in)\n", n.c_str(), f.ping.duplicates);
}

/* UC flows made reliable in software: what recovering cost, per flow, as each end
 * here sees it (a two-host end only its own half: the sender's retransmissions, ACKs
 * received and RTT; the receiver's ACKs sent, duplicates and headers). */
void print_reliability(Report &out, const Graph &g)
{
	for (const auto &fp : g.flows) {
		const GraphFlow &f = *fp;
		if (!f.reliable())
			continue;
		const std::string n = g.flows.size() > 1 ? "flow " + f.conf->name + ": " : "";
		if (f.pingpong) {
			print_pingpong_reliability(out, f, n);
			continue;
		}
		const RequesterCounters &q = f.q.c;
		const ResponderCounters &v = f.v.c;
		out.put("  reliability:         %ssoftware over UC, an ACK every %u messages or %u us\n", n.c_str(), f.o.ack_every,
		        f.o.ack_us);
		if (f.tx)
			out.put("  retransmissions:     %s%" PRIu64 " (fast %" PRIu64 ", timeout %" PRIu64 ")%s\n", n.c_str(),
			        q.retx_fast + q.retx_timeout, q.retx_fast, q.retx_timeout,
			        q.retx_deferred ? (", " + std::to_string(q.retx_deferred) + " put off by a full send queue").c_str() : "");
		const std::string sent = f.rx ? std::to_string(v.acks_sent) : "(by the server)";
		const std::string received = f.tx ? std::to_string(q.acks_received) : "(by the client)";
		out.put("  acks:                %ssent %s, received %s%s\n", n.c_str(), sent.c_str(), received.c_str(),
		        v.ack_no_room ? (", " + std::to_string(v.ack_no_room) + " put off by busy control slots").c_str() : "");
		if (f.tx)
			out.put("  sack holes:          %s%" PRIu64 "\n", n.c_str(), q.sack_holes);
		if (f.tx && q.restart_requests)
			out.put("  restart requests:    %s%" PRIu64 " (QPs paused until their receiver restarted them)\n", n.c_str(),
			        q.restart_requests);
		if (f.rx) {
			out.put("  duplicates dropped:  %s%" PRIu64 "\n", n.c_str(), v.duplicates);
			out.put("  out of order:        %s%" PRIu64 "\n", n.c_str(), v.out_of_order);
		}
		if (f.rx && f.o.verb == Verb::write_imm)
			out.put("  retransmitted writes: %s%" PRIu64 " taken, %" PRIu64 " refused (header outside the window or slot)\n",
			        n.c_str(), v.retx_received, v.retx_header_bad);
		if (v.outside_window)
			out.put("  outside the window:  %s%" PRIu64 " (dropped)\n", n.c_str(), v.outside_window);
		if (v.qp_restarts || v.restart_requests)
			out.put("  qp restarts:         %s%" PRIu64 " (a loss broke a multi-packet message: %" PRIu64
			        " reported broken, %" PRIu64 " asked for by the sender)\n",
			        n.c_str(), v.qp_restarts, v.broken, v.restart_requests);
		if (f.tx && f.q.flow_latency[0].count()) {
			const Histogram &h = f.q.flow_latency[0];
			out.put("  rtt:                 %sp50 %.1f us, p99 %.1f us (%" PRIu64 " samples, messages sent once)\n", n.c_str(),
			        static_cast<double>(h.percentile(0.5)) / 1000.0, static_cast<double>(h.percentile(0.99)) / 1000.0,
			        h.count());
		}
		if (q.injected_losses)
			out.put("  injected losses:     %s%" PRIu64 " data WRs never posted (inject_loss)\n", n.c_str(), q.injected_losses);
	}
}

/* What moved and what went wrong, over all flows. */
void print_counts(Report &out, const Graph &g, const Totals &x, const std::vector<const AsyncEventWatch *> &async, const RunView &view)
{
	const GraphFlow &f0 = *g.flows[0];
	const FlowTally &all = x.all;
	out.put("  messages sent:       %" PRIu64 "\n", all.sent);
	out.put("  messages completed:  %" PRIu64 "\n", all.completed);
	out.put("  messages received:   %" PRIu64 "\n", all.delivered);
	out.put("  messages verified:   %" PRIu64 "%s\n", all.verified, x.same ? verified_how(f0) : "");
	if (x.writes)
		out.put("  window slots checked: %" PRIu64 "\n", x.v.window_slots_checked);
	if (x.atomics)
		out.put("  final words checked: %" PRIu64 "\n", x.v.counters_checked);
	out.put("  bytes:               %" PRIu64 "\n", x.bytes);
	out.put("  elapsed:             %.3f s\n", x.secs);
	out.put("  message rate:        %.4f Mmsg/s\n", static_cast<double>(all.delivered) / x.secs / 1e6);
	out.put("  throughput:          %.4f Gbit/s\n", static_cast<double>(x.bytes) * 8 / x.secs / 1e9);
	if (f0.o.warmup_s > 0)
		print_warmup(out, g);
	out.put("  send posts:          %" PRIu64 " (%.1f WRs per ibv_post_send)\n", x.q.post_calls,
	        x.q.post_calls ? static_cast<double>(x.wrs) / static_cast<double>(x.q.post_calls) : 0.0);
	if (x.two_sided) {
		if (x.srq_posts || !x.rq_posts)
			out.put("  srq posts:           %" PRIu64 " (%" PRIu64 " cut short by an empty receive pool)\n", x.srq_posts, x.shortfalls);
		if (x.rq_posts)   // recv_queue = "qp"
			out.put("  receive posts:       %" PRIu64 " to QPs' own receive queues (%" PRIu64 " cut short by an empty receive pool)\n",
			        x.rq_posts, x.shortfalls);
		out.put("  credit writes:       %" PRIu64 "%s\n", x.v.credit_writes,
		        x.v.flow_credit_moves ? (" (" + std::to_string(x.v.flow_credit_moves) + " flow credit moved to another QP, not landed in " +
						std::to_string(static_cast<int>(kCreditRetryS * 1000)) + " ms)").c_str() : "");
		out.put("  sequence errors:     %" PRIu64 "\n", x.v.sequence_errors);
		out.put("  length errors:       %" PRIu64 "\n", x.v.length_errors);
		out.put("  unexpected opcodes:  %" PRIu64 "\n", x.v.unexpected_opcodes);
		out.put("  unknown QPs:         %" PRIu64 "\n", x.v.unknown_qps);
	}
	out.put("  payload errors:      %" PRIu64 "\n", all.data_errors);
	out.put("  completion errors:   %" PRIu64 "\n", all.errors);
	out.put("  failed QPs:          %" PRIu64 "\n", all.failed_qps);
	out.put("  lost messages:       %" PRIu64 "\n", x.lost);
	print_reliability(out, g);
	out.put("  buffers not returned: %" PRIu64 "\n", x.held);
	print_remote(out, g);
	print_first_bad(out, g);
	print_async_events(out, async);
	std::string hw_line;
	for (const auto &[name, n] : ports_moved(view))
		hw_line += (hw_line.empty() ? "" : ", ") + name + " " + std::to_string(n);
	out.put("  port counters:       %s\n", hw_line.empty() ? "none moved (or the device has none)" : hw_line.c_str());
	const bool pp = x.npingpong == g.flows.size();
	print_wc_errors(out, pp ? "ping" : "requester", x.q.wc_errors);
	print_wc_errors(out, pp ? "echo" : "responder", x.v.wc_errors);
	if (g.flows.size() == 1 && f0.pingpong) {
		for (const PingPong *p : {&f0.ping, &f0.pong})
			if (p->c.fail_reason)
				out.put("  %s failed:         %s\n", p->echo ? "echo" : "ping", p->c.fail_reason);
	} else if (g.flows.size() == 1) {
		if (f0.q.c.fail_reason)
			out.put("  requester failed:    %s\n", f0.q.c.fail_reason);
		if (f0.v.c.fail_reason)
			out.put("  responder failed:    %s\n", f0.v.c.fail_reason);
	}
	if (x.q.credit_anomalies)
		out.put("  credit anomalies:    %" PRIu64 "\n", x.q.credit_anomalies);
}

/* How the lcores polled and what CPU they took. */
void print_lcores(Report &out, const Graph &g, double secs)
{
	bool adaptive = false, busy = false;
	for (const auto &l : g.lcores)
		if (l->has_io)
			(l->conf->adaptive_poll ? adaptive : busy) = true;
	out.put("  polling:             %s\n", adaptive && busy ? "adaptive on some lcores, busy on the others"
					     : adaptive ? "adaptive (sleeps on a completion channel when idle)" : "busy");
	for (const auto &l : g.lcores)
		out.put("  lcore %-3u            %s; %" PRIu64 " of %" PRIu64 " iterations busy, CPU %.3f s%s\n", l->lcore,
		        lcore_stages(*l).c_str(), l->loop.busy_iterations, l->loop.iterations, l->cpu_s,
		        l->loop.idler.channel ? (", slept " + std::to_string(l->loop.idler.sleeps) + " times, woken by events " +
						std::to_string(l->loop.idler.wakeups) + " times").c_str() : "");
	/* A requester lcore and a responder lcore (every command-line rate run): their CPU
	 * as a share of the run, as tools/bench reads it. */
	const GraphLcore *req = nullptr, *rsp = nullptr;
	for (const auto &l : g.lcores) {
		const std::string r = lcore_roles(*l);
		if (r == "requester")
			req = l.get();
		else if (r == "responder")
			rsp = l.get();
	}
	if (g.lcores.size() != 2 || !req || !rsp)
		return;
	for (const GraphLcore *l : {req, rsp}) {
		out.put("  %s CPU:       %.3f s (%.0f%% of %.3f s)", l == req ? "requester" : "responder", l->cpu_s,
		        100 * l->cpu_s / secs, secs);
		if (l->loop.idler.channel)
			out.put(", %" PRIu64 " sleeps, %" PRIu64 " woken by events", l->loop.idler.sleeps, l->loop.idler.wakeups);
		out.put("\n");
	}
}

/* A results flow from a requester's own counters (a lane's). */
FlowResult lane_result(const std::string &name, const Requester &q, uint32_t msg_bytes)
{
	FlowResult x;
	x.name = name;
	x.qps = q.nqps;
	x.sent = q.c.sent;
	x.completed = q.c.completed;
	x.verified = q.c.verified;
	x.bytes = x.completed * msg_bytes;
	x.failed_qps = q.c.failed_qps;
	x.errors = &q.flow_errors[0];
	x.latency = &q.flow_latency[0];
	x.latency_what = "chain posted to its signalled completion";
	return x;
}

/* The results files' flows: one per flow, one per lane of a flow with lanes. */
void result_flows(const Graph &g, const Totals &x, Results *res)
{
	for (size_t i = 0; i < g.flows.size(); i++) {
		const GraphFlow &f = *g.flows[i];
		if (!f.lanes.empty()) {   // as the stats lines have them
			for (const auto &ln : f.lanes)
				res->flows.push_back(lane_result(f.conf->name + "@lcore" + std::to_string(ln->lcore->lcore), ln->q, f.o.msg_bytes));
			continue;
		}
		const FlowTally &ft = x.t[i];
		FlowResult r;
		r.name = f.conf->name;
		r.qps = f.o.qps;
		r.sent = ft.sent;
		r.completed = ft.completed;
		r.verified = ft.verified;
		r.bytes = ft.delivered * f.o.msg_bytes;
		r.failed_qps = ft.failed_qps;
		r.pass = ft.ok;
		r.failure = flow_failure(f);
		if (f.pingpong) {
			r.errors = ft.errors ? (f.ping.c.wc_errors.total ? &f.ping.c.wc_errors : &f.pong.c.wc_errors) : nullptr;
			r.latency = f.tx ? f.hist.get() : nullptr;
			r.latency_what = "half round trip: one iteration per QP, post to post, / 2 (as ib_send_lat)";
		} else if (!f.tx) {   // a server: its errors; latency is the client's to measure
			r.errors = &f.v.c.wc_errors;
		} else {
			r.errors = &f.q.flow_errors[0];
			r.latency = &f.q.flow_latency[0];
			r.latency_what = "chain posted to its signalled completion";
		}
		if (f.reliable() && f.pingpong) {
			r.rel = {true, 0, f.ping.retx_timeout, 0, 0, f.ping.duplicates + f.pong.duplicates, 0, 0, 0,
				 ft.sent > ft.completed ? ft.sent - ft.completed : 0, 0};
		} else if (f.reliable()) {   // a two-host end counts its own half (the other's are 0)
			const RequesterCounters &q = f.q.c;
			const ResponderCounters &v = f.v.c;
			r.rel = {true, q.retx_fast, q.retx_timeout, v.acks_sent, q.acks_received, v.duplicates, q.sack_holes,
				 v.retx_header_bad, q.injected_losses, ft.sent > ft.delivered ? ft.sent - ft.delivered : 0,
				 v.qp_restarts};
			if (f.tx)
				r.latency_what = "RTT: message posted to its cumulative ACK, messages sent once (Karn)";
		}
		res->flows.push_back(r);
	}
}

} // namespace

bool graph_summary(Report &out, const PipelineConf &c, const Graph &g, const std::vector<const AsyncEventWatch *> &async,
		   const RunView &view, const Sampler &sampler, SweepRow *row, Results *res_out)
{
	const Totals x = totals_of(g);
	const GraphFlow &f0 = *g.flows[0];
	out.put("summary:\n");
	print_header(out, c, g, x);
	print_flows(out, g, x);
	print_counts(out, g, x, async, view);
	print_lcores(out, g, x.secs);
	for (const auto &f : g.flows)
		if (f->pingpong && f->tx)   // timed where the pings are
			print_pingpong(out, *f, x.npingpong > 1);
	const Histogram *lat = g.flows.size() == 1 && !f0.pingpong && f0.lanes.empty() && f0.tx ? &f0.q.flow_latency[0] : nullptr;
	if (lat && lat->count() && !f0.reliable())
		out.put("  completion latency:  p50 %.1f us, p99 %.1f us, max %.1f us (chain posted to its signalled completion)\n",
		        static_cast<double>(lat->percentile(0.5)) / 1e3, static_cast<double>(lat->percentile(0.99)) / 1e3,
		        static_cast<double>(lat->max()) / 1e3);
	const int sig = g.run.stop_signal.load();
	if (sig)
		out.put("  run:                 stopped by %s before its end: no new posts, what was in flight completed; "
		        "the counts cover what ran\n", sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal");
	else if (g.run.abort.load())
		out.put("  run:                 stopped before its end (a stage joined by rings failed)\n");
	out.put("result: %s\n", sig ? "INTERRUPTED" : x.pass ? "PASS" : "FAIL");
	if (row) {
		row->mmsgs = static_cast<double>(x.all.delivered) / x.secs / 1e6;
		row->gbps = static_cast<double>(x.bytes) * 8 / x.secs / 1e9;
		if (f0.pingpong && f0.tx)
			row->median_us = us(f0.hist->percentile(0.5));
		row->pass = x.pass;
		row->ran = true;
	}

	Results &res = *res_out;
	res = results_of(x.npingpong == g.flows.size() ? "pingpong" : "rate", f0.o.verb, f0.o.msg_bytes, view.device, x.secs,
			 x.pass);
	result_flows(g, x, &res);
	res.stop_signal = sig;
	bool client = false, server = false;   // two hosts: this host's role, as the peer's results say theirs
	for (const auto &f : g.flows)
		if (f->remote)
			(f->remote->server ? server : client) = true;
	if (client || server)
		res.role = client && server ? "client+server" : client ? "client" : "server";
	for (const auto &l : g.lcores)
		res.lcores.push_back({l->lcore, lcore_roles(*l), l->loop.busy_iterations, l->loop.iterations - l->loop.busy_iterations,
				      l->cpu_s});
	for (const auto &s : g.stages)
		res.stages.push_back({s->conf->name, stage_kind_name(s->conf->kind), s->lcore->lcore, s->st.st.calls, s->st.st.msgs,
				      s->st.st.cycles});
	res.stage_cycles = !g.lcores.empty() && g.lcores[0]->loop.count_cycles;
	res.period_s = sampler.period_s;
	res.series = sampler.series;
	return x.pass;
}

void graph_sampled_flows(const Graph &g, Sampler *s)
{
	for (const auto &f : g.flows)
		if (!f->lanes.empty())
			for (const auto &ln : f->lanes)
				s->live.push_back(&ln->q.flow_live[0]);
		else
			s->live.push_back(f->pingpong ? (f->tx ? &f->ping.live : &f->pong.live)
						      : f->tx ? &f->q.flow_live[0] : &f->v.arrived);
}

} // namespace rp
