/* ACKs from a hostile receiver, into a live reliable requester (UC made reliable in
 * software) on the faked NIC of the unit tests: messages are posted as the rdma_tx
 * burst admits them (send queue and window), send completions come back, and ACKs
 * made from the input (every field the peer controls: QP, cum, credit, SACK bitmap,
 * flags, epoch; decoded by ack_valid as off the control QP) are handed to
 * requester_on_ack. Asserted after every step, per QP: nothing acknowledged that was
 * never sent, the send queue never holds more WRs than its depth (a SACK cannot make
 * the sender retransmit past it), credit never beyond what was sent, and every buffer
 * either in flight or back in the pool, once (no double free, no leak); at the end an
 * honest ACK of everything returns every buffer. */
#include "engine/reliability.h"
#include "engine/requester.h"

#include "../unit/eal_for_tests.h"
#include "../unit/fake_verbs.h"

#include <fuzzer/FuzzedDataProvider.h>
#include <rte_cycles.h>
#include <rte_mempool.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr unsigned kPool = 4096;
constexpr uint32_t kMaxMsg = 256;
rte_mempool *g_pool;
rp::MrTable g_mrs;

void check(bool ok)
{
	if (!ok)
		abort();
}

struct Run {
	std::vector<ibv_qp> qps;
	std::vector<unsigned char> remote;
	rp::RunControl ctl;
	rp::Requester r;
	uint64_t now = 0, skew = 0;   // the requester stamps posts with rte_rdtsc: time runs from there
};

/* Sequences sent on q: messages, or their chunks (as the requester counts them). */
uint64_t seqs_sent(const rp::Requester &r, const rp::RequesterQp &q)
{
	return q.sent * r.ck.count;
}

uint64_t in_flight(const rp::Requester &r)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < r.nqps; i++)
		n += r.qps[i].sent - r.qps[i].completed;
	return n;
}

void invariants(const rp::Requester &r)
{
	for (uint32_t i = 0; i < r.nqps; i++) {
		const rp::RequesterQp &q = r.qps[i];
		check(q.acked <= seqs_sent(r, q) && q.completed <= q.sent && q.ack_credit <= q.sent);
		check(q.wr_done <= q.wr_posted && q.wr_posted - q.wr_done <= r.p.sq_depth);
	}
	check(rte_mempool_avail_count(g_pool) + in_flight(r) == kPool);
}

/* As requester_burst admits new messages on QP qi: its send queue room in whole
 * messages, its window past the receiver's credit, a batch at most. */
void post(Run &x, uint32_t qi, uint32_t want)
{
	rp::Requester &r = x.r;
	rp::RequesterQp &q = r.qps[qi];
	if (q.paused || q.failed || q.sent >= q.target)
		return;
	uint64_t room = (r.p.sq_depth - (q.wr_posted - q.wr_done)) / r.ck.count;
	room = std::min<uint64_t>(room, r.p.window - (q.sent - q.ack_credit));
	uint64_t n = std::min<uint64_t>({want, room, r.p.batch, q.target - q.sent});
	if (n == 0 || rte_mempool_get_bulk(g_pool, r.bufs, static_cast<unsigned>(n)) != 0)
		return;
	const rp::ChainEnd end = q.sent + n == q.target ? rp::kChainLast : rp::kChainMore;
	check(r.post_chain(&r, qi, static_cast<uint32_t>(n), end) == 0);
}

void poll(Run &x)
{
	ibv_wc wc[32];
	int n;
	while ((n = fake::kOps.poll_cq(fake::nic().send_cq_handle, 32, wc)) > 0)
		for (int i = 0; i < n; i++)
			rp::requester_on_send_wc(&x.r, wc[i], x.now);
}

/* An ACK as the peer may send it: fields from the input, near what was sent often
 * enough to reach past the decoder, through ack_valid as the control QP's bytes. */
void ack(Run &x, FuzzedDataProvider &in)
{
	rp::Requester &r = x.r;
	rp::AckMsg a{};
	a.magic = in.ConsumeProbability<float>() < 0.02f ? in.ConsumeIntegral<uint16_t>() : rp::kAckMagic;
	a.version = in.ConsumeProbability<float>() < 0.02f ? in.ConsumeIntegral<uint8_t>() : rp::kAckVersion;
	a.flags = in.ConsumeIntegral<uint8_t>() & (in.ConsumeBool() ? 0xff : rp::kAckRestarted | rp::kAckBroken);
	const uint32_t qi = in.ConsumeIntegralInRange<uint32_t>(0, r.nqps);   // nqps: a QP not ours
	a.qpn = qi < r.nqps ? x.qps[qi].qp_num : in.ConsumeIntegral<uint32_t>();
	const uint64_t sent = qi < r.nqps ? seqs_sent(r, r.qps[qi]) : 0;
	a.cum = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, sent + 2) : in.ConsumeIntegral<uint64_t>();
	a.credit = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint64_t>(0, a.cum) : in.ConsumeIntegral<uint64_t>();
	for (uint64_t &w : a.sack)
		w = in.ConsumeIntegral<uint64_t>();
	a.epoch = in.ConsumeIntegralInRange<uint64_t>(0, 3);
	rp::AckMsg got;
	if (!rp::ack_valid(&a, sizeof(a), &got))
		return;
	const uint32_t idx = r.table.find(got.qpn);
	if (idx != rp::QpTable::kNone && !(got.flags & rp::kCtrlRestartRequest))
		rp::requester_on_ack(&r, idx, got, x.now);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	if (!eal_for_tests("fuzz_requester_ack"))
		abort();
	g_pool = rte_mempool_create("fz_tx", kPool, kMaxMsg, 0, 0, nullptr, nullptr, nullptr, nullptr, 0, 0);
	check(g_pool != nullptr);
	fake::map_pool(g_pool, &g_mrs);
	return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzedDataProvider in(data, size);
	fake::reset();
	fake::nic().check_len = 0;
	Run x;
	rp::Requester &r = x.r;
	rp::RequesterParams &p = r.p;
	const uint32_t nqps = in.ConsumeIntegralInRange<uint32_t>(1, 4);
	p.verb = rp::Verb::write_imm;
	p.msg_bytes = in.ConsumeIntegralInRange<uint32_t>(8, kMaxMsg);
	p.chunk_bytes = in.ConsumeBool() ? in.ConsumeIntegralInRange<uint32_t>(1, p.msg_bytes) : 0;
	p.batch = in.ConsumeIntegralInRange<uint32_t>(1, 32);
	p.signal_every = in.ConsumeIntegralInRange<uint32_t>(1, 32);
	p.sq_depth = in.ConsumeIntegralInRange<uint32_t>(1, 256);
	p.window = in.ConsumeIntegralInRange<uint32_t>(1, 128);
	p.messages = in.ConsumeIntegralInRange<uint64_t>(1, 4000);
	p.stall_tsc = UINT64_MAX;
	p.corrupt_msg = UINT64_MAX;
	p.inject_loss = in.ConsumeBool() ? in.ConsumeIntegral<uint32_t>() : 0;   // WRs tracked, never posted
	p.reliable = true;
	p.rto_min_tsc = 1000;
	p.rto_max_tsc = 1000000;
	p.rto_initial_tsc = 10000;
	p.ns_per_tsc = 1;
	r.ops = &fake::kOps;
	r.send_cq = fake::nic().send_cq_handle;
	r.pool = g_pool;
	r.mrs = &g_mrs;
	r.ctl = &x.ctl;
	std::string err;
	if (rp::requester_init(&r, nqps, &err) != 0)
		return 0;   // sizes the builder would refuse
	x.qps.assign(nqps, ibv_qp{});
	const uint64_t per_qp = static_cast<uint64_t>(p.window) * p.msg_bytes;
	x.remote.assign(per_qp * nqps, 0);
	for (uint32_t i = 0; i < nqps; i++) {
		x.qps[i].qp_num = fake::kQpNumBase + i;
		r.qps[i].qp = &x.qps[i];
		r.qps[i].remote = {reinterpret_cast<uintptr_t>(x.remote.data()) + i * per_qp, 77, p.window};
	}
	check(rp::requester_add_qps(&r, &err) == 0);
	rp::requester_start(&r);

	while (in.remaining_bytes() > 0) {
		x.skew += in.ConsumeIntegralInRange<uint64_t>(0, 20000);
		x.now = rte_rdtsc() + x.skew;
		switch (in.ConsumeIntegralInRange<int>(0, 2)) {
		case 0: post(x, in.ConsumeIntegralInRange<uint32_t>(0, nqps - 1), in.ConsumeIntegralInRange<uint32_t>(1, 64)); break;
		case 1: poll(x); break;
		default: ack(x, in); break;
		}
		invariants(r);
	}
	/* An honest receiver acknowledges everything: every buffer comes back. */
	x.now = rte_rdtsc() + x.skew;
	poll(x);
	for (uint32_t i = 0; i < nqps; i++) {
		rp::RequesterQp &q = r.qps[i];
		const uint64_t all = seqs_sent(r, q);
		rp::AckMsg a{rp::kAckMagic, rp::kAckVersion, 0, x.qps[i].qp_num, all, all, {}, 0};
		rp::requester_on_ack(&r, i, a, x.now);
		poll(x);
		invariants(r);
		check(q.failed || q.completed == q.sent);
	}
	check(rte_mempool_avail_count(g_pool) + in_flight(r) == kPool);
	/* Whatever a failed QP still holds goes back for the next input. */
	for (uint32_t i = 0; i < nqps; i++)
		for (uint64_t s = r.qps[i].completed; s < r.qps[i].sent; s++)
			rte_mempool_put(g_pool, r.qps[i].inflight[s & r.inflight_mask]);
	return 0;
}
