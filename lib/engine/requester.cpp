/* The requester's fast path: a burst's posts (chains of one verb, chosen at setup) and
 * the send completions it polls. */
#include "engine/requester_internal.h"

#include "engine/ctrl_port.h"
#include "engine/pattern.h"

#include <rte_cycles.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <arpa/inet.h>

#include <cstring>

namespace rp {

namespace {


/* Where a requester's buffers come from (Requester::bound): its pool per chain, its
 * input ring, or the QP's own, bound once. */
enum class Src { pool, fed, bound };

/* Reads and atomics land here: a value no correct result can have. */
constexpr unsigned char kPoisonByte = 0xA5;
constexpr uint64_t kPoisonWord = 0xA5A5A5A5A5A5A5A5ull;

void result_error(Requester *r, uint32_t qi, uint64_t seq, int64_t off)
{
	r->c.result_errors++;
	if (r->c.first_bad_seq == UINT64_MAX) {
		r->c.first_bad_seq = seq;
		r->c.first_bad_qp = qi;
		r->c.first_bad_offset = off;
	}
}

/* Retires messages [q.completed, upto] of QP qi: checks what the verb brought back,
 * then returns the buffers to the pool in at most two bulks (bound ones stay). */
template <Verb V, bool Bound>
void retire(Requester *r, uint32_t qi, uint64_t upto)
{
	RequesterQp &q = r->qps[qi];
	uint64_t from = q.completed;
	if (upto < from || upto >= q.sent)
		return;
	uint64_t n = upto - from + 1;
	if constexpr (V == Verb::read) {
		for (uint64_t s = from; s <= upto; s++) {
			uint64_t slot = s % q.remote.slots;
			ptrdiff_t bad = pattern_check(q.inflight[s & r->inflight_mask], r->p.msg_bytes, msg_key(qi, slot));
			if (bad >= 0) {
				result_error(r, qi, s, bad);
			} else {
				r->c.verified++;
				q.verified++;
			}
		}
	}
	if constexpr (verb_is_atomic(V)) {
		for (uint64_t s = from; s <= upto; s++) {
			uint64_t got;
			memcpy(&got, q.inflight[s & r->inflight_mask], sizeof(got));
			if (got != s) {
				result_error(r, qi, s, -1);
			} else {
				r->c.verified++;
				q.verified++;
			}
		}
	}
	if constexpr (!Bound) {
		uint32_t start = static_cast<uint32_t>(from & r->inflight_mask);
		uint64_t room = r->inflight_mask + 1 - start;
		uint32_t first = static_cast<uint32_t>(n < room ? n : room);
		rte_mempool_put_bulk(r->pool, &q.inflight[start], first);
		if (n > first)
			rte_mempool_put_bulk(r->pool, &q.inflight[0], static_cast<unsigned>(n - first));
	}
	q.completed = upto + 1;
	r->c.completed += n;
	if (!r->p.reliable)
		r->wr_out -= n;
	std::atomic<uint64_t> &live = r->flow_live[q.flow].completed;
	live.store(live.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

/* A plain write's payload is seen by no one but the final check of the window, which
 * reads what the last message into each slot left there: one that a later message of a
 * run of known length will overwrite needs no pattern. */
inline bool overwritten(const Requester *r, const RequesterQp &q, uint64_t seq)
{
	return r->p.messages && !r->p.count_from_input && seq + q.remote.slots < q.target;
}

/* Readies buffer b for message seq of QP qi and tracks it until its completion:
 * the payload pattern for sends and writes, a poison value for what reads and atomics
 * bring back. Fed: the buffer came from the input ring, filled by the stage before
 * (word 0 its sequence, the rest that one's pattern), so it is sent as it is. Bound:
 * the buffer is the QP's own for that sequence, tracked already. */
template <Verb V, Src S>
inline void prepare(Requester *r, uint32_t qi, uint64_t seq, void *b)
{
	const uint32_t len = r->p.msg_bytes;
	if constexpr (V == Verb::read)
		memset(b, kPoisonByte, len);
	else if constexpr (verb_is_atomic(V))
		memcpy(b, &kPoisonWord, sizeof(kPoisonWord));
	else if constexpr (S == Src::fed) {
	} else if (r->p.self_describing) {
		self_describing_fill(b, len, msg_key(qi, seq));
	} else if (V != Verb::write || !overwritten(r, r->qps[qi], seq))
		pattern_fill(b, len, msg_key(qi, seq));
	if (qi == 0 && seq == r->p.corrupt_msg)
		static_cast<unsigned char *>(b)[len / 2] ^= 0x5a;
	if constexpr (S != Src::bound)
		r->qps[qi].inflight[seq & r->inflight_mask] = b;
}

/* Readies messages q.sent.. (n) of QP qi. A plain write's chain that later messages
 * will all overwrite needs nothing (overwritten() holds for its last message, so for
 * all of them), unless the corruption hook falls in it. */
template <Verb V, Src S>
inline void prepare_chain(Requester *r, uint32_t qi, uint32_t n)
{
	RequesterQp &q = r->qps[qi];
	const uint64_t s0 = q.sent;
	if (V == Verb::write && S != Src::fed && !r->p.self_describing && overwritten(r, q, s0 + n - 1) &&
	    (qi != 0 || r->p.corrupt_msg - s0 >= n)) {
		if constexpr (S == Src::pool)
			for (uint32_t i = 0; i < n; i++)
				q.inflight[(s0 + i) & r->inflight_mask] = r->bufs[i];
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		prepare<V, S>(r, qi, s0 + i, S == Src::bound ? q.inflight[(s0 + i) & r->inflight_mask] : r->bufs[i]);
}

/* Latency is measured at signalled completions: only their WRs' post times are kept
 * (every signal_every-th sequence, and the chain's last). */
inline void stamp_posts(Requester *r, RequesterQp &q, uint32_t n, uint64_t t)
{
	const uint32_t every = r->p.signal_every;
	for (uint64_t i = every - 1 - q.sent % every; i < n; i += every)
		q.post_tsc[(q.sent + i) & r->inflight_mask] = t;
	q.post_tsc[(q.sent + n - 1) & r->inflight_mask] = t;
}

inline void count_sent(Requester *r, RequesterQp &q, uint32_t n)
{
	q.sent += n;
	r->c.sent += n;
	r->flow_sent[q.flow] += n;   // partial chains too: the flow window counts what went out
	if (!r->p.reliable)
		r->wr_out += n;   // a WR per message (one left out by inject_loss counts too)
	std::atomic<uint64_t> &live = r->flow_live[q.flow].sent;
	live.store(live.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

/* inject_loss on plain UC: unsignalled WRs of the chain are left out at that rate (a
 * signalled one retires the chain, so it always goes). Returns the new head. */
ibv_send_wr *drop_injected(Requester *r, ibv_send_wr *head)
{
	ibv_send_wr *first = nullptr, **link = &first;
	for (ibv_send_wr *w = head; w; w = w->next) {
		r->rng ^= r->rng << 13, r->rng ^= r->rng >> 7, r->rng ^= r->rng << 17;   // xorshift64
		if (!(w->send_flags & IBV_SEND_SIGNALED) && static_cast<uint32_t>(r->rng >> 32) < r->p.inject_loss) {
			r->c.injected_losses++;
			continue;
		}
		*link = w;
		link = &w->next;
	}
	*link = nullptr;
	return first;
}

/* Prepares n buffers of QP qi for messages q.sent.. and posts them as one chain. */
template <Verb V, Src S>
int post_chain(Requester *r, uint32_t qi, uint32_t n, ChainEnd end)
{
	RequesterQp &q = r->qps[qi];
	prepare_chain<V, S>(r, qi, n);
	ibv_send_wr *bad = nullptr;
	ibv_send_wr *head = S == Src::bound ? r->chain.build_bound<V>(q.sent, n, q.inflight, q.lkeys, r->inflight_mask,
								       end == kChainLast, q.remote, end == kChainSignalled)
					    : r->chain.build<V>(q.sent, n, r->bufs, *r->mrs, end == kChainLast, q.remote,
								end == kChainSignalled);
	if (r->p.inject_loss)
		head = drop_injected(r, head);
	/* Latency from the post, not from filling the payloads. */
	stamp_posts(r, q, n, rte_rdtsc());
	int ret = head ? r->ops->post_send(q.qp, head, &bad) : 0;
	if (r->p.inject_loss) {
		r->chain.relink_all(n);
		if (ret != 0) {   // which of the chain went is not worth untangling: the QP fails
			count_sent(r, q, n);
			r->c.post_errors++;
			return -ret;
		}
	}
	r->chain.relink(n);
	r->c.post_calls++;
	if (ret != 0) {
		/* WRs before `bad` went out; the rest never will. */
		uint32_t ok = 0;
		for (ibv_send_wr *x = head; x != bad && ok < n; x = x->next)
			ok++;
		if constexpr (S != Src::bound)
			rte_mempool_put_bulk(r->pool, r->bufs + ok, n - ok);
		count_sent(r, q, ok);
		r->c.post_errors++;
		return -ret;
	}
	count_sent(r, q, n);
	return 0;
}

/* The same chain through ibv_qp_ex: WRs are built in the provider's send queue
 * directly, and ibv_wr_complete rings one doorbell for the whole chain. */
template <Verb V, Src S>
int post_chain_wr(Requester *r, uint32_t qi, uint32_t n, ChainEnd end)
{
	RequesterQp &q = r->qps[qi];
	const RequesterParams &p = r->p;
	const uint32_t len = p.msg_bytes;
	ibv_qp_ex *x = q.qpx;
	uint64_t slot = q.remote.slots ? q.sent % q.remote.slots : 0;
	prepare_chain<V, S>(r, qi, n);
	const uint64_t t = rte_rdtsc();   // latency from the post, not from filling the payloads
	ibv_wr_start(x);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t seq = q.sent + i;
		void *b = S == Src::bound ? q.inflight[seq & r->inflight_mask] : r->bufs[i];
		bool last = end == kChainLast && i == n - 1;
		q.post_tsc[seq & r->inflight_mask] = t;

		x->wr_id = seq | r->wr_tag;
		x->wr_flags = (wr_signalled(seq, p.signal_every) || last || (end == kChainSignalled && i == n - 1) ? IBV_SEND_SIGNALED : 0) |
			      (p.inline_send ? IBV_SEND_INLINE : 0) | (p.fence && i == 0 ? IBV_SEND_FENCE : 0);
		uint32_t imm = htonl(static_cast<uint32_t>(seq & kImmSeqMask) | (last ? kImmLast : 0));
		uint64_t raddr = q.remote.base + slot * len;
		if constexpr (V == Verb::send)
			ibv_wr_send(x);
		if constexpr (V == Verb::send_imm)
			ibv_wr_send_imm(x, imm);
		if constexpr (V == Verb::write)
			ibv_wr_rdma_write(x, q.remote.rkey, raddr);
		if constexpr (V == Verb::write_imm)
			ibv_wr_rdma_write_imm(x, q.remote.rkey, raddr, imm);
		if constexpr (V == Verb::read)
			ibv_wr_rdma_read(x, q.remote.rkey, raddr);
		if constexpr (V == Verb::fetch_add)
			ibv_wr_atomic_fetch_add(x, q.remote.rkey, q.remote.base, 1);
		if constexpr (V == Verb::cmp_swap)
			ibv_wr_atomic_cmp_swp(x, q.remote.rkey, q.remote.base, seq, seq + 1);
		if (p.inline_send)
			ibv_wr_set_inline_data(x, b, len);
		else
			ibv_wr_set_sge(x, S == Src::bound ? q.lkeys[seq & r->inflight_mask] : r->mrs->lkey_of(b),
				       reinterpret_cast<uintptr_t>(b), len);
		if (q.remote.slots && ++slot == q.remote.slots)
			slot = 0;
	}
	int ret = ibv_wr_complete(x);
	r->c.post_calls++;
	if (ret != 0) {
		/* Nothing of the chain was posted. */
		if constexpr (S != Src::bound)
			rte_mempool_put_bulk(r->pool, r->bufs, n);
		r->c.post_errors++;
		return -ret;
	}
	count_sent(r, q, n);
	return 0;
}

/* Reliable (UC): the same chain, but each WR is numbered by its place in the send
 * queue (retransmissions take places too), signalled every signal_every places, and
 * inject_loss drops some WRs while their sequences stay tracked as sent. A write_imm
 * cut into chunks goes as ck.count WRs per message, each its own sequence. Buffers go
 * back on acknowledgement, not on completion. */
template <Verb V, Src S>
int post_chain_rel(Requester *r, uint32_t qi, uint32_t n, ChainEnd end)
{
	RequesterQp &q = r->qps[qi];
	const RequesterParams &p = r->p;
	const uint32_t per = r->ck.count;
	const uint64_t first = q.sent * per;
	for (uint32_t i = 0; i < n; i++)
		prepare<V, S>(r, qi, q.sent + i, r->bufs[i]);
	const uint32_t wrs = n * per;
	for (uint32_t i = 0; i < wrs; i++)
		q.marks[(first + i) & r->seq_mask] = end == kChainLast && i == wrs - 1 ? kMarkLast : 0;
	ibv_send_wr *w = per > 1 ? r->chain.build_chunks(q.sent, n, r->bufs, *r->mrs, end == kChainLast, q.remote, r->ck)
				 : r->chain.build<V>(q.sent, n, r->bufs, *r->mrs, end == kChainLast, q.remote);
	ibv_send_wr *head = nullptr, **link = &head, *last = nullptr;
	uint32_t kept = 0;
	for (ibv_send_wr *next; w; w = next) {
		next = w->next;
		if (p.inject_loss) {
			r->rng ^= r->rng << 13, r->rng ^= r->rng >> 7, r->rng ^= r->rng << 17;   // xorshift64
			if (static_cast<uint32_t>(r->rng >> 32) < p.inject_loss) {
				r->c.injected_losses++;
				continue;
			}
		}
		const uint64_t place = q.wr_posted + kept++;
		w->wr_id = place | r->wr_tag;
		w->send_flags = (w->send_flags & ~IBV_SEND_SIGNALED) | (wr_signalled(place, p.signal_every) ? IBV_SEND_SIGNALED : 0);
		*link = last = w;
		link = &w->next;
	}
	*link = nullptr;
	if (last)   // a chain ends signalled: the send queue is empty when wr_done reaches wr_posted
		last->send_flags |= IBV_SEND_SIGNALED;
	const uint64_t t = rte_rdtsc();
	for (uint32_t i = 0; i < wrs; i++)
		q.post_tsc[(first + i) & r->seq_mask] = t;
	int ret = 0;
	if (head) {
		ret = post_tracked(r, q, head);
		r->c.post_calls++;
	}
	r->chain.relink_all(wrs);
	/* Tracked either way: a failed post fails the QP, the run reports it. */
	count_sent(r, q, n);
	if (ret != 0) {
		r->c.post_errors++;
		return -ret;
	}
	q.wr_posted += kept;
	r->wr_out += kept;
	return 0;
}

/* The verb's functions, and where the buffers come from: chosen here, not per message. */
template <Verb V>
void pick(Requester *r)
{
	const bool wr = r->p.post_api == PostApi::wr;
	r->bound = false;
	if constexpr (verb_has_imm(V))
		if (r->p.reliable) {
			r->post_chain = r->in ? post_chain_rel<V, Src::fed> : post_chain_rel<V, Src::pool>;
			r->retire = retire<V, false>;
			return;
		}
	if (r->in) {
		r->post_chain = wr ? post_chain_wr<V, Src::fed> : post_chain<V, Src::fed>;
	} else if (r->p.bind_buffers && r->nlanes == 0) {
		r->bound = true;
		r->post_chain = wr ? post_chain_wr<V, Src::bound> : post_chain<V, Src::bound>;
	} else {
		r->post_chain = wr ? post_chain_wr<V, Src::pool> : post_chain<V, Src::pool>;
	}
	r->retire = r->bound ? retire<V, true> : retire<V, false>;
}

} // namespace

void pick_for_verb(Requester *r)
{
	switch (r->p.verb) {
	case Verb::send: pick<Verb::send>(r); break;
	case Verb::send_imm: pick<Verb::send_imm>(r); break;
	case Verb::write: pick<Verb::write>(r); break;
	case Verb::write_imm: pick<Verb::write_imm>(r); break;
	case Verb::read: pick<Verb::read>(r); break;
	case Verb::fetch_add: pick<Verb::fetch_add>(r); break;
	case Verb::cmp_swap: pick<Verb::cmp_swap>(r); break;
	}
}

namespace {

/* A failed WR whose status says the receiver never took it (nor what followed it). */
inline bool never_arrived(ibv_wc_status st)
{
	switch (st) {
	case IBV_WC_RNR_RETRY_EXC_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_LOC_LEN_ERR:
	case IBV_WC_LOC_QP_OP_ERR:
	case IBV_WC_LOC_PROT_ERR:
		return true;
	default:
		return false;
	}
}

/* One send completion of QP qi (ours). */
inline void on_send_wc(Requester *r, uint32_t qi, const ibv_wc &wc, uint64_t now)
{
	RequesterQp &q = r->qps[qi];
	if (wc.status != IBV_WC_SUCCESS) {
		/* Only this QP stops; its outstanding WRs come back flushed. */
		r->c.wc_errors.count(wc);
		r->flow_errors[q.flow].count(wc);
		{
			const WcErrorCounts &fe = r->flow_errors[q.flow];
			FlowLive &fl = r->flow_live[q.flow];
			const unsigned st = wc.status < kWcStatusCount ? wc.status : IBV_WC_GENERAL_ERR;
			fl.by_status[st].store(fe.by_status[st], std::memory_order_relaxed);
			fl.errors.store(fe.total, std::memory_order_relaxed);
		}
		if (!q.failed) {
			q.failed = true;
			r->c.failed_qps++;
		}
		if (!q.settled) {
			/* RC completes in order: what came before the failed WR arrived and is
			 * credited; where its status proves that it and what follows never
			 * arrived, they leave the flow's window instead of holding it from the
			 * flow's other QPs. A flush or a retry exceeded proves nothing (an ACK
			 * may have been lost): those stay counted. */
			q.settled = true;
			const uint64_t seq = wc.wr_id & kSeqMask;
			if (r->p.flow_window && never_arrived(wc.status) && seq < q.sent)
				r->flow_credit[q.flow].lost += q.sent - seq;
		}
		return;
	}
	if (r->p.reliable) {
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
	r->retire(r, qi, wc.wr_id);
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

/* Completions other lanes polled for this one. */
int take_handed(Requester *r, uint64_t now)
{
	void *e[kTxPollBurst];
	unsigned n = rte_ring_sc_dequeue_burst(r->lane_rings[r->lane], e, kTxPollBurst, nullptr);
	for (unsigned i = 0; i < n; i++) {
		uint64_t v = reinterpret_cast<uint64_t>(e[i]);
		ibv_wc wc{};
		wc.status = static_cast<ibv_wc_status>(v >> 56);
		wc.wr_id = v & kSeqMask;
		wc.opcode = verb_wc_opcode(r->p.verb);
		on_send_wc(r, static_cast<uint32_t>((v >> 40) & 0xffff), wc, now);
	}
	r->c.handed_in += n;
	return static_cast<int>(n);
}

/* Polls the shared send CQ once and dispatches by qp_num (and, on shared QPs, by the
 * lane in the wr_id). Returns completions seen. */
int poll_send(Requester *r)
{
	ibv_wc wc[kTxPollBurst];
	int n = r->ops->poll_cq(r->send_cq, kTxPollBurst, wc);
	if (n < 0) {
		r->c.fail_reason = "ibv_poll_cq on the send CQ failed";
		return -1;
	}
	const uint64_t now = n || r->lane_rings ? rte_rdtsc() : 0;
	for (int i = 0; i < n; i++) {
		uint32_t qi = r->table.find(wc[i].qp_num);
		if (qi == QpTable::kNone) {
			if (r->send_peer.on_wc)
				r->send_peer.on_wc(r->send_peer.role, wc[i], now);
			else
				r->c.wc_errors.count(wc[i]);
			continue;
		}
		const uint32_t owner = static_cast<uint32_t>(wc[i].wr_id >> kLaneShift);
		if (owner != r->lane) {
			if (!hand_over(r, owner, qi, wc[i]))
				return -1;
			continue;
		}
		wc[i].wr_id &= kSeqMask;
		on_send_wc(r, qi, wc[i], now);
	}
	if (r->lane_rings)
		n += take_handed(r, now);
	return n;
}

/* Bound buffers: the QP takes those of its first round of messages from the pool, as
 * they are first needed, and keeps them. False when the pool is short. */
bool bind(Requester *r, RequesterQp &q, uint32_t n)
{
	const uint64_t size = r->inflight_mask + 1;
	if (q.bound == size || q.sent + n <= q.bound)
		return true;
	const uint32_t k = static_cast<uint32_t>(std::min<uint64_t>(q.sent + n, size) - q.bound);
	if (rte_mempool_get_bulk(r->pool, &q.inflight[q.bound], k) != 0)
		return false;
	for (uint32_t i = q.bound; i < q.bound + k; i++)
		q.lkeys[i] = r->mrs->lkey_of(q.inflight[i]);
	q.bound += k;
	return true;
}

bool qp_done(const RequesterQp &q)
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
		for (uint32_t i = 0; i < r->nqps; i++)
			r->qps[i].target = r->qps[i].sent + 1;
	}
}

/* Per flow, what the control plane set: a rate (what is due by now at the rate in
 * force, a batch ahead so that chains stay whole, less what the flow sent since
 * that rate was set) and a batch. Paused: nothing is due, and waiting is progress. */
inline void pace_flows(Requester *r, uint64_t now, uint64_t *due, uint32_t *cap)
{
	const RequesterParams &p = r->p;
	const bool paused = r->ctl->is_paused() && !r->timed_out;
	if (paused)
		r->last_progress = now;
	for (uint32_t f = 0; f < r->nflows; f++) {
		const FlowControl &fc = r->flow_ctl[f];
		Requester::Pace &pc = r->pace[f];
		const uint64_t tpm = fc.tsc_per_msg.load(std::memory_order_relaxed);
		if (tpm != pc.tsc_per_msg)
			pc = Requester::Pace{tpm, now, r->flow_sent[f]};
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
inline uint64_t qp_room(Requester *r, RequesterQp &q, uint64_t want, uint64_t now)
{
	const RequesterParams &p = r->p;
	uint64_t room = p.reliable ? (p.sq_depth - (q.wr_posted - q.wr_done)) / r->ck.count : p.sq_depth - (q.sent - q.completed);
	if (p.wr_budget) {
		const uint64_t left = (p.wr_budget > r->wr_out ? p.wr_budget - r->wr_out : 0) / r->ck.count;
		if (left < room)
			room = left;
	}
	if (q.credit_word) {
		const uint64_t window_room = qp_window_room(r, q, want, now);
		if (window_room < room)
			room = window_room;
	}
	if (p.flow_window) {
		const uint64_t flow_room = flow_window_room(r, q, want, now);
		if (flow_room < room)
			room = flow_room;
	}
	return room;
}

/* The length of QP q's next chain: at most a batch (the flow's, cap), as the room
 * and the flow's rate (due: UINT64_MAX, none) allow. */
inline uint64_t chain_length(Requester *r, RequesterQp &q, uint64_t due, uint32_t cap, uint64_t now)
{
	const RequesterParams &p = r->p;
	/* What a whole chain would be here: a window that reopens by whole chains
	 * holds a shorter one until it does. */
	const uint64_t want = std::min<uint64_t>(std::min<uint64_t>(q.target - q.sent, p.batch), cap);
	const uint64_t room = qp_room(r, q, want, now);
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
inline uint64_t take_buffers(Requester *r, RequesterQp &q, uint64_t n)
{
	if (r->in)
		return rte_ring_sc_dequeue_burst(r->in, r->bufs, static_cast<unsigned>(n), nullptr);
	if (r->bound ? !bind(r, q, static_cast<uint32_t>(n))
		     : rte_mempool_get_bulk(r->pool, r->bufs, static_cast<unsigned>(n)) != 0)
		return 0;
	return n;
}

/* One QP's turn in a burst: a chain as long as it may be. Returns messages posted. */
inline uint32_t qp_turn(Requester *r, uint32_t qi, uint64_t due, uint32_t cap, uint64_t now)
{
	RequesterCounters &c = r->c;
	const RequesterParams &p = r->p;
	RequesterQp &q = r->qps[qi];
	uint64_t n = chain_length(r, q, due, cap, now);
	/* Out of window, send queue or buffers: they come back with credits and
	 * signalled completions. Fed by a ring: what the stage before has made. */
	if (n == 0)
		return 0;
	n = take_buffers(r, q, n);
	if (n == 0)
		return 0;
	/* Fed until its input ends, any chain may be a QP's last: each ends signalled,
	 * so that none leaves unsignalled sends behind. */
	/* Under a WR budget too: a QP's unsignalled WRs must not wait on a signalled
	 * one that the budget, spent on other QPs, keeps it from posting. */
	const ChainEnd end = q.sent + n == q.target	       ? kChainLast
			     : p.count_from_input || p.wr_budget ? kChainSignalled
								 : kChainMore;
	if (r->post_chain(r, qi, static_cast<uint32_t>(n), end) != 0) {
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
inline void after_burst(Requester *r, bool busy, uint64_t now)
{
	RequesterCounters &c = r->c;
	const RequesterParams &p = r->p;
	if (busy)
		r->live.polls_busy.store(++c.polls_busy, std::memory_order_relaxed);
	else
		r->live.polls_idle.store(++c.polls_idle, std::memory_order_relaxed);
	r->idler.idle(busy);
	if (now - r->last_progress > p.stall_tsc) {
		c.fail_reason = p.reliable ? "gave up: nothing acknowledged within the stall timeout while retransmitting (the peer or the path is gone)"
				: r->in	    ? "stalled: no credit or completion for the send queues, or nothing from the ring"
					    : "stalled: no credit or completion for the send queues";
		c.fail_reason = describe_stall(r, c.fail_reason);
		r->finished = true;
	}
}

} // namespace

uint32_t requester_burst(Requester *r)
{
	RequesterCounters &c = r->c;
	const RequesterParams &p = r->p;
	if (r->ctl->aborted()) {
		c.fail_reason = r->ctl->abort_reason();
		r->finished = true;
		return 0;
	}
	int polled = poll_send(r);
	if (polled < 0) {
		r->finished = true;
		return 0;
	}
	uint64_t now = rte_rdtsc();
	/* UC completes a send whether or not it arrived: a reliable flow progresses only
	 * when its ACKs do, so a cut wire ends it at its stall timeout. */
	if (polled > 0 && !p.reliable)
		r->last_progress = now;
	if (p.reliable) {
		int acks = poll_acks(r, now);
		if (acks < 0) {
			r->finished = true;
			return 0;
		}
		polled += acks;
	}
	end_warmup(r, now);
	end_when_due(r, now);

	uint64_t due[kMaxFlows];
	uint32_t cap[kMaxFlows];
	pace_flows(r, now, due, cap);
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
		if (q.paused)
			ask_when_quiet(r, q);
		if (q.sent >= q.target || q.paused)
			continue;   // draining, or waiting for the receiver to restart the QP
		posted += qp_turn(r, qi, due[q.flow], cap[q.flow], now);
	}
	if (all_done) {
		r->finished = true;
		return posted;
	}
	after_burst(r, posted || polled > 0, now);
	return posted + static_cast<uint32_t>(polled);
}

void requester_on_send_wc(void *requester, const ibv_wc &wc, uint64_t now)
{
	auto *r = static_cast<Requester *>(requester);
	uint32_t qi = r->table.find(wc.qp_num);
	if (qi == QpTable::kNone) {
		r->c.wc_errors.count(wc);
		return;
	}
	ibv_wc own = wc;
	own.wr_id &= kSeqMask;
	on_send_wc(r, qi, own, now);
	if (!r->p.reliable && now > r->last_progress)
		r->last_progress = now;   // the other role polled it: still progress of ours
}

void requester_input_ended(Requester *r)
{
	for (uint32_t i = 0; i < r->nqps; i++) {
		RequesterQp &q = r->qps[i];
		if (q.target > q.sent) {
			q.target = q.sent;
			if (r->c.fail_reason == nullptr && !r->timed_out && !r->p.count_from_input && !r->ctl->ending())
				r->c.fail_reason = "its input ended early: the stages before it made fewer messages than the flow's count";
		}
	}
}

int requester_run(Requester *r)
{
	requester_start(r);
	while (!r->finished)
		requester_burst(r);
	return requester_finish(r);
}

} // namespace rp
