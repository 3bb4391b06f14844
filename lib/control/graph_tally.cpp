/* What each flow of a finished run came to (by its shape: lanes, a ping-pong, a
 * two-host end, a loopback flow) and the run's totals over them. */
#include "control/shape_report.h"
#include "control/report.h"
#include "pipeline/stage_kind.h"

#include <algorithm>

namespace rp {

namespace {

/* What the stages before a fed flow's rdma_tx put on its ring. */
uint64_t ring_brought(const GraphFlow &f, const Graph &g)
{
	uint64_t n = 0;
	for (const auto &s : g.stages)
		if (s->flow == &f && s->conf->kind->end == FlowEnd::requester)
			for (const auto &r : g.rings)
				if (r->conf->name == s->conf->inputs[0])
					for (const GraphStage *p : r->producers)
						n += p->st.st.msgs;
	return n;
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
	const FlowParams &a = g.flows[0]->params;
	for (const auto &f : g.flows) {
		const FlowParams &b = f->params;
		if (b.verb != a.verb || b.msg_bytes != a.msg_bytes || b.batch != a.batch || b.signal_every != a.signal_every ||
		    b.sq_depth != a.sq_depth || b.verify != a.verify)
			return false;
	}
	return true;
}

} // namespace

/* A ping-pong: pings sent, echoes back and checked; the echoing side checked each ping. */
FlowTally tally_pingpong(const GraphFlow &f, const Graph &)
{
	const ResponderCounters &pc = f.ping.c, &ec = f.pong.c;
	/* Until stopped: as many round trips as the pinging side sent when the run ended
	 * (the echoing side: as came), each timed. */
	const bool until = until_stopped(f.params.duration_s);
	FlowTally t;
	if (f.remote) {   // one side here: the pings and their echoes, or the echoes of the client's pings
		const bool echo = f.remote->server;
		const PingPong &pp = echo ? f.pong : f.ping;
		const Stage &st = echo ? *f.rx_stage : *f.tx_stage;
		const uint64_t want = until ? (echo ? pp.c.received : f.ping.sent) : f.params.messages;
		t.sent = echo ? want : f.ping.sent;
		t.completed = t.delivered = pp.c.received;
		t.verified = pp.c.verified;
		t.errors = pp.c.wc_errors.total;
		t.failed_qps = t.errors ? 1 : 0;
		t.data_errors = pp.c.payload_errors;
		t.ok = st.done.load() && st.rc == 0 && t.sent == want && t.completed == t.sent && t.verified == t.sent &&
		       t.errors == 0 && t.data_errors == 0 && (echo || (f.hist->count() == want && f.remote->why.empty()));
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
	const uint64_t want = until ? f.ping.sent : f.params.messages;
	t.ok = done && t.sent == want && t.completed == t.sent && t.delivered == t.sent && t.verified == t.sent &&
	       t.errors == 0 && t.data_errors == 0 && f.hist->count() == want;
	return t;
}

/* Lanes: what each lane's requester posted and checked (READs check their results). */
FlowTally tally_lanes(const GraphFlow &f, const Graph &)
{
	FlowTally t;
	bool done = true;
	for (const auto &ln : f.lanes) {
		const RequesterCounters &c = ln->requester.c;
		t.sent += c.sent;
		t.completed += c.completed;
		t.verified += c.verified;
		t.failed_qps += c.failed_qps;
		t.errors += c.wc_errors.total;
		t.data_errors += c.result_errors;
		done &= ln->stage->st.done.load() && ln->stage->st.rc == 0;
	}
	t.delivered = t.completed;
	/* The far end's memory, checked by its rdma_rx stage: a plain write's every window
	 * slot, an atomic's every word (a lane's slice of each shared QP). */
	if (f.rx_stage) {
		const ResponderCounters &v = f.responder.c;
		const bool write = f.params.verb == Verb::write;
		const bool memory_ok = v.payload_errors == 0 && v.fail_reason == nullptr &&
				       (write ? v.window_slots_checked > 0 || !f.params.verify
					      : !verb_is_atomic(f.params.verb) || v.counters_checked == uint64_t{f.params.qps} * f.params.slices);
		if (write)
			t.verified = memory_ok ? t.completed : 0;
		t.data_errors += v.payload_errors;
		t.errors += v.wc_errors.total;
		done &= f.rx_stage->done.load() && f.rx_stage->rc == 0 && memory_ok;
	}
	const bool count_ok = f.params.duration_s > 0 || t.sent == f.params.messages;
	t.ok = done && count_ok && t.verified == t.sent && t.errors == 0 && t.data_errors == 0;
	return t;
}

/* A two-host flow's end here. The client: what it posted and what completed, read
 * results and atomic return values checked (the server checks the rest). The server:
 * what arrived of what the client announced, or for one-sided verbs, which it does not
 * see, the window's or words' final state; nothing else is observed here. */
FlowTally tally_remote(const GraphFlow &f, const Graph &)
{
	const RemoteEnd &e = *f.remote;
	const Verb verb = f.params.verb;
	const bool self_checked = verb_info(verb).self_checked;
	FlowTally t;
	if (!e.server) {
		const RequesterCounters &c = f.requester.c;
		t.sent = c.sent;
		t.completed = t.delivered = c.completed;
		t.verified = self_checked ? c.verified : 0;
		t.failed_qps = c.failed_qps;
		t.errors = c.wc_errors.total;
		t.data_errors = c.result_errors;
		const bool count_ok = e.duration ? e.counts_written + t.failed_qps == f.params.qps : t.sent == f.params.messages;
		t.ok = f.tx_stage->done.load() && f.tx_stage->rc == 0 && count_ok && t.completed == t.sent && t.errors == 0 &&
		       t.data_errors == 0 && (!self_checked || t.verified == t.sent) && e.why.empty();
		return t;
	}
	const ResponderCounters &c = f.responder.c;
	const bool two_sided = verb_consumes_receive(verb);
	unsigned told = 0;   // a duration run: the QPs whose final count came from the client
	t.sent = remote_sent(e, f.params.qps, &told);
	const bool memory_ok = c.payload_errors == 0 && c.fail_reason == nullptr &&
			       ((verb == Verb::write && (c.window_slots_checked > 0 || !f.params.verify)) ||
				(verb_is_atomic(verb) && c.counters_checked == f.params.qps));
	t.completed = t.delivered = two_sided ? c.received : 0;
	t.verified = two_sided ? c.verified : memory_ok ? t.sent : 0;
	for (uint32_t i = 0; i < f.responder.nqps; i++)
		t.failed_qps += f.responder.qps[i].failed;
	t.errors = c.wc_errors.total;
	t.data_errors = c.payload_errors;
	t.unobserved = !two_sided;
	t.ok = f.rx_stage->done.load() && f.rx_stage->rc == 0 && told == f.params.qps && t.errors == 0 && t.data_errors == 0 &&
	       (two_sided ? t.delivered == t.sent && t.verified == t.sent : !verb_info(verb).responder_checks || memory_ok);
	return t;
}

/* A loopback flow: both ends here, each checking its part (a verify stage downstream
 * may check payloads instead). */
FlowTally tally_loopback(const GraphFlow &f, const Graph &g)
{
	const Requester &q = f.requester;
	const Responder &v = f.responder;
	const Verb verb = f.params.verb;
	const bool two_sided = verb_consumes_receive(verb);
	FlowTally t;
	t.sent = q.c.sent;
	t.completed = q.c.completed;
	t.delivered = two_sided ? v.c.received : q.c.completed;
	if (two_sided)
		t.verified = v.c.verified;
	else if (verb == Verb::write)
		t.verified = v.c.payload_errors == 0 && (v.c.window_slots_checked || !f.params.verify) ? q.c.completed : 0;
	else
		t.verified = q.c.verified;
	/* Payload errors a verify stage found in this flow's messages (when it sees only this flow's). */
	for (const auto &s : g.stages)
		if (s->conf->kind->checks_payload && s->origins.size() == 1 && s->origins[0] == &f) {
			t.data_errors += s->st.st.payload_errors;
			t.verified -= std::min(t.verified, s->st.st.payload_errors);
		}
	t.failed_qps = q.c.failed_qps;
	t.errors = q.c.wc_errors.total + v.c.wc_errors.total;
	t.data_errors += v.c.payload_errors + q.c.result_errors;
	const bool done = f.tx_stage->done.load() && f.tx_stage->rc == 0 && f.rx_stage->done.load() && f.rx_stage->rc == 0;
	const bool count_ok = f.params.duration_s > 0 || t.sent == (f.params.tx_count_from_input ? ring_brought(f, g) : f.params.messages);
	t.ok = done && count_ok && t.delivered == t.sent && t.verified == t.sent && t.errors == 0 && t.data_errors == 0;
	return t;
}

/* A flow's lanes: each its own requester. */
void merge_lanes(Totals *x, const GraphFlow &f)
{
	RequesterCounters &q = x->q;
	for (const auto &ln : f.lanes) {
		x->start = std::min(x->start, ln->requester.c.start_tsc);
		x->end = std::max(x->end, ln->requester.c.end_tsc);
		q.post_calls += ln->requester.c.post_calls;
		q.handed_over += ln->requester.c.handed_over;
		merge(&q.wc_errors, ln->requester.c.wc_errors);
	}
	x->v.window_slots_checked += f.responder.c.window_slots_checked;   // the far end's check, if it ran
	x->v.counters_checked += f.responder.c.counters_checked;
}

/* A ping-pong's two sides: the pinging side's errors as a requester's, the echoing
 * side's as a responder's. */
void merge_pingpong(Totals *x, const GraphFlow &f)
{
	RequesterCounters &q = x->q;
	ResponderCounters &v = x->v;
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
}

/* A requester and a responder: both here (loopback), or the one a two-host end has. */
void merge_ends(Totals *x, const GraphFlow &f)
{
	RequesterCounters &q = x->q;
	ResponderCounters &v = x->v;
	if (f.tx) {
		x->start = std::min(x->start, f.requester.c.start_tsc);
		x->end = std::max(x->end, f.requester.c.end_tsc);
	}
	if (f.rx && verb_consumes_receive(f.params.verb)) {
		if (!f.tx)   // a server: from the first message in
			x->start = std::min(x->start, f.responder.c.start_tsc);
		x->end = std::max(x->end, f.responder.c.end_tsc);
	}
	q.post_calls += f.requester.c.post_calls;
	q.credit_anomalies += f.requester.c.credit_anomalies;
	merge(&q.wc_errors, f.requester.c.wc_errors);
	const ResponderCounters &r = f.responder.c;
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

/* One WR per post: pings, echoes, and the repeats of either. */
uint64_t wrs_pingpong(const GraphFlow &f, const FlowTally &)
{
	return f.ping.post_calls + f.pong.post_calls;
}

/* A message a WR, but a reliable flow's chunks and retransmissions are WRs too. */
uint64_t wrs_ends(const GraphFlow &f, const FlowTally &t)
{
	if (!f.reliable() || !f.tx || !f.requester.qps)
		return t.sent;
	uint64_t n = 0;
	for (uint32_t i = 0; i < f.requester.nqps; i++)
		n += f.requester.qps[i].wr_posted;
	return n;
}

Totals totals_of(const Graph &g)
{
	Totals x;
	for (const auto &f : g.flows) {
		const ShapeReport &r = shape_report(*f);
		x.t.push_back(r.tally(*f, g));
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
		x.two_sided |= verb_consumes_receive(f->params.verb);
		x.writes |= f->params.verb == Verb::write && !r.pingpong;   // a ping-pong's are checked as they come
		x.atomics |= verb_is_atomic(f->params.verb);
		x.npingpong += r.pingpong;
		x.qps += f->params.qps;
		x.bytes += ft.delivered * f->params.msg_bytes;
		x.wrs += r.wrs(*f, ft);
		r.merge(&x, *f);
	}
	/* Verify stages: their errors fail the run; those of several flows' messages are
	 * no one flow's. */
	uint64_t stage_errors = 0, unattributed = 0;
	for (const auto &s : g.stages)
		if (s->conf->kind->checks_payload) {
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

} // namespace rp
