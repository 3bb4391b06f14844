/* The responder's burst: each receive completion checked (sequence, length, payload)
 * and its buffer handed on or given back, the receives refilled, credit or ACKs
 * returned; and the run's end, with the checks of what one-sided verbs left in memory.
 * Its credit, reliability and setup are in responder_credit.cpp,
 * responder_reliable.cpp and responder_setup.cpp (responder_internal.h). */
#include "engine/responder_internal.h"

#include "engine/ctrl_port.h"
#include "engine/cq_router.h"
#include "engine/recv_check.h"
#include "engine/pattern_match.h"

#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <cstring>

namespace rp {

/* A payload that differs from its pattern: counted, off the hot path. */
void payload_bad(Responder *r, uint32_t qi, uint64_t seq, ptrdiff_t bad)
{
	r->c.payload_errors++;
	r->c.bad(qi, seq, bad);
}

namespace {

/* A QP's last message (its immediate says so) is in. */
inline void note_last(Responder *r, ResponderQp &q)
{
	if (!q.saw_last) {
		q.saw_last = true;
		r->lasts++;
	}
}

/* Checks one received message: sequence (immediate), length, payload. A write_imm's
 * payload is in its slot of the window (q.slot: received % slots, kept without a
 * division), a send's in its receive buffer. */
inline void check_message(Responder *r, uint32_t qi, const ibv_wc &wc)
{
	ResponderCounters &c = r->c;
	ResponderQp &q = r->qps[qi];
	const ResponderParams &p = r->p;
	const uint64_t seq = q.received;
	bool last = false;
	bool ok = recv_header_ok(c, wc, p.verb, seq, p.msg_bytes, &last);
	if (last)
		note_last(r, q);
	if (ok)
		ok = payload_ok(r, qi, seq, p.verb == Verb::write_imm
				? r->memory + (static_cast<uint64_t>(qi) * p.slots + q.slot) * p.msg_bytes
				: reinterpret_cast<const unsigned char *>(wc.wr_id));
	if (ok) [[likely]]
		c.verified++;
	else
		c.bad(qi, seq, -1);
	q.slot = q.slot + 1 == p.slots ? 0 : q.slot + 1;
	q.received++;
	c.received++;
	c.bytes += wc.byte_len;
}

/* After the requester is done: the state one-sided verbs left in our memory, slice by
 * slice (a QP's, or each lane's of it: ResponderParams::slices). */
void check_final_memory(Responder *r)
{
	ResponderCounters &c = r->c;
	const ResponderParams &p = r->p;
	const uint32_t nslices = r->nqps * p.slices;
	for (uint32_t v = 0; v < nslices; v++) {
		uint64_t sent = r->ctl->qp_sent[v];
		/* A failed QP executed an unknowable number of its unsignalled WRs. */
		if (r->ctl->qp_failed && r->ctl->qp_failed[v])
			continue;
		/* WRs sent but never seen complete (the requester stalled or was stopped) may
		 * or may not have executed: what they decide is judged within those bounds. */
		const uint64_t done = r->ctl->qp_completed ? r->ctl->qp_completed[v] : sent;
		if (p.verb == Verb::write && p.verify) {
			/* Slot k holds the last message s < sent with s % slots == k. */
			uint64_t used = sent < p.slots ? sent : p.slots;
			for (uint64_t k = 0; k < used; k++) {
				uint64_t s = k + (sent - 1 - k) / p.slots * p.slots;
				if (s >= done)
					continue;   // it, or the one before it in the slot: unknowable
				const unsigned char *slot = r->memory + (static_cast<uint64_t>(v) * p.slots + k) * p.msg_bytes;
				uint64_t key;
				ptrdiff_t bad = r->self_describing ? self_describing_check(slot, p.msg_bytes, &key)
								   : pattern_check(slot, p.msg_bytes, msg_key(v, s));
				if (bad >= 0) {
					c.payload_errors++;
					c.bad(v, s, bad);
				}
				c.window_slots_checked++;
			}
		}
		if (verb_is_atomic(p.verb)) {
			/* Every FETCH_AND_ADD added 1; every CMP_AND_SWP moved seq to seq + 1:
			 * those that completed did, those that did not may have. */
			uint64_t word;
			memcpy(&word, r->memory + static_cast<uint64_t>(v) * 8, sizeof(word));
			if (word < done || word > sent) {
				c.payload_errors++;
				c.bad(v, word, -1);
			}
			c.counters_checked++;
		}
	}
}

/* Every QP failed or has all its sender sent. A QP found so stays so (failed is never
 * cleared, received only grows, and qp_sent is final when this is asked, or reads
 * "not told", UINT64_MAX, until the NIC writes the final count): the scan resumes at
 * the first QP it has not found so yet, not at QP 0 on every empty poll. */
bool all_arrived_scan(Responder *r)
{
	for (uint32_t i = r->arrived_qps; i < r->nqps; i++)
		if (!r->qps[i].failed && r->qps[i].received < r->ctl->qp_sent[i]) {
			r->arrived_qps = i;
			return false;
		}
	r->arrived_qps = r->nqps;
	return true;
}

inline bool all_arrived(Responder *r)
{
	const uint32_t i = r->arrived_qps;
	if (i < r->nqps && !r->qps[i].failed && r->qps[i].received < r->ctl->qp_sent[i])
		return false;   // the QP the last scan stopped at still waits
	return all_arrived_scan(r);
}

/* Hands what is held to the output ring; true when nothing is left held. */
bool flush_out(Responder *r)
{
	if (r->nheld == 0)
		return true;
	unsigned sent = rte_ring_enqueue_burst(r->out, r->held.get(), r->nheld, nullptr);
	for (unsigned i = 0; i < sent; i++)
		r->qps[r->held_qp[i]].handed++;
	r->handed_total += sent;
	r->credit_due |= sent != 0;   // what the ring took is credit the sender can have
	if (sent < r->nheld) {
		r->out_full++;
		memmove(r->held.get(), r->held.get() + sent, (r->nheld - sent) * sizeof(void *));
		memmove(r->held_qp.get(), r->held_qp.get() + sent, (r->nheld - sent) * sizeof(uint32_t));
	}
	r->nheld -= sent;
	return r->nheld == 0;
}

[[gnu::always_inline]] inline void give_back_buffers(Responder *r)
{
	if (r->nfreed) {
		rte_mempool_put_bulk(r->rx_pool, r->freed, r->nfreed);
		r->nfreed = 0;
	}
}

/* A receive completion in error: the QP is failed and its credit moves on. */
[[gnu::noinline]] void on_recv_error(Responder *r, uint32_t qi, const ibv_wc &wc)
{
	r->c.wc_errors.count(wc);
	r->qps[qi].failed = true;
	r->credit_due = true;   // the flow's credit may have to move to another QP
	r->recv_refill().hold(wc.qp_num, true);   // a failed QP's own queue would only flush what it gets
}

/* One receive completion of QP qi (ours): checked, and its buffer handed on to the
 * next stage or back to the pool. Small enough to inline into the burst: what is not
 * the common case (reliable, an error, a buffer) is a call. */
inline void on_recv(Responder *r, uint32_t qi, const ibv_wc &wc, uint64_t now)
{
	if (r->p.reliable)
		return on_recv_rel(r, qi, wc, now);
	if (wc.status == IBV_WC_SUCCESS) [[likely]] {
		if (r->c.received == 0)
			r->c.start_tsc = now;
		check_message(r, qi, wc);
		r->credit_due = true;
	} else {
		on_recv_error(r, qi, wc);
	}
	if (r->rx_pool && wc.wr_id)
		recv_buffer_done(r, qi, reinterpret_cast<void *>(wc.wr_id), wc.status == IBV_WC_SUCCESS);
}

/* A completion of a QP not ours: another role's on this lcore (the router finds it), or
 * counted. */
[[gnu::noinline]] void not_ours(Responder *r, const ibv_wc &wc, uint64_t now)
{
	if (r->recv_peer.on_wc)
		r->recv_peer.on_wc(r->recv_peer.role, wc, now);
	else
		r->c.unknown_qps++;
}

/* Whether message seq of QP qi at data (len bytes) is what was sent, by the payload
 * check chosen at start; Tail: the bytes checked are not whole 32-byte blocks. */
template <Responder::PayloadCheck How, bool Tail>
[[gnu::always_inline]] inline bool payload_matches(PatternMatcher m, uint32_t qi, uint64_t seq,
						   const unsigned char *data, uint32_t len)
{
	switch (How) {
	case Responder::PayloadCheck::none:
		return true;
	case Responder::PayloadCheck::pattern:
		return pattern_matches<Tail>(m, data, len, msg_key(qi, seq));
	case Responder::PayloadCheck::self_describing:
		break;
	}
	uint64_t key;
	memcpy(&key, data, sizeof(key));
	return pattern_matches<Tail>(m, data + 8, len - 8, key);
}

/* The burst of a flow not made reliable, each completion touched once: its QP found by
 * index, then its status, opcode, immediate flag, length and sequence (the immediate's,
 * against what the QP received) xor'ed into one word and its payload matched, one test
 * for all. Passing, only the QP's own state moves; the counts, the first message's time
 * and the credit due are added once per burst. Anything else goes the per-message way
 * (on_recv), which counts each failure by kind. Window: a write_imm's payload is in its
 * QP's next slot, else in the receive's buffer; Imm: the immediate carries the sequence
 * and flags the QP's last message; How: the payload check. What the loop reads of r is
 * loaded once before it (its stores to the QPs could alias r's fields otherwise). */
template <bool Window, bool Imm, Responder::PayloadCheck How, bool Tail>
[[gnu::always_inline]] inline void recv_burst_plain(Responder *r, const ibv_wc *wc, int n, uint64_t now)
{
	/* What the variant's verb completes with: write_imm alone places its payload. */
	const uint32_t want_op = Window ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV, want_flags = Imm ? IBV_WC_WITH_IMM : 0;
	const uint32_t len = r->p.msg_bytes, slots = r->p.slots;
	const QpTable::Finder table = r->table.finder();
	ResponderQp *const qps = r->qps.get();
	const unsigned char *const memory = r->memory;
	const PatternMatcher matcher = r->matcher;
	/* A write_imm's receive carries a buffer too where its SRQ is shared with SENDs. */
	const bool buffers = r->rx_pool != nullptr;
	const uint64_t step = r->p.credit_step;
	const bool window_credit = r->p.flow_window != 0;   // the flow's count is its credit
	uint32_t good = 0;
	bool due = false;   // a QP's credit fell due: return_credit scans the QPs
	for (int i = 0; i < n; i++) {
		const ibv_wc &w = wc[i];
		const uint32_t qi = table.find(w.qp_num);
		if (qi == QpTable::kNone) [[unlikely]] {
			not_ours(r, w, now);
			continue;
		}
		ResponderQp &q = qps[qi];
		const uint64_t seq = q.received;
		const uint32_t imm = Imm ? ntohl(w.imm_data) : 0;
		const uint32_t off = static_cast<uint32_t>(w.status) | (static_cast<uint32_t>(w.opcode) ^ want_op) |
				     ((w.wc_flags & IBV_WC_WITH_IMM) ^ want_flags) | (w.byte_len ^ len) |
				     ((imm ^ static_cast<uint32_t>(seq)) & (Imm ? kImmSeqMask : 0));
		const unsigned char *data = Window ? memory + (static_cast<uint64_t>(qi) * slots + q.slot) * len
						   : reinterpret_cast<const unsigned char *>(w.wr_id);
		if (off != 0 || !payload_matches<How, Tail>(matcher, qi, seq, data, len)) [[unlikely]] {
			on_recv(r, qi, w, now);   // counted by kind, its buffer handed back
			continue;
		}
		if (Imm && (imm & kImmLast)) [[unlikely]]
			note_last(r, q);
		if (Window)
			q.slot = q.slot + 1 == slots ? 0 : q.slot + 1;
		q.received = seq + 1;
		due |= seq + 1 - q.credit_last >= step;
		good++;
		if (buffers && w.wr_id)
			recv_buffer_done(r, qi, reinterpret_cast<void *>(w.wr_id), true);
	}
	if (good) {
		ResponderCounters &c = r->c;
		if (c.received == 0)
			c.start_tsc = now;
		c.received += good;
		c.verified += good;
		c.bytes += static_cast<uint64_t>(good) * len;
		if (due || window_credit)
			r->credit_due = true;   // the flow's count moved: its credit may be due
	}
}

/* Two-sided: credit writes completed, then what is due of ACKs (reliable), each QP's
 * credit and the flow's; idle: after an empty poll. Returns -1 when a poll or a post failed (c.fail_reason says
 * which). */
inline int return_credit(Responder *r, uint64_t now, bool idle)
{
	ResponderCounters &c = r->c;
	const ResponderParams &p = r->p;
	/* Credit writes completed: reaped here, or by a role sharing the send CQ (always
	 * polled then: its completions may be the other role's). After a busy poll, only
	 * when credit may be written (a credit write's slot may be wanted): not a poll of
	 * the send CQ per burst; the idle bursts reap the rest. */
	const bool reap = r->credit_inflight && (idle || r->credit_due || r->credit_freed);
	int polled = reap || r->send_peer.on_wc ? poll_credit_completions(r) : 0;
	/* Credit can fall due only when messages arrived (polled here or by another role
	 * of the lcore), and a deferred one can go only when a credit write completed:
	 * otherwise skip the scan of all QPs. */
	const bool scan = r->credit_due || r->credit_freed != 0;
	r->credit_freed = 0;
	r->credit_due = false;
	if (polled < 0) {
		c.fail_reason = "ibv_poll_cq on the send CQ failed";
		return -1;
	}
	if (p.reliable && (scan || r->acks_waiting) && send_acks(r, now) < 0) {
		c.fail_reason = "ibv_post_send (ACK on the control QP) failed";
		return -1;
	}
	for (uint32_t qi = 0; scan && !p.reliable && p.qp_credit && qi < r->nqps; qi++) {
		ResponderQp &q = r->qps[qi];
		if (!q.failed && !q.flushed_credit && consumed_of(r, q) - q.credit_last >= p.credit_step &&
		    send_credit(r, qi) < 0) {
			c.fail_reason = "ibv_post_send (credit write) failed";
			return -1;
		}
	}
	if (p.flow_window && (scan || r->flow_credit_landed < r->flow_credit_last) && send_flow_credit(r, now) < 0) {
		c.fail_reason = "ibv_post_send (the flow's credit write) failed";
		return -1;
	}
	return 0;
}

/* Whether return_credit has anything to do after an empty poll: credit writes in flight
 * (or a role sharing the send CQ) to reap, arrivals or completed credit writes since the
 * last scan, ACKs waiting, a flow credit write not landed. Else it would do nothing. */
inline bool credit_work(const Responder *r)
{
	return r->credit_inflight || r->send_peer.on_wc || r->credit_due || r->credit_freed || r->acks_waiting ||
	       r->flow_credit_landed < r->flow_credit_last;
}

/* The same after a busy poll, which reaps credit writes only when credit may be written
 * (return_credit): most bursts of a flow of its own have nothing to do there. */
inline bool busy_credit_work(const Responder *r)
{
	return r->credit_due || r->credit_freed || r->credit_every_burst;
}

/* What arrived and how its checks went, for the control plane (once a busy burst). */
inline void publish_received(Responder *r)
{
	const ResponderCounters &c = r->c;
	r->live.received.store(c.received, std::memory_order_relaxed);
	r->arrived.completed.store(c.received, std::memory_order_relaxed);
	ReceiveLive &x = r->rx_live;
	x.received.store(c.received, std::memory_order_relaxed);
	x.verified.store(c.verified, std::memory_order_relaxed);
	x.payload_errors.store(c.payload_errors, std::memory_order_relaxed);
	x.sequence_errors.store(c.sequence_errors, std::memory_order_relaxed);
	x.length_errors.store(c.length_errors, std::memory_order_relaxed);
	if (x.reliable) {
		x.acks_sent.store(c.acks_sent, std::memory_order_relaxed);
		x.duplicates.store(c.duplicates, std::memory_order_relaxed);
		x.out_of_order.store(c.out_of_order, std::memory_order_relaxed);
		x.qp_restarts.store(c.qp_restarts, std::memory_order_relaxed);
	}
}

/* Every QP's last message is in (and handed on); reliable, its sender also
 * has every ACK (else a lost one brings a retransmission to answer). */
inline void finish_when_all_in(Responder *r, uint64_t now)
{
	const ResponderParams &p = r->p;
	publish_received(r);
	const bool quiet = p.linger_tsc && now - r->last_progress > p.linger_tsc;
	r->finished = r->nheld == 0 &&
		      (!p.reliable || quiet || r->ctl->requester_done.load(std::memory_order_acquire));
}

/* The busy polls, what arrived so far and the receives posted, for the control plane. */
[[gnu::noinline]] void publish_busy(Responder *r, RecvRefill &rf)
{
	r->live.polls_busy.store(r->c.polls_busy, std::memory_order_relaxed);
	publish_received(r);
	r->live.srq_posted.store(rf.posted(), std::memory_order_relaxed);
	r->published = r->c.received;
}

/* The burst's polls, busy or idle, for the control plane: what a busy burst changed
 * every kPublishEvery busy bursts (a dozen stores a burst are a good part of what a
 * burst of one or two completions costs), and at once on the next idle burst, so what
 * the console or the metrics read lags by at most that many bursts while messages come
 * and by nothing once they stop. */
[[gnu::always_inline]] inline void publish_polls(Responder *r, int n, RecvRefill &rf)
{
	constexpr uint64_t kPublishEvery = 16;
	ResponderCounters &c = r->c;
	if (n > 0) {
		if (++c.polls_busy % kPublishEvery == 0)
			publish_busy(r, rf);
	} else {
		r->live.polls_idle.store(++c.polls_idle, std::memory_order_relaxed);
		if (r->published != c.received || r->live.polls_busy.load(std::memory_order_relaxed) != c.polls_busy)
			publish_busy(r, rf);   // also what another role of the lcore polled for us
	}
}

/* Nothing arrived and nothing is held: the run is over when all is in or the
 * requester is done (after a drain), and stalled when nothing comes. */
inline void finish_when_quiet(Responder *r, bool two_sided, uint64_t now)
{
	ResponderCounters &c = r->c;
	const ResponderParams &p = r->p;
	/* Counts announced up front (a remote peer): done as soon as all is in. */
	if (two_sided && r->ctl->counts_known && all_arrived(r)) {
		r->finished = true;
	} else if (r->ctl->requester_done.load(std::memory_order_acquire)) {
		if (!two_sided || all_arrived(r) || now - r->last_progress > p.drain_tsc)
			r->finished = true;
	} else if (two_sided && now - r->last_progress > p.stall_tsc) {
		c.fail_reason = "stalled: no message from the requester";
		r->finished = true;
	}
}

/* Every burst, busy or idle: what waits for the next stage handed on, restarts moved
 * on, the control port polled. False when the run ends (c.fail_reason says why). */
inline bool tend(Responder *r, uint64_t now)
{
	if (r->out)
		flush_out(r);
	if (r->restarting)
		responder_finish_restarts(r, now);
	if (r->port && ctrl_port_poll(r->port, now) < 0) {
		r->c.fail_reason = "ibv_poll_cq on the control QP failed";
		r->finished = true;
		return false;
	}
	return true;
}

/* The receives refilled in batches; false when the post failed (the run ends). */
inline bool refill(Responder *r, RecvRefill &rf)
{
	if (rf.refill(*r->ops) < 0) {
		r->c.fail_reason = rf.per_qp() ? "ibv_post_recv failed" : "ibv_post_srq_recv failed";
		r->finished = true;
		return false;
	}
	return true;
}

/* What a busy burst does once its completions are checked: buffers given back or
 * handed on, the receives refilled, credit or ACKs returned, the run's end when every
 * last message is in, the live counters. Plain: a flow of the one-pass variants (no
 * restarts nor control port, which are a reliable flow's; two-sided), Imm then whether
 * its verb carries an immediate; else what the flow has is tested. */
template <bool Plain, bool Imm>
[[gnu::always_inline]] inline uint32_t busy_rest(Responder *r, RecvRefill &rf, const ibv_wc *wc, int n, uint64_t now)
{
	const uint32_t ret = static_cast<uint32_t>(n);
	give_back_buffers(r);
	if (Plain && r->out)
		flush_out(r);
	if (!Plain && !tend(r, now))
		return ret;
	r->last_progress = now;   // also while paused: what was in flight arrives
	r->c.end_tsc = now;
	rf.consumed(wc, n);
	if (!refill(r, rf))
		return ret;
	if (Plain || r->two_sided) {
		if (busy_credit_work(r) && return_credit(r, now, false) < 0) {
			r->finished = true;
			return ret;
		}
		if ((Plain ? Imm : r->has_imm) && r->lasts == r->nqps) {
			finish_when_all_in(r, now);
			return ret;
		}
	}
	publish_polls(r, n, rf);
	r->idler.idle(true);
	return ret;
}

/* The work after a poll that returned n > 0 completions, chosen at start (r->busy).
 * Not inlined: its inclusive cost per message is the responder's work with the empty
 * polls left out (tools/bench's report). This one: each completion on its own (a
 * reliable flow's, a one-sided verb's receives, another role's by the router). */
[[gnu::noinline]] uint32_t responder_busy(Responder *r, const ibv_wc *wc, int n)
{
	const uint64_t now = rte_rdtsc();
	RecvRefill &rf = r->recv_refill();
	route_burst(wc, n, r->table, r->recv_peer, now, &r->c.unknown_qps,
		    [&](uint32_t qi, const ibv_wc &w) { on_recv(r, qi, w, now); });
	return busy_rest<false, false>(r, rf, wc, n, now);
}

/* The same for a flow of the one-pass variants: each its own function, nothing of the
 * variant tested per burst. */
template <bool Window, bool Imm, Responder::PayloadCheck How, bool Tail>
[[gnu::noinline]] uint32_t responder_busy(Responder *r, const ibv_wc *wc, int n)
{
	const uint64_t now = rte_rdtsc();
	RecvRefill &rf = r->recv_refill();
	recv_burst_plain<Window, Imm, How, Tail>(r, wc, n, now);
	return busy_rest<true, Imm>(r, rf, wc, n, now);
}

/* The one-pass variant's busy bursts, by payload check and whether the bytes checked
 * end in a partial 32-byte block (without one, the tail's code and what the burst
 * prepares for it, about 20 instructions a burst, are left out). */
template <bool Window, bool Imm>
decltype(Responder::busy) busy_checked(Responder::PayloadCheck how, bool tail)
{
	using PC = Responder::PayloadCheck;
	switch (how) {
	case PC::pattern:
		return tail ? responder_busy<Window, Imm, PC::pattern, true> : responder_busy<Window, Imm, PC::pattern, false>;
	case PC::self_describing:
		return tail ? responder_busy<Window, Imm, PC::self_describing, true>
			    : responder_busy<Window, Imm, PC::self_describing, false>;
	case PC::none:
		break;
	}
	return responder_busy<Window, Imm, PC::none, false>;
}

/* An empty poll: nothing of ours arrived, no buffer was collected. Still looked at:
 * what changes without an arrival here (the output ring, restart and ACK timers, the
 * control port, receives consumed and credit writes completed as another role of the
 * lcore polled them, the pause, the idler), and whether the run is over or stalled. */
inline uint32_t responder_idle(Responder *r)
{
	const uint64_t now = rte_rdtsc();
	/* Refilled by whichever role polled: a one-sided flow's responder may have polled the
	 * receives of a ping-pong sharing the lcore. */
	RecvRefill &rf = r->recv_refill();
	if (!tend(r, now) || !refill(r, rf))
		return 0;
	if (r->two_sided) {
		if (credit_work(r) && return_credit(r, now, true) < 0) {
			r->finished = true;
			return 0;
		}
		if (r->has_imm && r->lasts == r->nqps) {
			finish_when_all_in(r, now);
			return 0;
		}
	}
	publish_polls(r, 0, rf);
	/* The control plane paused the senders: waiting is not a stall. */
	if (r->ctl->is_paused())
		r->last_progress = now;
	r->idler.idle(false);
	if (r->nheld == 0)
		finish_when_quiet(r, r->two_sided, now);
	return 0;
}

} // namespace

decltype(Responder::busy) responder_busy_for(const Responder *r)
{
	const bool tail = pattern_has_tail(r->checked_bytes);
	switch (r->recv_burst) {
	case Responder::RecvBurst::plain_window_imm:
		return busy_checked<true, true>(r->payload_check, tail);
	case Responder::RecvBurst::plain_buffer:
		return busy_checked<false, false>(r->payload_check, tail);
	case Responder::RecvBurst::plain_buffer_imm:
		return busy_checked<false, true>(r->payload_check, tail);
	case Responder::RecvBurst::per_message:
		break;
	}
	return responder_busy;
}

uint32_t responder_burst(Responder *r)
{
	ibv_wc wc[kRxPollBurst];
	if (r->ctl->aborted()) {
		r->c.fail_reason = r->ctl->abort_reason();
		r->finished = true;
		return 0;
	}
	/* Back-pressure: while the next stage has not taken the last burst, receive nothing
	 * more (the SRQ then runs dry and the requester waits on RNR or credit). */
	int n = r->out && !flush_out(r) ? 0 : r->ops->poll_cq(r->recv_cq, kRxPollBurst, wc);
	if (n > 0)
		return r->busy(r, wc, n);
	if (n < 0) {
		r->c.fail_reason = "ibv_poll_cq on the receive CQ failed";
		r->finished = true;
		return 0;
	}
	return responder_idle(r);
}

void responder_on_recv_wc(void *responder, const ibv_wc &wc, uint64_t now)
{
	auto *r = static_cast<Responder *>(responder);
	uint32_t qi = r->table.find(wc.qp_num);
	if (qi == QpTable::kNone) {
		r->c.unknown_qps++;
		return;
	}
	on_recv(r, qi, wc, now);
	give_back_buffers(r);
	if (r->out)
		flush_out(r);
	r->last_progress = now;   // polled by another role: still progress of ours
	r->c.end_tsc = now;
}

int responder_run(Responder *r)
{
	responder_start(r);
	while (!r->finished)
		responder_burst(r);
	return responder_finish(r);
}

int responder_finish(Responder *r)
{
	ResponderCounters &c = r->c;
	const ResponderParams &p = r->p;
	const bool two_sided = verb_consumes_receive(p.verb);
	if (r->nheld) {
		/* Stopped before the next stage took them (a failure): back to the pool. */
		rte_mempool_put_bulk(r->rx_pool, r->held.get(), r->nheld);
		r->nheld = 0;
	}
	c.srq_post_calls = r->recv_refill().post_calls();
	publish_busy(r, r->recv_refill());   // what the last bursts left unpublished
	/* Let outstanding credit writes finish before the QPs are torn down. */
	uint64_t until = rte_rdtsc() + p.drain_tsc;
	for (;;) {
		bool busy = false;
		for (uint32_t i = 0; i < r->nqps; i++)
			busy |= !r->qps[i].failed && r->qps[i].credit_completed < r->qps[i].credit_posted;
		if (!busy || rte_rdtsc() >= until || poll_credit_completions(r) < 0)
			break;
	}
	/* Credit writes a departed peer flushed: no error if everything it announced on the
	 * QP arrived, else counted as the completion errors they are. */
	for (uint32_t i = 0; i < r->nqps; i++) {
		ResponderQp &q = r->qps[i];
		if (!q.flushed_credit)
			continue;
		if (q.received >= r->ctl->qp_sent[i]) {
			c.credit_flushed_late += q.flushed_credit;
		} else {
			for (uint32_t k = 0; k < q.flushed_credit; k++)
				c.wc_errors.count(r->first_flush);
			q.failed = true;
		}
		q.flushed_credit = 0;
	}
	/* One-sided verbs leave the loop only once the requester is done (or on abort):
	 * then their effect on our memory can be judged. */
	if (!two_sided && c.fail_reason == nullptr && r->ctl->requester_done.load(std::memory_order_acquire))
		check_final_memory(r);
	bool clean = c.fail_reason == nullptr && c.wc_errors.total == 0 && c.verified == c.received &&
		     c.payload_errors == 0 && c.unknown_qps == 0 && c.outside_window == 0 && c.unexpected_opcodes == 0 &&
		     c.length_errors == 0;
	return clean ? 0 : -1;
}

} // namespace rp
