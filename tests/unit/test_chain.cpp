/* Chain building and SRQ replenishment against the faked verbs seam. */
#include "engine/qp_table.h"
#include "engine/recv_refill.h"
#include "engine/wr_chain.h"
#include "fake_verbs.h"

#include "cmocka_cpp.h"

#include <algorithm>
#include <vector>

namespace {

constexpr uint32_t kMsg = 64;
constexpr uint64_t kRemote = 0x7000000;
constexpr uint32_t kRkey = 0xabc;

struct Bufs {
	std::vector<unsigned char> mem = std::vector<unsigned char>(64 * kMsg);
	rp::MrTable mrs;
	void *ptrs[64];
	Bufs()
	{
		auto base = reinterpret_cast<uintptr_t>(mem.data());
		/* Two "chunks" with different lkeys, as a mempool spread over two MRs would be. */
		mrs.chunks[0] = {base, base + 32 * kMsg, 0x11};
		mrs.chunks[1] = {base + 32 * kMsg, base + 64 * kMsg, 0x22};
		mrs.n = 2;
		for (int i = 0; i < 64; i++)
			ptrs[i] = mem.data() + i * kMsg;
	}
};

constexpr rp::RemoteTarget kWindow20{kRemote, kRkey, 20};

void init_rejects_bad_sizes(void **)
{
	rp::SendChain c;
	assert_int_equal(c.init(rp::Verb::write_imm, 0, 1, kMsg), -EINVAL);
	assert_int_equal(c.init(rp::Verb::write_imm, 8, 0, kMsg), -EINVAL);
	assert_int_equal(c.init(rp::Verb::write_imm, 8, 8, 0), -EINVAL);
	assert_int_equal(c.init(rp::Verb::write_imm, 8, 8, kMsg), 0);
}

void chain_is_linked_and_filled(void **)
{
	Bufs b;
	rp::SendChain c;
	assert_int_equal(c.init(rp::Verb::write_imm, 16, 8, kMsg), 0);
	fake::reset();
	fake::nic().execute_one_sided = false;   // kRemote is not memory
	ibv_send_wr *head = c.build<rp::Verb::write_imm>(10, 12, &b.ptrs[26], b.mrs, false, kWindow20);
	ibv_send_wr *bad = nullptr;
	assert_int_equal(fake::kOps.post_send(nullptr, head, &bad), 0);
	c.relink(12);

	auto &chain = fake::nic().chains.at(0);
	assert_int_equal(chain.size(), 12);   // the chain ends after n, not after batch
	for (uint32_t i = 0; i < 12; i++) {
		const fake::PostedWr &w = chain[i];
		uint64_t seq = 10 + i;
		assert_int_equal(w.opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
		assert_int_equal(w.wr_id, seq);
		assert_int_equal(w.imm_host, seq);
		assert_int_equal(w.rkey, kRkey);
		assert_int_equal(w.num_sge, 1);
		assert_int_equal(w.sge_len, kMsg);
		assert_ptr_equal(reinterpret_cast<void *>(w.sge_addr), b.ptrs[26 + i]);
		assert_int_equal(w.lkey, 26 + i < 32 ? 0x11u : 0x22u);
		/* Remote slot wraps at the window (20 slots). */
		assert_int_equal(w.remote_addr, kRemote + (seq % 20) * kMsg);
		/* Signalled once per 8 WRs: seq 15 and 23 (0-based 16th and 24th). */
		bool sig = (seq + 1) % 8 == 0;
		assert_int_equal(!!(w.send_flags & IBV_SEND_SIGNALED), sig);
	}

	/* After relink the full batch chains again: build 16 from 0. */
	head = c.build<rp::Verb::write_imm>(0, 16, b.ptrs, b.mrs, false, kWindow20);
	int n = 0;
	for (ibv_send_wr *w = head; w; w = w->next)
		n++;
	assert_int_equal(n, 16);
	c.relink(16);
}

void last_chain_ends_the_run(void **)
{
	Bufs b;
	rp::SendChain c;
	assert_int_equal(c.init(rp::Verb::write_imm, 8, 32, kMsg), 0);
	ibv_send_wr *head = c.build<rp::Verb::write_imm>(100, 3, b.ptrs, b.mrs, true, rp::RemoteTarget{kRemote, kRkey, 64});
	ibv_send_wr *w = head;
	for (int i = 0; i < 2; i++, w = w->next) {
		assert_int_equal(ntohl(w->imm_data) & rp::kImmLast, 0);
		assert_int_equal(w->send_flags & IBV_SEND_SIGNALED, 0);
	}
	/* The run's final WR carries the LAST flag and is signalled so the sender can drain. */
	assert_int_equal(ntohl(w->imm_data), 102u | rp::kImmLast);
	assert_int_equal(w->send_flags & IBV_SEND_SIGNALED, IBV_SEND_SIGNALED);
	assert_null(w->next);
	c.relink(3);
}

void imm_sequence_wraps_at_31_bits(void **)
{
	Bufs b;
	rp::SendChain c;
	assert_int_equal(c.init(rp::Verb::write_imm, 2, 2, kMsg), 0);
	uint64_t seq = (1ull << 31) - 1;
	ibv_send_wr *head = c.build<rp::Verb::write_imm>(seq, 2, b.ptrs, b.mrs, false, rp::RemoteTarget{kRemote, kRkey, 2});
	assert_int_equal(ntohl(head->imm_data), rp::kImmSeqMask);
	assert_int_equal(ntohl(head->next->imm_data), 0u);
	assert_int_equal(head->next->wr_id, seq + 1);   // wr_id keeps the full 64-bit sequence
	c.relink(2);
}

/* Each verb's chain: the opcode set once at init, and only its own fields filled. */
void every_verb_fills_its_fields(void **)
{
	Bufs b;
	const rp::RemoteTarget word{0x8000, 5, 0};
	rp::SendChain c;

	assert_int_equal(c.init(rp::Verb::send, 4, 4, kMsg), 0);
	ibv_send_wr *w = c.build<rp::Verb::send>(0, 2, b.ptrs, b.mrs, false, rp::RemoteTarget{});
	assert_int_equal(w->opcode, IBV_WR_SEND);
	assert_int_equal(w->imm_data, 0);
	assert_int_equal(w->wr.rdma.remote_addr, 0);
	c.relink(2);

	assert_int_equal(c.init(rp::Verb::send_imm, 4, 4, kMsg), 0);
	w = c.build<rp::Verb::send_imm>(7, 1, b.ptrs, b.mrs, true, rp::RemoteTarget{});
	assert_int_equal(w->opcode, IBV_WR_SEND_WITH_IMM);
	assert_int_equal(ntohl(w->imm_data), 7u | rp::kImmLast);
	c.relink(1);

	assert_int_equal(c.init(rp::Verb::write, 4, 4, kMsg), 0);
	w = c.build<rp::Verb::write>(21, 2, b.ptrs, b.mrs, false, kWindow20);
	assert_int_equal(w->opcode, IBV_WR_RDMA_WRITE);
	assert_int_equal(w->imm_data, 0);
	assert_int_equal(w->wr.rdma.remote_addr, kRemote + 1 * kMsg);
	assert_int_equal(w->next->wr.rdma.remote_addr, kRemote + 2 * kMsg);
	c.relink(2);

	assert_int_equal(c.init(rp::Verb::read, 4, 4, kMsg), 0);
	w = c.build<rp::Verb::read>(19, 2, b.ptrs, b.mrs, false, kWindow20);
	assert_int_equal(w->opcode, IBV_WR_RDMA_READ);
	assert_int_equal(w->wr.rdma.remote_addr, kRemote + 19 * kMsg);
	assert_int_equal(w->next->wr.rdma.remote_addr, kRemote);   // wrapped
	assert_int_equal(w->wr.rdma.rkey, kRkey);
	c.relink(2);

	/* Both atomics leave the word at seq + 1 and return seq. */
	assert_int_equal(c.init(rp::Verb::fetch_add, 4, 4, 8), 0);
	w = c.build<rp::Verb::fetch_add>(40, 2, b.ptrs, b.mrs, false, word);
	assert_int_equal(w->opcode, IBV_WR_ATOMIC_FETCH_AND_ADD);
	assert_int_equal(w->wr.atomic.remote_addr, 0x8000);
	assert_int_equal(w->wr.atomic.rkey, 5);
	assert_int_equal(w->wr.atomic.compare_add, 1);
	assert_int_equal(w->sg_list->length, 8);
	c.relink(2);

	assert_int_equal(c.init(rp::Verb::cmp_swap, 4, 4, 8), 0);
	w = c.build<rp::Verb::cmp_swap>(40, 2, b.ptrs, b.mrs, false, word);
	assert_int_equal(w->opcode, IBV_WR_ATOMIC_CMP_AND_SWP);
	assert_int_equal(w->wr.atomic.compare_add, 40);
	assert_int_equal(w->wr.atomic.swap, 41);
	assert_int_equal(w->next->wr.atomic.compare_add, 41);
	assert_int_equal(w->next->wr.atomic.swap, 42);
	c.relink(2);
}

void inline_and_fence_flags(void **)
{
	Bufs b;
	rp::SendChain c;
	assert_int_equal(c.init(rp::Verb::write, 4, 2, kMsg, IBV_SEND_INLINE, true), 0);
	ibv_send_wr *w = c.build<rp::Verb::write>(0, 3, b.ptrs, b.mrs, false, kWindow20);
	/* Inline on every WR, the fence on the chain's first only, signals where due. */
	assert_int_equal(w->send_flags, IBV_SEND_INLINE | IBV_SEND_FENCE);
	assert_int_equal(w->next->send_flags, IBV_SEND_INLINE | IBV_SEND_SIGNALED);
	assert_int_equal(w->next->next->send_flags, IBV_SEND_INLINE);
	c.relink(3);
	w = c.build<rp::Verb::write>(3, 1, b.ptrs, b.mrs, false, kWindow20);
	assert_int_equal(w->send_flags, IBV_SEND_INLINE | IBV_SEND_FENCE | IBV_SEND_SIGNALED);
	c.relink(1);
}

/* Prebuilt chains against the chain built per post (build_bound): the same WRs for
 * consecutive chains of uneven lengths that wrap the period, the buffers' ring and the
 * window, end signalled or end the run, on two QPs in turn. */
template <rp::Verb V>
void prebuilt_matches_built(unsigned flags, bool fence)
{
	Bufs b;
	constexpr uint32_t kRing = 8, kSlots = 12, kEvery = 4, kQps = 2;
	const uint32_t period = rp::PrebuiltChains::period_for(kRing, rp::verb_info(V).atomic ? 0 : kSlots, kEvery, 1024);
	assert_int_equal(period, rp::verb_info(V).atomic ? 8 : 24);
	rp::PrebuiltChains pre;
	rp::SendChain ref;
	assert_int_equal(pre.init(V, kQps, period, kEvery, kMsg, flags, fence), 0);
	assert_int_equal(ref.init(V, kRing, kEvery, kMsg, flags, fence), 0);
	/* QP q's bound buffers: 8 of b's (two MRs: lkeys 0x11 and 0x22). */
	void *ring[kQps][kRing];
	uint32_t lkeys[kQps][kRing];
	for (uint32_t q = 0; q < kQps; q++)
		for (uint32_t i = 0; i < kRing; i++) {
			ring[q][i] = b.ptrs[28 + q * kRing + i];
			lkeys[q][i] = b.mrs.lkey_of(ring[q][i]);
		}
	const rp::RemoteTarget t[kQps] = {{kRemote, kRkey, kSlots}, {kRemote + 0x10000, kRkey + 1, kSlots}};
	const uint32_t lens[] = {5, 3, 8, 1, 7, 8, 2, 8, 8, 4, 6, 8, 1, 8, 8, 3};
	const uint64_t total = 89;   // the run's length per QP: its last chain ends it
	uint64_t sent[kQps] = {};
	fake::reset();
	fake::nic().execute_one_sided = false;   // kRemote is not memory
	for (uint32_t k = 0; sent[0] < total || sent[1] < total; k++) {
		const uint32_t q = k % kQps;
		const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(lens[k % 16], total - sent[q]));
		if (n == 0)
			continue;
		const bool last = sent[q] + n == total, signal_end = k % 5 == 0;
		ibv_send_wr *head = pre.build<V>(q, sent[q], n, ring[q], lkeys[q], kRing - 1, last, t[q], signal_end);
		ibv_send_wr *bad = nullptr;
		assert_int_equal(fake::kOps.post_send(nullptr, head, &bad), 0);
		pre.restore();
		head = ref.build_bound<V>(sent[q], n, ring[q], lkeys[q], kRing - 1, last, t[q], signal_end);
		assert_int_equal(fake::kOps.post_send(nullptr, head, &bad), 0);
		ref.relink(n);
		const auto &got = fake::nic().chains.at(fake::nic().chains.size() - 2);
		const auto &want = fake::nic().chains.back();
		assert_int_equal(got.size(), n);
		assert_int_equal(want.size(), n);
		for (uint32_t i = 0; i < n; i++) {
			const fake::PostedWr &g = got[i], &w = want[i];
			const uint64_t seq = sent[q] + i;
			assert_int_equal(g.opcode, w.opcode);
			assert_int_equal(g.send_flags, w.send_flags);
			assert_int_equal(g.sge_addr, w.sge_addr);
			assert_ptr_equal(reinterpret_cast<void *>(g.sge_addr), ring[q][seq % kRing]);
			assert_int_equal(g.lkey, w.lkey);
			assert_int_equal(g.sge_len, kMsg);
			assert_int_equal(g.num_sge, 1);
			assert_int_equal(g.remote_addr, w.remote_addr);
			assert_int_equal(g.rkey, w.rkey);
			if (rp::verb_has_imm(V))
				assert_int_equal(g.imm_host, w.imm_host);
			/* Only signalled WRs carry their sequence; the others keep one congruent
			 * mod the period (PrebuiltChains::full_seq recovers it). */
			if (g.send_flags & IBV_SEND_SIGNALED)
				assert_int_equal(g.raw_wr_id, seq);
			assert_int_equal(g.raw_wr_id % pre.period(), seq % pre.period());
			assert_int_equal(pre.full_seq(g.raw_wr_id, sent[q]), seq);
			assert_int_equal(w.wr_id, seq);
		}
		const fake::PostedWr &end = got[n - 1];
		if (last || signal_end)
			assert_int_equal(end.send_flags & IBV_SEND_SIGNALED, IBV_SEND_SIGNALED);
		if (rp::verb_has_imm(V))
			assert_int_equal(end.imm_host, ((sent[q] + n - 1) & rp::kImmSeqMask) | (last ? rp::kImmLast : 0));
		sent[q] += n;
	}
	/* The atomics' operands. */
	ibv_send_wr *w = pre.build<V>(0, total, 2, ring[0], lkeys[0], kRing - 1, false, t[0]);
	if (V == rp::Verb::cmp_swap) {
		assert_int_equal(w->wr.atomic.compare_add, total);
		assert_int_equal(w->next->wr.atomic.swap, total + 2);
	}
	if (V == rp::Verb::fetch_add) {
		assert_int_equal(w->wr.atomic.compare_add, 1);
		assert_int_equal(w->wr.atomic.remote_addr, kRemote);
	}
	pre.restore();
}

void prebuilt_chains(void **)
{
	prebuilt_matches_built<rp::Verb::write>(0, false);
	prebuilt_matches_built<rp::Verb::write_imm>(0, false);
	prebuilt_matches_built<rp::Verb::send>(IBV_SEND_INLINE, false);
	prebuilt_matches_built<rp::Verb::send_imm>(0, false);
	prebuilt_matches_built<rp::Verb::read>(0, true);
	prebuilt_matches_built<rp::Verb::fetch_add>(0, false);
	prebuilt_matches_built<rp::Verb::cmp_swap>(0, true);
}

void prebuilt_period(void **)
{
	using P = rp::PrebuiltChains;
	assert_int_equal(P::period_for(128, 1024, 32, 1024), 1024);   // the default one-QP run
	assert_int_equal(P::period_for(128, 256, 32, 1024), 256);
	assert_int_equal(P::period_for(128, 0, 32, 1024), 128);       // sends: no window
	assert_int_equal(P::period_for(128, 100, 32, 1024), 0);       // 3200: built per post
	assert_int_equal(P::period_for(8, 12, 3, 1024), 24);
	rp::PrebuiltChains pre;
	assert_int_equal(pre.init(rp::Verb::write, 1, 24, 5, kMsg), -EINVAL);   // not a multiple of the signal
	assert_int_equal(pre.init(rp::Verb::write, 0, 24, 4, kMsg), -EINVAL);
	assert_int_equal(pre.init(rp::Verb::write, 1, 24, 4, kMsg), 0);
}

void qp_table(void **)
{
	rp::QpTable t;
	t.init(64);
	for (uint32_t i = 0; i < 64; i++)
		assert_true(t.insert(0x11 + i * 0x40, i));
	assert_false(t.insert(0x11, 99));   // duplicate
	for (uint32_t i = 0; i < 64; i++)
		assert_int_equal(t.find(0x11 + i * 0x40), i);
	assert_int_equal(t.find(0x12), rp::QpTable::kNone);
	assert_int_equal(t.find(0xffffff), rp::QpTable::kNone);
	assert_int_equal(t.finder().find(0x11 + 63 * 0x40), 63);
	assert_int_equal(t.finder().find(0x10), rp::QpTable::kNone);
}

/* The dense array: numbers inserted in any order (one below the first remakes it), found
 * by index; numbers below, between and past them, and past the span, are none. Once the
 * numbers spread wider than the span, the hash finds them all the same. */
void qp_table_dense_and_spread(void **)
{
	rp::QpTable t;
	t.init(8);
	for (uint32_t q : {0x120u, 0x121u, 0x125u, 0x11fu, 0x130u})
		assert_true(t.insert(q, q - 0x100));
	assert_false(t.insert(0x125, 1));
	for (uint32_t q : {0x120u, 0x121u, 0x125u, 0x11fu, 0x130u}) {
		assert_int_equal(t.find(q), q - 0x100);
		assert_int_equal(t.finder().find(q), q - 0x100);
	}
	for (uint32_t q : {0x0u, 0x11eu, 0x122u, 0x131u, 0x11fu + rp::QpTable::kDenseSpan, 0xffffffu}) {
		assert_int_equal(t.find(q), rp::QpTable::kNone);
		assert_int_equal(t.finder().find(q), rp::QpTable::kNone);
	}
	assert_true(t.insert(0x120 + rp::QpTable::kDenseSpan, 77));   // now too spread for the array
	assert_null(t.finder().dense);
	assert_int_equal(t.finder().find(0x120 + rp::QpTable::kDenseSpan), 77);
	for (uint32_t q : {0x120u, 0x121u, 0x125u, 0x11fu, 0x130u})
		assert_int_equal(t.finder().find(q), q - 0x100);
	assert_int_equal(t.finder().find(0x122), rp::QpTable::kNone);
	t.init(2);   // made again: dense once more
	assert_true(t.insert(0x500, 0));
	assert_non_null(t.finder().dense);
	assert_int_equal(t.find(0x120), rp::QpTable::kNone);
	assert_int_equal(t.find(0x500), 0);
}

void signalling_arithmetic(void **)
{
	/* One completion per N WRs: N=1 signals all, N=32 signals 31, 63, ... */
	for (uint64_t i = 0; i < 100; i++)
		assert_true(rp::wr_signalled(i, 1));
	uint64_t sig = 0;
	for (uint64_t i = 0; i < 320; i++)
		sig += rp::wr_signalled(i, 32);
	assert_int_equal(sig, 10);
	assert_false(rp::wr_signalled(30, 32));
	assert_true(rp::wr_signalled(31, 32));
}

void mr_lookup(void **)
{
	Bufs b;
	assert_int_equal(b.mrs.lkey_of(b.ptrs[0]), 0x11);
	assert_int_equal(b.mrs.lkey_of(b.ptrs[63]), 0x22);
	assert_int_equal(b.mrs.lkey_of(b.mem.data() + b.mem.size()), UINT32_MAX);
}

void srq_fill_and_batched_refill(void **)
{
	fake::reset();
	rp::RecvRefill r;
	assert_int_equal(r.init(nullptr, 0, 1, 32), -EINVAL);
	assert_int_equal(r.init(nullptr, 100, 101, 32), -EINVAL);
	assert_int_equal(r.init(nullptr, 1000, 100, 32), 0);
	/* Setup fills every receive, in chains of threshold + burst = 132. */
	assert_int_equal(r.fill(fake::kOps), 1000);
	assert_int_equal(fake::nic().srq_posted, 1000);
	assert_int_equal(fake::nic().srq_chains.size(), 8);   // 7 x 132 + 76
	assert_int_equal(fake::nic().srq_chains[0], 132);
	assert_int_equal(fake::nic().srq_chains[7], 76);
	assert_int_equal(r.missing(), 0);

	/* Below the threshold nothing is posted. */
	r.consumed(nullptr, 99);
	assert_int_equal(r.refill(fake::kOps), 0);
	assert_int_equal(fake::nic().srq_chains.size(), 8);
	/* At it, everything missing goes in one call. */
	r.consumed(nullptr, 32);
	assert_int_equal(r.refill(fake::kOps), 131);
	assert_int_equal(fake::nic().srq_chains.size(), 9);
	assert_int_equal(fake::nic().srq_chains[8], 131);
	assert_int_equal(r.missing(), 0);
	assert_int_equal(r.posted(), 1000);
	assert_int_equal(fake::nic().srq_posted, 1131);
	assert_int_equal(r.post_calls(), 9);
}

void srq_post_error_keeps_count(void **)
{
	fake::reset();
	rp::RecvRefill r;
	assert_int_equal(r.init(nullptr, 64, 16, 8), 0);
	assert_int_equal(r.fill(fake::kOps), 64);
	r.consumed(nullptr, 20);
	fake::nic().srq_fail_after = 64 + 5;   // the 6th receive of the refill fails
	assert_int_equal(r.refill(fake::kOps), -ENOMEM);
	/* The 5 that made it are counted as posted; 15 remain missing for the next try. */
	assert_int_equal(r.missing(), 15);
	fake::nic().srq_fail_after = -1;
	/* 15 is below the threshold: nothing until one more is consumed, then all 16. */
	assert_int_equal(r.refill(fake::kOps), 0);
	r.consumed(nullptr, 1);
	assert_int_equal(r.refill(fake::kOps), 16);
	assert_int_equal(r.missing(), 0);
}

/* A receive completion of QP qp_num, as the receive CQ would give it. */
ibv_wc recv_wc(uint32_t qp_num)
{
	ibv_wc w{};
	w.qp_num = qp_num;
	w.status = IBV_WC_SUCCESS;
	w.opcode = IBV_WC_RECV;
	return w;
}

void per_qp_queues_refill_only_what_is_due(void **)
{
	fake::reset();
	ibv_qp qps[3]{};
	for (uint32_t i = 0; i < 3; i++)
		qps[i].qp_num = fake::kQpNumBase + i;
	rp::RecvRefill r;
	assert_int_equal(r.init_qps(2, 8), 0);
	assert_int_equal(r.add_qp(&qps[0], 20, 4), 0);
	assert_int_equal(r.add_qp(&qps[0], 20, 4), -EEXIST);
	assert_int_equal(r.add_qp(&qps[1], 4, 5), -EINVAL);   // threshold above depth
	assert_int_equal(r.add_qp(&qps[1], 10, 2), 0);
	assert_int_equal(r.add_qp(&qps[2], 10, 2), -EINVAL);  // no room left
	assert_true(r.per_qp());
	/* Setup posts each QP's queue full, in chains of at most threshold + burst. */
	assert_int_equal(r.fill(fake::kOps), 30);
	assert_int_equal(fake::nic().rq_wr_ids[qps[0].qp_num].size(), 20);
	assert_int_equal(fake::nic().rq_wr_ids[qps[1].qp_num].size(), 10);
	assert_int_equal(fake::nic().srq_posted, 0);   // nothing went to an SRQ
	assert_int_equal(fake::nic().rq_chains.size(), 3);   // 12 + 8 for QP 0, 10 for QP 1
	assert_int_equal(fake::nic().rq_chains[0].second, 12);
	assert_int_equal(r.posted(), 30);

	/* Completions count against their own QP; one of no known QP is skipped. */
	ibv_wc wc[6] = {recv_wc(qps[0].qp_num), recv_wc(qps[1].qp_num), recv_wc(qps[0].qp_num),
			recv_wc(qps[0].qp_num), recv_wc(0x999), recv_wc(qps[1].qp_num)};
	r.consumed(wc, 6);
	assert_int_equal(r.missing(), 5);
	/* QP 1 reached its threshold of 2, QP 0 (3 of 4) did not: only QP 1 is posted to. */
	const size_t calls = fake::nic().rq_chains.size();
	assert_int_equal(r.refill(fake::kOps), 2);
	assert_int_equal(fake::nic().rq_chains.size(), calls + 1);
	assert_int_equal(fake::nic().rq_chains.back().first, qps[1].qp_num);
	assert_int_equal(fake::nic().rq_chains.back().second, 2);
	assert_int_equal(r.missing(), 3);
	assert_int_equal(r.refill(fake::kOps), 0);   // nothing due

	/* A held QP (stopped for a restart) is not posted to until it is released. */
	r.hold(qps[0].qp_num, true);
	r.consumed(wc, 1);   // QP 0 at its threshold
	assert_int_equal(r.refill(fake::kOps), 0);
	r.hold(qps[0].qp_num, false);
	assert_int_equal(r.refill(fake::kOps), 4);
	assert_int_equal(fake::nic().rq_chains.back().first, qps[0].qp_num);
	assert_int_equal(r.missing(), 0);
	assert_int_equal(r.posted(), 30);
}

void per_qp_post_error_keeps_count(void **)
{
	fake::reset();
	ibv_qp qp{};
	qp.qp_num = fake::kQpNumBase;
	rp::RecvRefill r;
	assert_int_equal(r.init_qps(1, 8), 0);
	assert_int_equal(r.add_qp(&qp, 16, 4), 0);
	assert_int_equal(r.fill(fake::kOps), 16);
	ibv_wc wc[6];
	for (ibv_wc &w : wc)
		w = recv_wc(qp.qp_num);
	r.consumed(wc, 6);
	fake::nic().rq_wr_ids[qp.qp_num].clear();
	fake::nic().rq_cap = 2;   // the queue takes 2 of the 6
	assert_int_equal(r.refill(fake::kOps), -ENOMEM);
	assert_int_equal(r.missing(), 4);
	fake::nic().rq_cap = UINT32_MAX;
	/* Still due: the next refill posts the rest. */
	assert_int_equal(r.refill(fake::kOps), 4);
	assert_int_equal(r.missing(), 0);
}

} // namespace

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(init_rejects_bad_sizes),
		cmocka_unit_test(chain_is_linked_and_filled),
		cmocka_unit_test(last_chain_ends_the_run),
		cmocka_unit_test(imm_sequence_wraps_at_31_bits),
		cmocka_unit_test(every_verb_fills_its_fields),
		cmocka_unit_test(inline_and_fence_flags),
		cmocka_unit_test(prebuilt_chains),
		cmocka_unit_test(prebuilt_period),
		cmocka_unit_test(qp_table),
		cmocka_unit_test(qp_table_dense_and_spread),
		cmocka_unit_test(signalling_arithmetic),
		cmocka_unit_test(mr_lookup),
		cmocka_unit_test(srq_fill_and_batched_refill),
		cmocka_unit_test(srq_post_error_keeps_count),
		cmocka_unit_test(per_qp_queues_refill_only_what_is_due),
		cmocka_unit_test(per_qp_post_error_keeps_count),
	};
	return cmocka_run_group_tests_name("chain", tests, nullptr, nullptr);
}
