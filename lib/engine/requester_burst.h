/* The requester's fast path: a burst (what each QP may post now) and the send
 * completions it polls, one template for every shape of run. requester_post.cpp
 * instantiates it once per verb for the lean shape, whose post and retire are that
 * verb's, called directly, and once for the general shape, which calls them through
 * Requester::post_chain and ::retire; pick_burst chooses at start. Included by the
 * requester's own files only. */
#pragma once

#include "engine/requester_internal.h"

#include "engine/ctrl_port.h"

#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <algorithm>

namespace rp::req {

/* The general shape's post and retire: the variants chosen at setup (pick_for_verb). */
struct ViaPointers {
	static int post(Requester *r, uint32_t qi, uint32_t n, ChainEnd end) { return r->post_chain(r, qi, n, end); }
	static void retire(Requester *r, uint32_t qi, uint64_t upto) { r->retire(r, qi, upto); }
};

/* One send completion of QP qi (ours). */
template <bool Lean, class Ops>
[[gnu::always_inline]] inline void on_send_wc(Requester *r, uint32_t qi, const ibv_wc &wc, uint64_t now)
{
	RequesterQp &q = r->qps[qi];
	if (wc.status != IBV_WC_SUCCESS) {
		on_send_error(r, qi, wc);
		return;
	}
	if (!Lean && r->p.reliable) {
		/* A WR left the send queue; its message is done when acknowledged. */
		if (wc.wr_id + 1 > q.wr_done && wc.wr_id < q.wr_posted) {
			r->wr_out -= wc.wr_id + 1 - q.wr_done;
			q.wr_done = wc.wr_id + 1;
		}
		return;
	}
	if (wc.wr_id >= q.completed && wc.wr_id < q.sent)
		r->flow_latency[q.flow].record(static_cast<uint64_t>(
			static_cast<double>(now - q.post_tsc[wc.wr_id & r->inflight_mask]) * r->p.ns_per_tsc));
	Ops::retire(r, qi, wc.wr_id);
}

/* Another lane's completion, polled here: to that lane's ring. */
inline bool hand_over(Requester *r, uint32_t owner, uint32_t qi, const ibv_wc &wc)
{
	uint64_t e = (static_cast<uint64_t>(wc.status) << 56) | (static_cast<uint64_t>(qi) << 40) | (wc.wr_id & kSeqMask);
	if (owner >= r->nlanes || rte_ring_mp_enqueue(r->lane_rings[owner], reinterpret_cast<void *>(e)) != 0) {
		r->c.wc_errors.count(wc);   // no such lane, or its ring (sized for every WR) is full
		r->c.fail_reason = "a shared QP's completion could not be handed to its lane";
		return false;
	}
	r->c.handed_over++;
	return true;
}

/* A poll's completions, by qp_num (and, on shared QPs, by the lane in the wr_id):
 * how many were ours, or -1 when one could not be handed to its lane. */
template <bool Lean, class Ops>
[[gnu::always_inline]] inline int dispatch_send(Requester *r, ibv_wc *wc, int n, uint64_t now)
{
	for (int i = 0; i < n; i++) {
		uint32_t qi = r->table.find(wc[i].qp_num);
		if (qi == QpTable::kNone) {
			if (r->send_peer.on_wc)
				r->send_peer.on_wc(r->send_peer.role, wc[i], now);
			else
				r->c.wc_errors.count(wc[i]);
			continue;
		}
		if constexpr (!Lean) {
			const uint32_t owner = static_cast<uint32_t>(wc[i].wr_id >> kLaneShift);
			if (owner != r->lane) {
				if (!hand_over(r, owner, qi, wc[i]))
					return -1;
				continue;
			}
			wc[i].wr_id &= kSeqMask;
		}
		on_send_wc<Lean, Ops>(r, qi, wc[i], now);
	}
	if constexpr (!Lean)
		if (r->lane_rings)
			n += take_handed(r, now);
	return n;
}

/* Inline: after the first round every buffer is bound. */
inline bool bind(Requester *r, RequesterQp &q, uint32_t n)
{
	return q.bound == r->inflight_mask + 1 || q.sent + n <= q.bound || bind_more(r, q, n);
}

inline bool qp_done(const RequesterQp &q)
{
	return q.failed || (q.sent >= q.target && q.completed == q.sent);
}

/* Reliable: ACKs, then timeouts. Returns the ACKs seen, or -1: the run ends
 * (c.fail_reason says why). */
inline int poll_acks(Requester *r, uint64_t now)
{
	RequesterCounters &c = r->c;
	int acks = ctrl_port_poll(r->port, now);
	if (acks < 0 || check_timeouts(r, now) < 0) {
		c.fail_reason = acks < 0 ? "ibv_poll_cq on the control QP failed" : c.fail_reason;
		return -1;
	}
	return acks;
}

/* Rates leave out what completed before the warm-up ended. */
inline void end_warmup(Requester *r, uint64_t now)
{
	if (now >= r->warm_end) {
		r->warm_tsc = now;
		r->warm_completed = r->c.completed;
		r->warm_end = UINT64_MAX;
	}
}

/* Time-bounded runs end with one last, flagged message per QP; so does a run the
 * control plane ends (the console's quit), except where a ring feeds the requester:
 * it sends what is still coming until its input ends (the stages before it end). */
inline void end_when_due(Requester *r, uint64_t now)
{
	if ((now >= r->deadline || (r->ctl->ending() && r->in == nullptr)) && !r->timed_out) {
		r->timed_out = true;
		r->deadline = UINT64_MAX;   // past: keep_time need not look every burst
		for (uint32_t i = 0; i < r->nqps; i++)
			r->qps[i].target = r->qps[i].sent + 1;
	}
}

/* Per flow, what the control plane set: a rate (what is due by now at the rate in
 * force, a batch ahead so that chains stay whole, less what the flow sent since
 * that rate was set) and a batch. Paused: nothing is due, and waiting is progress. */
inline void pace_flows(Requester *r, uint64_t now)
{
	const RequesterParams &p = r->p;
	const bool paused = r->ctl->is_paused() && !r->timed_out;
	uint64_t *const due = r->due;
	uint32_t *const cap = r->cap;
	r->paced = paused;
	if (paused)
		r->last_progress = now;
	for (uint32_t f = 0; f < r->nflows; f++) {
		const FlowControl &fc = r->flow_ctl[f];
		Requester::Pace &pc = r->pace[f];
		const uint64_t tpm = fc.tsc_per_msg.load(std::memory_order_relaxed);
		if (tpm != pc.tsc_per_msg)
			pc = Requester::Pace{tpm, now, r->flow_sent[f]};
		r->paced |= tpm != 0;
		if (paused)
			pc.tsc_per_msg = UINT64_MAX;   // resumed: the rate starts again then, no catching up
		due[f] = paused ? 0 : tpm ? pc.sent0 + (now - pc.t0) / tpm + p.batch : UINT64_MAX;
		const uint32_t b = fc.batch.load(std::memory_order_relaxed);
		cap[f] = b && b < p.batch ? b : p.batch;
	}
}

/* QP q's window, moved on by the credit its word holds now. */
inline uint64_t qp_window_room(Requester *r, RequesterQp &q, uint64_t want, uint64_t now)
{
	const RequesterParams &p = r->p;
	uint64_t credit = *q.credit_word;
	if (credit > q.sent)
		r->c.credit_anomalies++;
	else if (credit != q.credit) {
		q.credit = credit;
		r->last_progress = now;
	}
	uint64_t window_room = p.window - (q.sent - q.credit);
	if (window_room < want && p.whole_chains_window)
		window_room = 0;
	return window_room;
}

/* The window of QP q's flow (over all its QPs), moved on by the flow's credit word. */
inline uint64_t flow_window_room(Requester *r, const RequesterQp &q, uint64_t want, uint64_t now)
{
	const RequesterParams &p = r->p;
	Requester::FlowCredit &fc = r->flow_credit[q.flow];
	const uint64_t sent = r->flow_sent[q.flow];
	const uint64_t credit = *fc.word;
	if (credit > sent) {
		r->c.credit_anomalies++;
	} else if (credit > fc.credit) {   // only forward: the word is written through one QP at a time
		fc.credit = credit;
		r->last_progress = now;
	}
	const uint64_t out = flow_outstanding(r, q.flow);
	uint64_t flow_room = out < p.flow_window ? p.flow_window - out : 0;
	if (flow_room < want && p.whole_chains_flow)
		flow_room = 0;
	return flow_room;
}

/* The messages QP q has room for: its send queue, the WR budget, its window, its
 * flow's window. */
template <bool Lean>
inline uint64_t qp_room(Requester *r, RequesterQp &q, uint64_t want, uint64_t now)
{
	const RequesterParams &p = r->p;
	uint64_t room = !Lean && p.reliable ? (p.sq_depth - (q.wr_posted - q.wr_done)) / r->ck.count
					    : p.sq_depth - (q.sent - q.completed);
	if (!Lean && p.wr_budget) {
		const uint64_t left = (p.wr_budget > r->wr_out ? p.wr_budget - r->wr_out : 0) / r->ck.count;
		if (left < room)
			room = left;
	}
	if (q.credit_word) {
		const uint64_t window_room = qp_window_room(r, q, want, now);
		if (window_room < room)
			room = window_room;
	}
	if (!Lean && p.flow_window) {
		const uint64_t flow_room = flow_window_room(r, q, want, now);
		if (flow_room < room)
			room = flow_room;
	}
	return room;
}

/* The length of QP q's next chain: at most a batch (the flow's, cap), as the room
 * and the flow's rate (due: UINT64_MAX, none) allow. */
template <bool Lean>
inline uint64_t chain_length(Requester *r, RequesterQp &q, uint64_t due, uint32_t cap, uint64_t now)
{
	const RequesterParams &p = r->p;
	/* What a whole chain would be here: a window that reopens by whole chains
	 * holds a shorter one until it does. */
	const uint64_t want = std::min<uint64_t>(std::min<uint64_t>(q.target - q.sent, p.batch), cap);
	const uint64_t room = qp_room<Lean>(r, q, want, now);
	uint64_t n = want < room ? want : room;
	if (due != UINT64_MAX) {
		uint64_t sent = r->flow_sent[q.flow];
		uint64_t budget = due > sent ? due - sent : 0;
		if (n > budget)
			n = budget;
	}
	return n;
}

/* Buffers for a chain of up to n messages of QP q (in r->bufs, or bound to q):
 * how many came. */
template <bool Lean>
inline uint64_t take_buffers(Requester *r, RequesterQp &q, uint64_t n)
{
	if constexpr (Lean)
		return bind(r, q, static_cast<uint32_t>(n)) ? n : 0;   // lean: bound buffers
	if (r->in)
		return rte_ring_sc_dequeue_burst(r->in, r->bufs, static_cast<unsigned>(n), nullptr);
	if (r->bound ? !bind(r, q, static_cast<uint32_t>(n))
		     : rte_mempool_get_bulk(r->pool, r->bufs, static_cast<unsigned>(n)) != 0)
		return 0;
	return n;
}

/* One QP's turn in a burst: a chain as long as it may be. Returns messages posted. */
template <bool Lean, class Ops>
[[gnu::always_inline]] inline uint32_t qp_turn(Requester *r, uint32_t qi, uint64_t due, uint32_t cap, uint64_t now)
{
	RequesterCounters &c = r->c;
	const RequesterParams &p = r->p;
	RequesterQp &q = r->qps[qi];
	uint64_t n = chain_length<Lean>(r, q, due, cap, now);
	/* Out of window, send queue or buffers: they come back with credits and
	 * signalled completions. Fed by a ring: what the stage before has made. */
	if (n == 0)
		return 0;
	n = take_buffers<Lean>(r, q, n);
	if (n == 0)
		return 0;
	/* Fed until its input ends, any chain may be a QP's last: each ends signalled,
	 * so that none leaves unsignalled sends behind. */
	/* Under a WR budget too: a QP's unsignalled WRs must not wait on a signalled
	 * one that the budget, spent on other QPs, keeps it from posting. */
	const ChainEnd end = q.sent + n == q.target	       ? kChainLast
			     : !Lean && (p.count_from_input || p.wr_budget) ? kChainSignalled
								 : kChainMore;
	if (Ops::post(r, qi, static_cast<uint32_t>(n), end) != 0) {
		c.fail_reason = "ibv_post_send failed";
		q.failed = true;
		c.failed_qps++;
		return 0;
	}
	r->cursor = qi + 1 == r->nqps ? 0 : qi + 1;
	r->last_progress = now;
	return static_cast<uint32_t>(n);
}

/* A burst that posted or polled something is busy (else idle, and the idler may
 * wait); nothing moving within the stall timeout ends the run. */
[[gnu::always_inline]] inline void after_burst(Requester *r, bool busy, uint64_t now)
{
	RequesterCounters &c = r->c;
	const RequesterParams &p = r->p;
	if (busy) {
		r->live.polls_busy.store(++c.polls_busy, std::memory_order_relaxed);
	} else {
		r->live.polls_idle.store(++c.polls_idle, std::memory_order_relaxed);
		r->until_look = 0;   // nothing to do: the next burst looks at the control plane
	}
	r->idler.idle(busy);
	if (now - r->last_progress > p.stall_tsc) {
		c.fail_reason = p.reliable ? "gave up: nothing acknowledged within the stall timeout while retransmitting (the peer or the path is gone)"
				: r->in	    ? "stalled: no credit or completion for the send queues, or nothing from the ring"
					    : "stalled: no credit or completion for the send queues";
		c.fail_reason = describe_stall(r, c.fail_reason);
		r->finished = true;
	}
}

/* The control plane and the run's clock: a look (kLookEvery) takes in the end, the
 * pause, the rates and batches; the deadline and the warm-up's end are checked every
 * burst; a rate in force is paced every burst. */
[[gnu::always_inline]] inline void keep_time(Requester *r, bool look, uint64_t now)
{
	if (look || now >= r->deadline || now >= r->warm_end) {
		end_warmup(r, now);
		end_when_due(r, now);
		pace_flows(r, now);
		r->until_look = kLookEvery;
	} else if (r->paced) {
		pace_flows(r, now);
	}
	r->until_look--;
}

/* One burst, in the shape chosen once at start (pick_burst): the lean shape leaves
 * out the tests for what its run cannot have (reliability, an input ring, lanes, a WR
 * budget, a flow window, counts from its input); the rest is the same code. */
template <bool Lean, class Ops>
uint32_t burst(Requester *r)
{
	RequesterCounters &c = r->c;
	const RequesterParams &p = r->p;
	const bool look = r->until_look == 0;   // kLookEvery
	if (look && r->ctl->aborted()) {
		c.fail_reason = r->ctl->abort_reason();
		r->finished = true;
		return 0;
	}
	ibv_wc wc[kTxPollBurst];
	int n = r->ops->poll_cq(r->send_cq, kTxPollBurst, wc);
	const uint64_t now = rte_rdtsc();
	int polled = n < 0 ? n : dispatch_send<Lean, Ops>(r, wc, n, now);
	if (polled < 0) {
		if (n < 0)
			c.fail_reason = "ibv_poll_cq on the send CQ failed";
		r->finished = true;
		return 0;
	}
	/* UC completes a send whether or not it arrived: a reliable flow progresses only
	 * when its ACKs do, so a cut wire ends it at its stall timeout. */
	if (polled > 0 && (Lean || !p.reliable))
		r->last_progress = now;
	if (!Lean && p.reliable) {
		int acks = poll_acks(r, now);
		if (acks < 0) {
			r->finished = true;
			return 0;
		}
		polled += acks;
	}
	keep_time(r, look, now);
	bool all_done = true;
	uint32_t posted = 0;
	/* From where the last burst's posts ended: a window or a rate shared by the QPs
	 * goes round them all, not to the lowest-numbered ones first. */
	const uint32_t first = r->cursor;
	for (uint32_t k = 0, qi = first; k < r->nqps; k++, qi = qi + 1 == r->nqps ? 0 : qi + 1) {
		RequesterQp &q = r->qps[qi];
		if (qp_done(q))
			continue;
		all_done = false;
		if constexpr (!Lean) {
			if (q.paused)
				ask_when_quiet(r, q);
			if (q.paused)
				continue;   // waiting for the receiver to restart the QP
		}
		if (q.sent >= q.target)
			continue;   // draining
		posted += qp_turn<Lean, Ops>(r, qi, r->due[q.flow], r->cap[q.flow], now);
	}
	if (all_done) {
		r->finished = true;
		return posted;
	}
	after_burst(r, posted || polled > 0, now);
	return posted + static_cast<uint32_t>(polled);
}

} // namespace rp::req
