#include "engine/responder.h"

#include "engine/ctrl_port.h"
#include "engine/pattern.h"
#include "engine/cq_router.h"
#include "engine/recv_check.h"
#include "engine/wr_chain.h"
#include "log/log.h"

#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rp {

namespace {

/* What a QP's sender may count as consumed: what arrived, or with an output ring what
 * the ring took (so a full ring holds the sender back at its window). */
inline uint64_t consumed_of(const Responder *r, const ResponderQp &q)
{
	return r->out ? q.handed : q.received;
}

/* Posts one signalled 8-byte RDMA_WRITE of `count` through QP qi to addr/rkey, from
 * the QP's ring of source words. Returns 1, 0 when every source word is still in
 * flight (a later loop tries again) or -errno. */
int post_credit(Responder *r, uint32_t qi, uint64_t count, uint64_t addr, uint32_t rkey, uint64_t tag = 0)
{
	ResponderQp &q = r->qps[qi];
	if (q.credit_posted - q.credit_completed == kCreditRing)
		return 0;
	uint64_t *src = &r->credit_src[static_cast<size_t>(qi) * kCreditRing + q.credit_posted % kCreditRing];
	*src = count;
	ibv_sge sge{reinterpret_cast<uintptr_t>(src), sizeof(*src), r->credit_lkey};
	ibv_send_wr wr{};
	wr.wr_id = q.credit_posted | tag;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	ibv_send_wr *bad = nullptr;
	int ret = r->ops->post_send(q.qp, &wr, &bad);
	if (ret)
		return -ret;
	q.credit_posted++;
	r->credit_inflight++;
	r->c.credit_writes++;
	return 1;
}

/* QP qi's consumed count into its credit word. */
int send_credit(Responder *r, uint32_t qi)
{
	ResponderQp &q = r->qps[qi];
	const uint64_t consumed = consumed_of(r, q);
	int ret = post_credit(r, qi, consumed, q.credit_remote_addr, q.credit_rkey);
	if (ret > 0)
		q.credit_last = consumed;
	return ret;
}

/* The QP after qi that has not failed and has a free credit source word (nqps: none). */
uint32_t next_credit_qp(const Responder *r, uint32_t qi)
{
	for (uint32_t k = 1; k <= r->nqps; k++) {
		const uint32_t j = (qi + k) % r->nqps;
		const ResponderQp &q = r->qps[j];
		if (!q.failed && !q.flushed_credit && q.credit_posted - q.credit_completed < kCreditRing)
			return j;
	}
	return r->nqps;
}

/* The flow's consumed count into its flow credit word, once it moved a step, or again
 * through the next QP: when the QP that carried it failed, or when it has not landed
 * for credit_retry_tsc (the sender's end of that QP may have failed unseen from here;
 * rxe retries such a write for ever). Returns -errno when a post failed. */
int send_flow_credit(Responder *r, uint64_t now)
{
	const uint32_t cur = r->credit_qp;
	const bool stuck = r->p.credit_retry_tsc && r->flow_credit_landed < r->flow_credit_last &&
			   now - r->flow_write_tsc > r->p.credit_retry_tsc;
	if (cur == r->nqps || r->qps[cur].failed || r->qps[cur].flushed_credit || stuck) {   // nqps: none was free last time
		r->credit_qp = next_credit_qp(r, cur);
		r->flow_credit_again = true;
		r->flow_write_tsc = now;   // one move per retry time
		r->c.flow_credit_moves += stuck;
	}
	const uint64_t consumed = r->out ? r->handed_total : r->c.received;
	if (r->credit_qp == r->nqps || (!r->flow_credit_again && consumed - r->flow_credit_last < r->p.flow_step))
		return 0;
	int ret = post_credit(r, r->credit_qp, consumed, r->flow_credit_addr, r->flow_credit_rkey, kFlowCreditTag);
	if (ret > 0) {
		r->flow_credit_last = consumed;
		r->flow_credit_again = false;
		r->flow_write_tsc = now;
	}
	return ret < 0 ? ret : 0;
}

/* One send completion of QP qi (ours): a credit write. */
inline void on_credit_wc(Responder *r, uint32_t qi, const ibv_wc &wc)
{
	ResponderQp &q = r->qps[qi];
	r->credit_inflight -= r->credit_inflight != 0;
	/* A peer process disconnects once its messages are done: a credit write it no longer
	 * needed is flushed then, which is no error once everything it announced arrived;
	 * whether it did is judged at the end (responder_finish). */
	if (wc.status == IBV_WC_WR_FLUSH_ERR && r->ctl->counts_known && r->ctl->qp_sent) {
		q.credit_completed++;
		if (q.flushed_credit++ == 0 && r->first_flush.status == IBV_WC_SUCCESS)
			r->first_flush = wc;
		return;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		r->c.wc_errors.count(wc);
		q.failed = true;
		r->credit_due = true;   // the flow's credit may have to move to another QP
		return;
	}
	q.credit_completed++;
	r->credit_freed++;
	if (wc.wr_id & kFlowCreditTag) {   // its source word is not reused before this completion
		const uint64_t count = r->credit_src[static_cast<size_t>(qi) * kCreditRing + (wc.wr_id & ~kFlowCreditTag) % kCreditRing];
		r->flow_credit_landed = std::max(r->flow_credit_landed, count);
	}
}

/* Polls the send CQ once; completions of a sharing role's QPs go to it. */
int poll_credit_completions(Responder *r)
{
	ibv_wc wc[kRxPollBurst];
	int n = r->ops->poll_cq(r->send_cq, kRxPollBurst, wc);
	if (n < 0)
		return -1;
	const uint64_t now = n && r->send_peer.on_wc ? rte_rdtsc() : 0;
	for (int i = 0; i < n; i++) {
		uint32_t qi = r->table.find(wc[i].qp_num);
		if (qi != QpTable::kNone)
			on_credit_wc(r, qi, wc[i]);
		else if (r->send_peer.on_wc)
			r->send_peer.on_wc(r->send_peer.role, wc[i], now);
		else
			r->c.wc_errors.count(wc[i]);
	}
	return n;
}

/* A payload that differs from its pattern: counted, off the hot path. */
[[gnu::noinline, gnu::cold]] void payload_bad(Responder *r, uint32_t qi, uint64_t seq, ptrdiff_t bad)
{
	r->c.payload_errors++;
	r->c.bad(qi, seq, bad);
}

/* Message seq of QP qi's payload at data; a verify stage downstream may check it
 * instead (self-describing format). False (counted) when it differs. */
inline bool payload_ok(Responder *r, uint32_t qi, uint64_t seq, const unsigned char *data)
{
	if (r->payload_check == Responder::PayloadCheck::none)
		return true;
	uint64_t key;
	ptrdiff_t bad = r->payload_check == Responder::PayloadCheck::self_describing
				? self_describing_check(data, r->p.msg_bytes, &key)
				: pattern_check(data, r->p.msg_bytes, msg_key(qi, seq));
	if (bad < 0) [[likely]]
		return true;
	payload_bad(r, qi, seq, bad);
	return false;
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
	if (last && !q.saw_last) {
		q.saw_last = true;
		r->lasts++;
	}
	if (ok)
		ok = payload_ok(r, qi, seq, p.verb == Verb::write_imm
				? r->memory + (static_cast<uint64_t>(qi) * p.slots + q.slot) * p.msg_bytes
				: reinterpret_cast<const unsigned char *>(wc.wr_id));
	if (ok) [[likely]] {
		c.verified++;
		q.verified++;
	} else {
		c.bad(qi, seq, -1);
	}
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
		if (p.verb == Verb::write && p.verify) {
			/* Slot k holds the last message s < sent with s % slots == k. */
			uint64_t used = sent < p.slots ? sent : p.slots;
			for (uint64_t k = 0; k < used; k++) {
				uint64_t s = k + (sent - 1 - k) / p.slots * p.slots;
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
			/* Every FETCH_AND_ADD added 1; every CMP_AND_SWP moved seq to seq + 1. */
			uint64_t word;
			memcpy(&word, r->memory + static_cast<uint64_t>(v) * 8, sizeof(word));
			if (word != sent) {
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

} // namespace

/* A window of slots, one word for a verb of fixed size, nothing when it takes no rkey. */
uint64_t responder_memory_per_qp(Verb v, uint32_t msg_bytes, uint32_t slots)
{
	const VerbInfo &i = verb_info(v);
	if (i.remote_access == 0)
		return 0;
	return i.fixed_bytes ? i.fixed_bytes : static_cast<uint64_t>(slots) * msg_bytes;
}

int responder_init(Responder *r, uint32_t nqps, std::string *err)
{
	if (nqps == 0 || nqps > kMaxQps) {
		*err = "responder: " + std::to_string(nqps) + " QPs is outside 1.." + std::to_string(kMaxQps);
		return -EINVAL;
	}
	if (r->p.slices == 0 || r->p.slices > kMaxQps || (r->p.slices > 1 && verb_consumes_receive(r->p.verb))) {
		*err = "responder: " + std::to_string(r->p.slices) + " slices per QP (lanes sharing QPs of a one-sided verb)";
		return -EINVAL;
	}
	r->nqps = nqps;
	r->two_sided = verb_consumes_receive(r->p.verb);
	r->has_imm = verb_has_imm(r->p.verb);
	r->qps.reset(new ResponderQp[nqps]);
	uint64_t window = static_cast<uint64_t>(nqps) * r->p.slots;   // what the sender may have unconsumed here
	if (r->p.flow_window && r->p.flow_window < window)
		window = r->p.flow_window;
	r->held_cap = static_cast<uint32_t>(std::min<uint64_t>(window + kRxPollBurst, UINT32_MAX));
	r->held.reset(new void *[r->held_cap]);
	r->held_qp.reset(new uint32_t[r->held_cap]);
	if (r->p.reliable) {
		if (!verb_has_imm(r->p.verb)) {
			*err = "responder: software reliability takes write_imm or send_imm";
			return -EINVAL;
		}
		/* The window counts sequences: slots messages, in chunks if cut. */
		r->ck = Chunking::of(r->p.msg_bytes, verb_info(r->p.verb).chunkable ? r->p.chunk_bytes : 0);
		const uint32_t window = r->p.slots * r->ck.count;
		const uint32_t mask = rx_window_mask(window);
		const size_t words = (static_cast<size_t>(mask) + 1) / 64;
		r->win_bits.reset(new uint64_t[words * nqps]());
		if (r->ck.count > 1)
			r->chunks_in_mem.reset(new uint32_t[static_cast<size_t>(r->p.slots) * nqps]());
		for (uint32_t i = 0; i < nqps; i++) {
			r->qps[i].win = RxWindow{0, &r->win_bits[words * i], mask, window};
			if (r->ck.count > 1)
				r->qps[i].chunks_in = &r->chunks_in_mem[static_cast<size_t>(r->p.slots) * i];
		}
	}
	if (r->p.flow_window && (r->p.reliable || r->p.flow_step == 0 || r->p.flow_step > r->p.flow_window)) {
		*err = "responder: a flow window needs a credit step in 1..window and no software reliability";
		return -EINVAL;
	}
	RP_LOG(DEBUG, ENGINE, "rdmapipe: responder: %u QP%s, %s, %u B, %u slots per QP%s, flow window %u\n", nqps, nqps == 1 ? "" : "s",
	       verb_name(r->p.verb), r->p.msg_bytes, r->p.slots, r->p.reliable ? ", reliable in software" : "", r->p.flow_window);
	return 0;
}

int responder_add_qps(Responder *r, std::string *err)
{
	if (r->p.flow_window && r->flow_credit_addr == 0) {
		*err = "responder: a flow window but no flow credit word to write";
		return -EINVAL;
	}
	r->table.init(r->nqps);
	for (uint32_t i = 0; i < r->nqps; i++) {
		if (r->qps[i].qp == nullptr || !r->table.insert(r->qps[i].qp->qp_num, i)) {
			*err = "responder: QP " + std::to_string(i) + " is missing or its qp_num is a duplicate";
			return -EINVAL;
		}
	}
	/* Reads fetch slot seq % slots of their QP's slice: give each slot its pattern (no
	 * memory: another responder holds the far end's, lanes_setup). */
	const uint32_t nslices = r->nqps * r->p.slices;
	if (r->p.verb == Verb::read && r->memory)
		for (uint32_t v = 0; v < nslices; v++)
			for (uint32_t k = 0; k < r->p.slots; k++)
				pattern_fill(r->memory + (static_cast<uint64_t>(v) * r->p.slots + k) * r->p.msg_bytes,
					     r->p.msg_bytes, msg_key(v, k));
	return 0;
}

void responder_start(Responder *r)
{
	r->payload_check = !r->p.verify || r->payload_downstream ? Responder::PayloadCheck::none
			   : r->self_describing			  ? Responder::PayloadCheck::self_describing
								  : Responder::PayloadCheck::pattern;
	r->two_sided = verb_consumes_receive(r->p.verb);
	r->has_imm = verb_has_imm(r->p.verb);
	r->last_progress = rte_rdtsc();
	r->lasts = 0;
	r->nheld = 0;
	r->arrived_qps = 0;
	r->finished = false;
}

namespace {

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

/* Reliable: where message m of QP qi lives in a write window. */
inline unsigned char *slot_of(Responder *r, uint32_t qi, uint64_t m)
{
	return r->memory + (static_cast<uint64_t>(qi) * r->p.slots + m % r->p.slots) * r->p.msg_bytes;
}

/* Reliable: a retransmitted write or chunk (header + chunk in a receive buffer). The
 * header is checked before anything is written: its target must be that write's or
 * chunk's place in the window, its length that one's. Returns false when dropped. */
bool take_retx(Responder *r, uint32_t qi, const ibv_wc &wc, const unsigned char *buf, uint64_t *seq, bool *last)
{
	ResponderQp &q = r->qps[qi];
	RetxHeader h;
	if (buf == nullptr || wc.byte_len < sizeof(h)) {
		r->c.retx_header_bad++;
		return false;
	}
	memcpy(&h, buf, sizeof(h));
	if (!retx_header_ok(h, q.win.cum, q.win.window, r->p.slots, r->ck, seq) || wc.byte_len != sizeof(h) + r->ck.len(*seq)) {
		r->c.retx_header_bad++;
		return false;
	}
	*last = (ntohl(h.imm) & kImmLast) != 0;
	if (*seq < q.win.cum || q.win.has(*seq)) {
		r->c.duplicates++;
		q.ack_now = true;
		return false;
	}
	memcpy(slot_of(r, qi, 0) + h.target_offset, buf + sizeof(h), r->ck.len(*seq));   // offset checked: in the QP's window
	r->c.retx_received++;
	return true;
}

/* Reliable: the sequence of an original message (its immediate), checked for opcode
 * and length. Returns false when dropped (counted). */
bool take_original(Responder *r, uint32_t qi, const ibv_wc &wc, uint64_t *seq, bool *last)
{
	ResponderCounters &c = r->c;
	ResponderQp &q = r->qps[qi];
	const ibv_wc_opcode want = verb_recv_wc_opcode(r->p.verb);
	if (wc.opcode != want || !(wc.wc_flags & IBV_WC_WITH_IMM)) {
		c.unexpected_opcodes++;
		c.bad(qi, q.win.cum, -1);
		return false;
	}
	const uint32_t imm = ntohl(wc.imm_data);
	*last = (imm & kImmLast) != 0;
	switch (seq_from_imm(q.win.cum, imm & kImmSeqMask, q.win.window, seq)) {
	case SeqClass::outside:
		c.outside_window++;
		c.bad(qi, q.win.cum, -1);
		return false;
	case SeqClass::old:
		c.duplicates++;
		q.ack_now = true;
		return false;
	case SeqClass::in_window:
		break;
	}
	if (q.win.has(*seq)) {
		c.duplicates++;
		q.ack_now = true;
		return false;
	}
	if (wc.byte_len != r->ck.len(*seq)) {
		c.length_errors++;
		c.bad(qi, *seq, -1);
		return false;
	}
	return true;
}

/* Reliable: sequence seq of QP qi (a message, or a chunk of one) arrived for the first
 * time: its place in the window marked, an ACK asked for at once when it opens a hole
 * or is the QP's last, and a message whole now has its payload (at data) checked. */
void arrived(Responder *r, uint32_t qi, uint64_t seq, bool last, const unsigned char *data, uint64_t now)
{
	ResponderCounters &c = r->c;
	ResponderQp &q = r->qps[qi];
	if (seq > q.win.cum)
		c.out_of_order++;
	if (seq > q.highest)
		q.ack_now = true;   // a new hole: tell the sender now
	if (seq + 1 > q.highest)
		q.highest = seq + 1;
	q.win.mark(seq);
	if (last)
		q.last_seq = seq;
	if (!q.complete && q.last_seq != UINT64_MAX && q.win.cum == q.last_seq + 1) {
		q.complete = true;
		q.saw_last = true;
		r->lasts++;
		q.ack_now = true;
	}
	if (q.unacked++ == 0)
		q.first_unacked_tsc = now;
	/* A message cut into chunks is in once its last chunk to come is. */
	if (r->ck.count > 1) {
		const uint64_t m = r->ck.msg(seq);
		uint32_t &in = q.chunks_in[m % r->p.slots];
		if (++in < r->ck.count)
			return;
		in = 0;
		seq = m;
	}
	if (payload_ok(r, qi, seq, data)) {
		c.verified++;
		q.verified++;
	}
	q.received++;
	c.received++;
	c.bytes += r->p.msg_bytes;
}

/* Reliable: a QP its sender asked to restart is stopped (ERR) now and restarted
 * (RESET to RTS) restart_settle_tsc later, not at once: rxe 6.1 resets a QP while its
 * responder may still run on another CPU for a packet that came just before
 * (rxe_run_task is not held off by the reset's tasklet_disable), and both then drop
 * that packet's reference to the QP; after some hundred restarts the count reaches
 * zero and every later packet of the QP is dropped unseen. Stopped, rxe drops new
 * packets before they are queued and flushes a receive it held (WR_FLUSH_ERR, its
 * buffer comes back), so the reset finds the responder idle. */
bool stop_for_restart(Responder *r, ResponderQp &q, uint64_t now)
{
	if (r->ops->stop_qp == nullptr || r->ops->stop_qp(q.qp) != 0)
		return false;
	q.restart_at = now + r->p.restart_settle_tsc + 1;
	r->restarting++;
	r->recv_refill().hold(q.qp->qp_num, true);   // its own receive queue: left alone until the reset
	r->c.qp_restarts++;   // what was broken or in flight is lost: its sender resends it
	return true;
}

/* A SEND's receive buffer (hand_on: its message is one to pass on): on to the next
 * stage, which checks the payload and frees it; else back to the pool, in one bulk put
 * per burst (give_back_buffers), before the refill takes them again. At most a poll
 * burst is collected between two give-backs. The window bounds what is held (credit
 * counts what the ring took); a sender beyond it is counted. */
inline void recv_buffer_done(Responder *r, uint32_t qi, void *buf, bool hand_on)
{
	if (r->out && hand_on && r->nheld < r->held_cap) {
		r->held[r->nheld] = buf;
		r->held_qp[r->nheld++] = qi;
		return;
	}
	if (r->out && hand_on)
		r->c.held_overflow++;
	r->freed[r->nfreed++] = buf;
}

inline void give_back_buffers(Responder *r)
{
	if (r->nfreed) {
		rte_mempool_put_bulk(r->rx_pool, r->freed, r->nfreed);
		r->nfreed = 0;
	}
}

/* Reliable: one receive completion of QP qi. Only a first arrival of a send is handed
 * on; everything else goes back to the pool. A message the NIC found broken (a loss
 * inside a multi-packet UC message, reported by rxe with an SRQ as REM_INV_REQ_ERR)
 * does not fail the QP: the ACKs say it is broken, and the sender pauses it and asks
 * for a restart (reliability.h); so does a flushed receive (the QP went to ERR), and
 * one flushed while the QP is stopped is just its buffer coming back. */
[[gnu::noinline]] void on_recv_rel(Responder *r, uint32_t qi, const ibv_wc &wc, uint64_t now)
{
	ResponderQp &q = r->qps[qi];
	unsigned char *buf = r->rx_pool && wc.wr_id ? reinterpret_cast<unsigned char *>(wc.wr_id) : nullptr;
	bool fresh = false;
	const bool restartable = wc.status == IBV_WC_REM_INV_REQ_ERR || wc.status == IBV_WC_WR_FLUSH_ERR;
	if (wc.status != IBV_WC_SUCCESS && !q.failed && (q.restart_at || restartable)) {
		if (q.restart_at == 0 && !q.broken) {
			q.broken = q.ack_now = true;
			r->acks_waiting++;
			r->c.broken++;
			/* Its own receive queue (if it has one) gets nothing more until the restart:
			 * what rxe does not flush from a QP in ERR, the reset would drop. */
			r->recv_refill().hold(wc.qp_num, true);
		}
	} else if (wc.status != IBV_WC_SUCCESS) {
		r->c.wc_errors.count(wc);
		q.failed = true;
		r->recv_refill().hold(wc.qp_num, true);
	} else {
		if (r->c.received == 0)
			r->c.start_tsc = now;
		uint64_t seq = 0;
		bool last = false;
		const bool retx = r->p.verb == Verb::write_imm && !(wc.wc_flags & IBV_WC_WITH_IMM);
		fresh = retx ? take_retx(r, qi, wc, buf, &seq, &last) : take_original(r, qi, wc, &seq, &last);
		if (fresh)
			arrived(r, qi, seq, last, r->p.verb == Verb::write_imm ? slot_of(r, qi, r->ck.msg(seq)) : buf, now);
		r->credit_due = true;
	}
	/* write_imm: the buffer carried a retransmission, now copied into the window. */
	if (buf != nullptr)
		recv_buffer_done(r, qi, buf, fresh && r->p.verb != Verb::write_imm);
}

/* A restart step failed: the QP is lost, and so is the run (why: which step). */
void restart_failed(Responder *r, ResponderQp &q, const char *why)
{
	r->c.restart_errors++;
	q.failed = true;
	if (r->c.fail_reason == nullptr)
		r->c.fail_reason = why;
	r->finished = true;
}

} // namespace

void responder_finish_restarts(Responder *r, uint64_t now)
{
	for (uint32_t qi = 0; r->restarting && qi < r->nqps; qi++) {
		ResponderQp &q = r->qps[qi];
		if (q.restart_at == 0 || now < q.restart_at)
			continue;
		q.restart_at = 0;
		r->restarting--;
		q.restarted = q.ack_now = true;   // the sender resends what was in flight
		r->acks_waiting++;
		if (r->ops->restart_qp(q.qp) != 0)
			restart_failed(r, q, "restarting a UC QP after a broken message failed (ibv_modify_qp)");
		else
			r->recv_refill().hold(q.qp->qp_num, false);
	}
}

namespace {

/* Reliable: an ACK to every QP that is due one (ack_every messages, ack_tsc since the
 * first unacknowledged, credit worth a step, or at once). Returns -1 when a post failed. */
int send_acks(Responder *r, uint64_t now)
{
	const ResponderParams &p = r->p;
	uint32_t waiting = 0;
	for (uint32_t qi = 0; qi < r->nqps; qi++) {
		ResponderQp &q = r->qps[qi];
		if (q.failed)
			continue;
		const uint64_t consumed = consumed_of(r, q) * r->ck.count;   // in sequences, as cum
		const uint64_t credit = consumed < q.win.cum ? consumed : q.win.cum;
		const bool due = q.ack_now || q.unacked >= p.ack_every || (q.unacked && now - q.first_unacked_tsc >= p.ack_tsc) ||
				 credit >= q.acked_credit + p.credit_step;
		if (!due) {
			waiting += q.unacked != 0;
			continue;
		}
		const uint8_t flags = q.restarted ? kAckRestarted : q.broken ? kAckBroken : uint8_t{0};
		AckMsg a{kAckMagic, kAckVersion, flags, q.peer_qpn, q.win.cum, credit, {}, q.epoch};
		q.win.sack(a.sack);
		int ret = ctrl_send(r->ctrl, q.ack_to, &a, sizeof(a));
		if (ret < 0)
			return -1;
		if (ret == 0) {
			r->c.ack_no_room++;
			waiting++;   // every slot busy: the next burst tries again
			continue;
		}
		r->c.acks_sent++;
		q.unacked = 0;
		q.ack_now = q.restarted = false;
		q.acked_credit = credit;
	}
	r->acks_waiting = waiting;
	return 0;
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

/* Two-sided: credit writes completed, then what is due of ACKs (reliable), each QP's
 * credit and the flow's. Returns -1 when a poll or a post failed (c.fail_reason says
 * which). */
inline int return_credit(Responder *r, uint64_t now)
{
	ResponderCounters &c = r->c;
	const ResponderParams &p = r->p;
	/* Credit writes completed: reaped here, or by a role sharing the send CQ (always
	 * polled then: its completions may be the other role's). */
	int polled = r->credit_inflight || r->send_peer.on_wc ? poll_credit_completions(r) : 0;
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

/* Every QP's last message is in (and handed on); reliable, its sender also
 * has every ACK (else a lost one brings a retransmission to answer). */
inline void finish_when_all_in(Responder *r, uint64_t now)
{
	const ResponderParams &p = r->p;
	r->live.received.store(r->c.received, std::memory_order_relaxed);
	r->arrived.completed.store(r->c.received, std::memory_order_relaxed);
	const bool quiet = p.linger_tsc && now - r->last_progress > p.linger_tsc;
	r->finished = r->nheld == 0 &&
		      (!p.reliable || quiet || r->ctl->requester_done.load(std::memory_order_acquire));
}

/* The burst's polls, busy or idle, and what arrived so far: for the control plane. */
inline void publish_polls(Responder *r, int n, RecvRefill &rf)
{
	ResponderCounters &c = r->c;
	if (n > 0) {
		r->live.polls_busy.store(++c.polls_busy, std::memory_order_relaxed);
		r->live.received.store(c.received, std::memory_order_relaxed);
		r->arrived.completed.store(c.received, std::memory_order_relaxed);
		r->live.srq_posted.store(rf.posted(), std::memory_order_relaxed);
	} else {
		r->live.polls_idle.store(++c.polls_idle, std::memory_order_relaxed);
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

} // namespace

namespace {

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

/* The work after a poll that returned n > 0 completions: each one checked and its
 * buffer handed on or given back, the receives refilled, credit or ACKs returned, the
 * run's end when every last message is in. Not inlined: its inclusive cost per message
 * is the responder's work with the empty polls left out (tools/bench's report). */
[[gnu::noinline]] uint32_t responder_busy(Responder *r, const ibv_wc *wc, int n)
{
	ResponderCounters &c = r->c;
	const uint64_t now = rte_rdtsc();
	RecvRefill &rf = r->recv_refill();
	route_burst(wc, n, r->table, r->recv_peer, now, &c.unknown_qps,
		    [&](uint32_t qi, const ibv_wc &w) { on_recv(r, qi, w, now); });
	give_back_buffers(r);
	if (!tend(r, now))
		return static_cast<uint32_t>(n);
	r->last_progress = now;   // also while paused: what was in flight arrives
	c.end_tsc = now;
	rf.consumed(wc, n);
	if (!refill(r, rf))
		return static_cast<uint32_t>(n);
	if (r->two_sided) {
		if (return_credit(r, now) < 0) {
			r->finished = true;
			return static_cast<uint32_t>(n);
		}
		if (r->has_imm && r->lasts == r->nqps) {
			finish_when_all_in(r, now);
			return static_cast<uint32_t>(n);
		}
	}
	publish_polls(r, n, rf);
	r->idler.idle(true);
	return static_cast<uint32_t>(n);
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
		if (credit_work(r) && return_credit(r, now) < 0) {
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
		return responder_busy(r, wc, n);
	if (n < 0) {
		r->c.fail_reason = "ibv_poll_cq on the receive CQ failed";
		r->finished = true;
		return 0;
	}
	return responder_idle(r);
}

bool responder_passive(const Responder *r)
{
	return !verb_consumes_receive(r->p.verb) && !r->p.reliable && r->port == nullptr && r->out == nullptr;
}

void responder_on_send_wc(void *responder, const ibv_wc &wc, uint64_t)
{
	auto *r = static_cast<Responder *>(responder);
	uint32_t qi = r->table.find(wc.qp_num);
	if (qi == QpTable::kNone) {
		r->c.wc_errors.count(wc);
		return;
	}
	on_credit_wc(r, qi, wc);
}

void responder_on_restart_request(Responder *r, uint32_t qi, uint64_t epoch, uint64_t now)
{
	ResponderQp &q = r->qps[qi];
	r->c.restart_requests++;
	if (q.failed || epoch < q.epoch)
		return;
	if (epoch == q.epoch) {
		if (q.restart_at == 0 && !q.restarted) {   // its ACK was lost: say it again
			q.restarted = q.ack_now = true;
			r->acks_waiting++;
		}
		return;
	}
	q.epoch = epoch;
	q.broken = false;
	if (q.restart_at == 0 && !stop_for_restart(r, q, now))
		restart_failed(r, q, "stopping a UC QP for its restart failed (ibv_modify_qp)");
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
