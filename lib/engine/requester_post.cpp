/* The requester's post and retire variants, one per verb and buffer source, chosen once
 * at setup (pick_for_verb) and called through Requester::post_chain and ::retire; and
 * the bursts (requester_burst.h) instantiated here: the lean shape per verb, calling
 * its prebuilt post and retire directly, and the general one (pick_burst). */
#include "engine/requester_burst.h"

#include "engine/pattern.h"

#include <rte_cycles.h>
#include <rte_mempool.h>

#include <arpa/inet.h>

#include <cstring>
#include <type_traits>

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
[[gnu::always_inline]] inline void retire(Requester *r, uint32_t qi, uint64_t upto)
{
	RequesterQp &q = r->qps[qi];
	uint64_t from = q.completed;
	if (upto < from || upto >= q.sent)
		return;
	uint64_t n = upto - from + 1;
	if constexpr (V == Verb::read) {
		for (uint64_t s = from; s <= upto; s++) {
			uint64_t slot = s % q.remote.slots;
			ptrdiff_t bad = pattern_check(q.inflight[s & r->inflight_mask], r->p.msg_bytes, msg_key(key_qp(r, qi), slot));
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

/* What message seq carries (a send or write: the payload pattern of its key's QP
 * index, key_qp), or what a read or atomic must find replaced (a poison value). */
template <Verb V>
inline void payload(void *b, uint32_t len, uint32_t kq, uint64_t seq)
{
	if constexpr (V == Verb::read)
		memset(b, kPoisonByte, len);
	else if constexpr (verb_is_atomic(V))
		memcpy(b, &kPoisonWord, sizeof(kPoisonWord));
	else
		pattern_fill(b, len, msg_key(kq, seq));
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
	if constexpr (V == Verb::read || verb_is_atomic(V))
		payload<V>(b, len, key_qp(r, qi), seq);
	else if constexpr (S == Src::fed) {
	} else if (r->p.self_describing) {
		self_describing_fill(b, len, msg_key(key_qp(r, qi), seq));
	} else if (V != Verb::write || !overwritten(r, r->qps[qi], seq))
		payload<V>(b, len, key_qp(r, qi), seq);
	if (qi == 0 && seq == r->p.corrupt_msg)
		static_cast<unsigned char *>(b)[len / 2] ^= 0x5a;
	if constexpr (S != Src::bound)
		r->qps[qi].inflight[seq & r->inflight_mask] = b;
}

/* Readies messages q.sent.. (n) of QP qi. A plain write's chain that later messages
 * will all overwrite needs nothing (overwritten() holds for its last message, so for
 * all of them), unless the corruption hook falls in it. Other verbs' chains without
 * the hook or a self-describing payload take the payload per message and nothing
 * else (prepare's tests, once a chain). */
template <Verb V, Src S>
void fill_chain(Requester *r, uint32_t qi, uint32_t n, bool hook);

/* Inline: a plain write's chain mostly needs nothing, and a call costs more than the
 * test (callgrind). */
template <Verb V, Src S>
inline void prepare_chain(Requester *r, uint32_t qi, uint32_t n)
{
	RequesterQp &q = r->qps[qi];
	const uint64_t s0 = q.sent;
	const bool hook = qi == 0 && r->p.corrupt_msg - s0 < n;
	if (V == Verb::write && S != Src::fed && !r->p.self_describing && overwritten(r, q, s0 + n - 1) && !hook) {
		if constexpr (S == Src::pool)
			for (uint32_t i = 0; i < n; i++)
				q.inflight[(s0 + i) & r->inflight_mask] = r->bufs[i];
		return;
	}
	fill_chain<V, S>(r, qi, n, hook);
}

/* The rest of prepare_chain: payloads (or poison) for messages q.sent.. (n). */
template <Verb V, Src S>
[[gnu::noinline]] void fill_chain(Requester *r, uint32_t qi, uint32_t n, bool hook)
{
	RequesterQp &q = r->qps[qi];
	const uint64_t s0 = q.sent;
	if (V != Verb::write && S != Src::fed && !r->p.self_describing && !hook) {
		const uint32_t len = r->p.msg_bytes, mask = r->inflight_mask;
		for (uint32_t i = 0; i < n; i++) {
			void *b = S == Src::bound ? q.inflight[(s0 + i) & mask] : r->bufs[i];
			payload<V>(b, len, key_qp(r, qi), s0 + i);
			if constexpr (S != Src::bound)
				q.inflight[(s0 + i) & mask] = b;
		}
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
	for (uint64_t i = every - 1 - seq_mod(q.sent, every, pow2_mask(every)); i < n; i += every)
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

/* The rate run's post (buffers bound, no loss injected, classic API): the QP's
 * prebuilt chain (PrebuiltChains), so that only what changes per message is written;
 * the payloads, stamps and counts as post_chain's. */
template <Verb V>
[[gnu::always_inline]] inline int post_chain_pre(Requester *r, uint32_t qi, uint32_t n, ChainEnd end)
{
	RequesterQp &q = r->qps[qi];
	prepare_chain<V, Src::bound>(r, qi, n);
	ibv_send_wr *bad = nullptr;
	ibv_send_wr *head = r->pre.build<V>(qi, q.sent, n, q.inflight, q.lkeys, r->inflight_mask, end == kChainLast,
					    q.remote, end == kChainSignalled);
	stamp_posts(r, q, n, rte_rdtsc());   // latency from the post, not from filling the payloads
	int ret = r->ops->post_send(q.qp, head, &bad);
	r->c.post_calls++;
	if (ret != 0) {
		/* WRs before `bad` went out; the rest never will. */
		uint32_t ok = 0;
		for (ibv_send_wr *x = head; x != bad && ok < n; x = x->next)
			ok++;
		r->pre.restore();
		count_sent(r, q, ok);
		r->c.post_errors++;
		return -ret;
	}
	r->pre.restore();
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
	r->prebuilt = false;
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
		r->prebuilt = !wr && r->pre.period() && !r->p.inject_loss;
		r->post_chain = wr ? post_chain_wr<V, Src::bound> : r->prebuilt ? post_chain_pre<V> : post_chain<V, Src::bound>;
	} else {
		r->post_chain = wr ? post_chain_wr<V, Src::pool> : post_chain<V, Src::pool>;
	}
	r->retire = r->bound ? retire<V, true> : retire<V, false>;
}

/* The lean shape's post and retire: the verb's prebuilt post and its retire of bound
 * buffers, called directly (what pick<V> chose for such a run). */
template <Verb V>
struct Direct {
	[[gnu::always_inline]] static int post(Requester *r, uint32_t qi, uint32_t n, ChainEnd end)
	{
		return post_chain_pre<V>(r, qi, n, end);
	}
	[[gnu::always_inline]] static void retire(Requester *r, uint32_t qi, uint64_t upto) { rp::retire<V, true>(r, qi, upto); }
};

template <Verb V>
void pick_burst_for(Requester *r)
{
	r->burst = requester_lean(r) ? req::burst<true, Direct<V>> : req::burst<false, req::ViaPointers>;
}

/* f(V) for the requester's verb, V a compile-time constant: the one switch from a run's
 * verb to the templates chosen for it. */
template <class F>
void with_verb(Verb v, F f)
{
	switch (v) {
	case Verb::send: f(std::integral_constant<Verb, Verb::send>{}); break;
	case Verb::send_imm: f(std::integral_constant<Verb, Verb::send_imm>{}); break;
	case Verb::write: f(std::integral_constant<Verb, Verb::write>{}); break;
	case Verb::write_imm: f(std::integral_constant<Verb, Verb::write_imm>{}); break;
	case Verb::read: f(std::integral_constant<Verb, Verb::read>{}); break;
	case Verb::fetch_add: f(std::integral_constant<Verb, Verb::fetch_add>{}); break;
	case Verb::cmp_swap: f(std::integral_constant<Verb, Verb::cmp_swap>{}); break;
	}
}

} // namespace

void pick_burst(Requester *r)
{
	with_verb(r->p.verb, [r](auto v) { pick_burst_for<decltype(v)::value>(r); });
}

void pick_for_verb(Requester *r)
{
	with_verb(r->p.verb, [r](auto v) { pick<decltype(v)::value>(r); });
	r->burst = req::burst<false, req::ViaPointers>;   // until start picks the shape
}

} // namespace rp
