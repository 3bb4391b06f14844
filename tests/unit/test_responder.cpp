/* The responding role against the faked NIC: per-QP sequence and payload checks for
 * WRITE_WITH_IMM and SEND, credit return per QP, the final-state checks of one-sided
 * verbs, completion errors, unknown QPs and stalls, all without hanging. */
#include "engine/pattern.h"
#include "engine/responder.h"
#include "engine/wr_chain.h"
#include "eal_for_tests.h"
#include "fake_verbs.h"

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_mempool.h>

#include <arpa/inet.h>

#include "cmocka_cpp.h"

#include <vector>

namespace {

constexpr uint32_t kMsg = 24;      // not a multiple of 8: exercises the tail compare
uint32_t g_msg = kMsg;             // the size of the rigs made next (Rig::msg)
constexpr uint32_t kSlots = 8;

/* A window shared by the rig's QPs (ResponderParams::flow_window); 0: none. */
struct FlowWindow {
	uint32_t window = 0;
	uint32_t step = 0;
	bool qp_credit = true;
};

struct Rig {
	rp::Verb verb;
	uint32_t nqps;
	std::vector<unsigned char> memory;
	std::vector<uint64_t> credit_src;
	std::vector<uint64_t> credit_dst;   // the requester's credit words (the fake NIC writes them)
	uint64_t flow_dst = 0;              // the requester's flow credit word, with a flow window
	std::vector<ibv_qp> qps;
	std::vector<uint64_t> sent;
	rte_mempool *pool = nullptr;
	rp::MrTable mrs;
	rp::RunControl ctl;
	rp::Responder r;
	uint32_t msg = g_msg;            // the message size (g_msg when the rig was made)
	uint64_t corrupt = UINT64_MAX;   // message of QP 0 whose payload arrives damaged ...
	uint32_t corrupt_at = 17;        // ... at this byte
	std::vector<uint64_t> next;      // per QP: next sequence to arrive

	/* buffers: a write_imm flow's receives carry pool buffers too (an SRQ shared with SENDs). */
	Rig(rp::Verb v, uint32_t n = 1, FlowWindow fw = {}, bool buffers = false) : verb(v), nqps(n), next(n, 0)
	{
		fake::reset();
		memory.assign(rp::responder_memory_per_qp(v, msg, kSlots) * n + 8, 0);
		credit_src.assign(static_cast<size_t>(n) * rp::kCreditRing, 0);
		credit_dst.assign(n, 0);
		qps.assign(n, ibv_qp{});
		sent.assign(n, 0);
		r.ops = &fake::kOps;
		r.recv_cq = fake::nic().recv_cq_handle;
		r.send_cq = fake::nic().send_cq_handle;
		r.memory = memory.data();
		r.credit_src = credit_src.data();
		r.ctl = &ctl;
		r.p = rp::ResponderParams{v, msg, kSlots, 2, true, 2000000000ull, 1000};
		r.p.flow_window = fw.window;
		r.p.flow_step = fw.step;
		r.p.qp_credit = fw.qp_credit;
		std::string err;
		assert_int_equal(rp::responder_init(&r, n, &err), 0);
		if (fw.window) {
			r.flow_credit_addr = reinterpret_cast<uintptr_t>(&flow_dst);
			r.flow_credit_rkey = 11;
		}
		for (uint32_t i = 0; i < n; i++) {
			qps[i].qp_num = fake::kQpNumBase + i;
			r.qps[i].qp = &qps[i];
			r.qps[i].credit_remote_addr = reinterpret_cast<uintptr_t>(&credit_dst[i]);
			r.qps[i].credit_rkey = 9;
		}
		assert_int_equal(rp::responder_add_qps(&r, &err), 0);
		ctl.qp_sent = sent.data();
		if (v == rp::Verb::send || v == rp::Verb::send_imm || buffers) {
			static int id;
			std::string name = "ut_rx" + std::to_string(id++);
			pool = rte_mempool_create(name.c_str(), 64, msg, 0, 0, nullptr, nullptr, nullptr, nullptr, 0, 0);
			assert_non_null(pool);
			mrs.n = 1;
			mrs.chunks[0] = {0, UINTPTR_MAX, 0x33};
			r.rx_pool = pool;
		}
		if (rp::verb_consumes_receive(v)) {
			assert_int_equal(r.refill.init(nullptr, kSlots * n + 4, 4, rp::kRxPollBurst, pool, msg, &mrs), 0);
			assert_int_equal(r.refill.fill(fake::kOps), static_cast<int>(kSlots * n + 4));
		}
		/* One message per poll, its payload put in place as it is delivered. */
		fake::nic().recv_burst = 1;
		fake::nic().deliver = [this](const ibv_wc &wc) {
			if (wc.status != IBV_WC_SUCCESS)
				return;
			uint32_t qi = wc.qp_num - fake::kQpNumBase;
			if (qi >= nqps)
				return;   // a stray completion: nothing to put in place
			uint64_t seq = wc.vendor_err;   // the test keeps the true sequence here
			unsigned char *dst = verb == rp::Verb::write_imm
				? memory.data() + (qi * kSlots + seq % kSlots) * msg
				: reinterpret_cast<unsigned char *>(wc.wr_id);
			rp::pattern_fill(dst, msg, rp::msg_key(qi, seq));
			if (qi == 0 && seq == corrupt)
				dst[corrupt_at] ^= 0x40;
		};
	}
	~Rig() { rte_mempool_free(pool); }

	/* The next message of QP qi arrives, its immediate saying imm_seq. */
	void arrive(uint32_t qi, bool last, ibv_wc_status st = IBV_WC_SUCCESS, int64_t imm_seq = -1)
	{
		ibv_wc wc{};
		wc.status = st;
		wc.qp_num = fake::kQpNumBase + qi;
		wc.opcode = verb == rp::Verb::write_imm ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
		wc.byte_len = msg;
		wc.vendor_err = static_cast<uint32_t>(next[qi]);
		if (rp::verb_has_imm(verb)) {
			wc.wc_flags = IBV_WC_WITH_IMM;
			uint32_t s = static_cast<uint32_t>(imm_seq >= 0 ? imm_seq : static_cast<int64_t>(next[qi]));
			wc.imm_data = htonl(s | (last ? rp::kImmLast : 0));
		}
		wc.wr_id = fake::kFromSrq;
		next[qi]++;
		sent[qi]++;
		fake::nic().recv_cq.push_back(wc);
	}

	/* n messages per QP, interleaved across QPs, the last of each flagged. */
	void run_messages(uint64_t n)
	{
		for (uint64_t s = 0; s < n; s++)
			for (uint32_t q = 0; q < nqps; q++)
				arrive(q, s == n - 1);
	}

	void requester_finished() { ctl.requester_done.store(true); }
};

void write_imm_clean_run_two_qps(void **)
{
	Rig g(rp::Verb::write_imm, 2);
	g.run_messages(20);
	assert_int_equal(rp::responder_run(&g.r), 0);
	assert_int_equal(g.r.c.received, 40);
	assert_int_equal(g.r.c.verified, 40);
	assert_int_equal(g.r.c.bytes, 40 * kMsg);
	assert_true(g.r.qps[0].saw_last && g.r.qps[1].saw_last);
	assert_null(g.r.c.fail_reason);
	/* Credit every 2 messages of a QP: 10 per QP, each an 8-byte RDMA_WRITE of that QP's
	 * consumed count to that QP's credit word. */
	assert_int_equal(g.r.c.credit_writes, 20);
	uint64_t last[2] = {0, 0};
	for (auto &chain : fake::nic().chains) {
		const fake::PostedWr &w = chain[0];
		assert_int_equal(w.opcode, IBV_WR_RDMA_WRITE);
		assert_int_equal(w.sge_len, 8);
		uint32_t qi = static_cast<uint32_t>((w.remote_addr - reinterpret_cast<uintptr_t>(g.credit_dst.data())) / 8);
		assert_true(qi < 2);
		uint64_t v = w.first_word;
		assert_int_equal(v, last[qi] + 2);
		last[qi] = v;
	}
	assert_int_equal(last[0], 20);
	assert_int_equal(last[1], 20);
	assert_int_equal(g.credit_dst[0], 20);   // what the requester would read
	assert_int_equal(g.credit_dst[1], 20);
	/* 40 receives consumed from a 20-deep SRQ: refilled in batches of >= 4. */
	assert_true(fake::nic().srq_posted >= 20 + 36);
	assert_true(g.r.refill.missing() < 4);
}

void send_buffers_are_checked_and_recycled(void **)
{
	for (rp::Verb v : {rp::Verb::send, rp::Verb::send_imm}) {
		Rig g(v);
		g.run_messages(50);
		if (v == rp::Verb::send)
			g.requester_finished();   // no LAST flag without an immediate: counts end the run
		assert_int_equal(rp::responder_run(&g.r), 0);
		assert_int_equal(g.r.c.verified, 50);
		/* Every receive carried a pool buffer; the 12 posted ones are out, the rest back. */
		assert_int_equal(rte_mempool_avail_count(g.pool), 64 - g.r.refill.posted());
	}
}

void corrupted_payload_is_caught(void **)
{
	for (rp::Verb v : {rp::Verb::write_imm, rp::Verb::send_imm}) {
		Rig g(v);
		g.corrupt = 5;
		g.run_messages(20);
		assert_int_equal(rp::responder_run(&g.r), -1);
		assert_int_equal(g.r.c.received, 20);
		assert_int_equal(g.r.c.verified, 19);
		assert_int_equal(g.r.c.payload_errors, 1);
		assert_int_equal(g.r.c.first_bad_seq, 5);
		assert_int_equal(g.r.c.first_bad_offset, 17);
	}
}

void no_verify_skips_payload_only(void **)
{
	Rig g(rp::Verb::write_imm);
	g.r.p.verify = false;
	g.corrupt = 5;
	g.run_messages(10);
	assert_int_equal(rp::responder_run(&g.r), 0);
	assert_int_equal(g.r.c.payload_errors, 0);
	assert_int_equal(g.r.c.verified, 10);
}

void sequence_gap_is_caught(void **)
{
	Rig g(rp::Verb::write_imm);
	for (uint64_t s = 0; s < 10; s++)
		g.arrive(0, s == 9, IBV_WC_SUCCESS, s == 4 ? 5 : static_cast<int64_t>(s));   // #4 claims to be 5
	assert_int_equal(rp::responder_run(&g.r), -1);
	assert_int_equal(g.r.c.sequence_errors, 1);
	assert_int_equal(g.r.c.first_bad_seq, 4);
	assert_int_equal(g.r.c.verified, 9);
}

void completion_error_fails_its_qp_only(void **)
{
	Rig g(rp::Verb::write_imm, 2);
	g.arrive(0, false);
	g.arrive(1, false, IBV_WC_REM_ACCESS_ERR);
	for (int i = 0; i < 5; i++)
		g.arrive(0, i == 4);
	g.sent[1] = 0;   // QP 1's message never counted as sent
	g.requester_finished();
	assert_int_equal(rp::responder_run(&g.r), -1);
	assert_true(g.r.qps[1].failed);
	assert_false(g.r.qps[0].failed);
	assert_int_equal(g.r.c.verified, 6);   // QP 0 went on
	assert_int_equal(g.r.c.wc_errors.total, 1);
	assert_int_equal(g.r.c.wc_errors.by_status[IBV_WC_REM_ACCESS_ERR], 1);
	assert_int_equal(g.r.c.wc_errors.first_status, IBV_WC_REM_ACCESS_ERR);
}

void unknown_qp_is_counted(void **)
{
	Rig g(rp::Verb::write_imm);
	g.arrive(0, false);
	fake::nic().recv_cq.back().qp_num = 0xbeef;
	g.arrive(0, true);
	assert_int_equal(rp::responder_run(&g.r), -1);
	assert_int_equal(g.r.c.unknown_qps, 1);
}

void unexpected_opcode_is_counted(void **)
{
	/* A plain receive on a WRITE_WITH_IMM flow: counted, not verified, the run fails. */
	Rig g(rp::Verb::write_imm);
	g.arrive(0, false);
	fake::nic().recv_cq.back().opcode = IBV_WC_RECV;
	g.arrive(0, true);
	assert_int_equal(rp::responder_run(&g.r), -1);
	assert_int_equal(g.r.c.unexpected_opcodes, 1);
	assert_int_equal(g.r.c.verified, 1);
	assert_int_equal(g.r.c.first_bad_seq, 0);
}

/* The burst's one pass (recv_burst_plain): polls of several completions of several QPs,
 * each verb's variant (window and immediate; buffer; buffer and immediate). Clean, every
 * message verified and each QP's credit right; then, inside the same bursts, a wrong
 * length, a wrong payload byte, a wrong sequence and three completions of no QP of the
 * flow (inside the dense table's span, past it, below it): each counted by kind, and
 * every other message still verified in order. */
void bursts_of_several_qps(void **)
{
	for (rp::Verb v : {rp::Verb::write_imm, rp::Verb::send, rp::Verb::send_imm}) {
		Rig g(v, 3);
		fake::nic().recv_burst = 8;   // within the 28 receives the rig's SRQ holds
		g.run_messages(20);
		if (!rp::verb_has_imm(v))
			g.requester_finished();
		assert_int_equal(rp::responder_run(&g.r), 0);
		assert_int_equal(g.r.c.received, 60);
		assert_int_equal(g.r.c.verified, 60);
		assert_int_equal(g.r.c.bytes, 60 * kMsg);
		assert_true(g.r.c.polls_busy <= 8);   // 60 completions in polls of up to 8
		for (uint32_t q = 0; q < 3; q++)
			assert_int_equal(g.r.qps[q].received, 20);
		if (rp::verb_has_imm(v))
			assert_int_equal(g.r.lasts, 3);
	}
	for (rp::Verb v : {rp::Verb::write_imm, rp::Verb::send, rp::Verb::send_imm}) {
		Rig g(v, 3);
		fake::nic().recv_burst = 8;
		g.corrupt = 4;   // QP 0's message 4: byte 17 flipped
		for (uint64_t s = 0; s < 12; s++) {
			for (uint32_t q = 0; q < 3; q++) {
				g.arrive(q, s == 11);
				if (q == 1 && s == 6)
					fake::nic().recv_cq.back().byte_len = kMsg - 1;
				if (q == 2 && s == 3 && rp::verb_has_imm(v))
					fake::nic().recv_cq.back().imm_data = htonl(9);
			}
			if (s == 8)
				for (uint32_t stray : {fake::kQpNumBase + 100, fake::kQpNumBase + 5000, 0x10u}) {
					g.arrive(0, false);
					g.next[0]--;   // not QP 0's: its sequence goes on
					g.sent[0]--;
					fake::nic().recv_cq.back().qp_num = stray;
					fake::nic().recv_cq.back().wr_id = 0;   // no receive of ours consumed
				}
		}
		if (!rp::verb_has_imm(v))
			g.requester_finished();
		assert_int_equal(rp::responder_run(&g.r), -1);
		const uint64_t bad_seq = rp::verb_has_imm(v) ? 1 : 0;
		assert_int_equal(g.r.c.received, 36);
		assert_int_equal(g.r.c.verified, 36 - 2 - bad_seq);
		assert_int_equal(g.r.c.length_errors, 1);
		assert_int_equal(g.r.c.payload_errors, 1);
		assert_int_equal(g.r.c.sequence_errors, bad_seq);
		assert_int_equal(g.r.c.unknown_qps, 3);
		assert_int_equal(g.r.c.first_bad_qp, 2 * bad_seq);   // in arrival order: QP 2's #3, else QP 0's #4
		assert_int_equal(g.r.c.first_bad_seq, bad_seq ? 3 : 4);
		for (uint32_t q = 0; q < 3; q++)
			assert_int_equal(g.r.qps[q].received, 12);
	}
}

/* The one-pass burst's payload check for sizes of whole 32-byte blocks (64: the variant
 * without a tail) and with a tail (72): a byte flipped at any position of a message is
 * caught, counted once, and every other message verified. */
void one_pass_catches_every_byte_with_and_without_tail(void **)
{
	for (uint32_t size : {64u, 72u})
		for (rp::Verb v : {rp::Verb::write_imm, rp::Verb::send})
			for (uint32_t at = 0; at < size; at++) {
				g_msg = size;
				Rig g(v, 2);
				g_msg = kMsg;
				fake::nic().recv_burst = 8;
				g.corrupt = 2;
				g.corrupt_at = at;
				g.run_messages(6);
				if (!rp::verb_has_imm(v))
					g.requester_finished();
				assert_int_equal(rp::responder_run(&g.r), -1);
				assert_int_equal(g.r.c.payload_errors, 1);
				assert_int_equal(g.r.c.verified, 11);
				assert_int_equal(g.r.c.bytes, 12 * size);
				assert_int_equal(g.r.c.first_bad_seq, 2);
			}
}

/* A write_imm flow on an SRQ shared with SENDs: its receives carry pool buffers, and
 * every one goes back, from the one-pass burst and from the per-message way (a
 * corrupted message) alike. */
void write_imm_receives_with_buffers_give_them_back(void **)
{
	Rig g(rp::Verb::write_imm, 2, {}, true);
	fake::nic().recv_burst = 8;
	g.corrupt = 3;
	g.run_messages(20);
	assert_int_equal(rp::responder_run(&g.r), -1);
	assert_int_equal(g.r.c.verified, 39);
	assert_int_equal(g.r.c.payload_errors, 1);
	assert_int_equal(rte_mempool_avail_count(g.pool), 64 - g.r.refill.posted());
}

void refill_cut_short_by_empty_pool(void **)
{
	/* SEND receives need pool buffers: while checked messages hold them, a refill posts
	 * nothing, counts the shortfall and leaves the receives missing for the next try. */
	Rig g(rp::Verb::send);
	std::vector<void *> held(64 - g.r.refill.posted());
	assert_int_equal(rte_mempool_get_bulk(g.pool, held.data(), static_cast<unsigned>(held.size())), 0);
	g.r.refill.consumed(nullptr, 5);
	assert_int_equal(g.r.refill.refill(fake::kOps), 0);
	assert_int_equal(g.r.refill.buffer_shortfalls(), 1);
	assert_int_equal(g.r.refill.missing(), 5);
	rte_mempool_put_bulk(g.pool, held.data(), static_cast<unsigned>(held.size()));
	assert_int_equal(g.r.refill.refill(fake::kOps), 5);
	assert_int_equal(g.r.refill.missing(), 0);
}

void stall_ends_the_run(void **)
{
	Rig g(rp::Verb::write_imm);
	g.r.p.stall_tsc = 1000;   // a few microseconds of nothing
	assert_int_equal(rp::responder_run(&g.r), -1);
	assert_string_equal(g.r.c.fail_reason, "stalled: no message from the requester");
}

/* A duration run's counts: each reads "not told" (UINT64_MAX) until the peer's write
 * lands, after the messages. The empty polls meanwhile end nothing; the first one after
 * the last count landed ends the run, whichever QP's count came last. */
void counts_told_late_end_the_run(void **)
{
	Rig g(rp::Verb::send, 2);
	std::vector<uint64_t> told(2, UINT64_MAX);
	g.ctl.qp_sent = told.data();
	g.ctl.counts_known = true;
	rp::responder_start(&g.r);
	g.run_messages(3);
	for (int i = 0; i < 20; i++)
		rp::responder_burst(&g.r);
	assert_false(g.r.finished);
	assert_int_equal(g.r.c.received, 6);
	told[0] = 3;
	rp::responder_burst(&g.r);
	assert_false(g.r.finished);
	told[1] = 4;   // one more is on its way
	rp::responder_burst(&g.r);
	assert_false(g.r.finished);
	g.arrive(1, true);
	rp::responder_burst(&g.r);   // it arrives
	rp::responder_burst(&g.r);   // empty: all in
	assert_true(g.r.finished);
	assert_int_equal(rp::responder_finish(&g.r), 0);
	assert_int_equal(g.r.c.received, 7);
}

void requester_gave_up_early(void **)
{
	Rig g(rp::Verb::write_imm);
	for (uint64_t s = 0; s < 3; s++)
		g.arrive(0, false);
	g.requester_finished();
	/* Everything the requester sent arrived: the run ends without a LAST flag. */
	assert_int_equal(rp::responder_run(&g.r), 0);
	assert_int_equal(g.r.c.received, 3);
	assert_false(g.r.qps[0].saw_last);
}

/* What a role sharing the send CQ was handed (CqPeer::on_wc). */
std::vector<ibv_wc> g_peer_got;
void peer_on_wc(void *, const ibv_wc &wc, uint64_t) { g_peer_got.push_back(wc); }

void shared_send_cq_hands_other_qps_to_the_peer(void **)
{
	/* A requester's completion on the shared send CQ reaches it, not the error counts. */
	Rig g(rp::Verb::write_imm);
	g_peer_got.clear();
	g.r.send_peer = rp::CqPeer{peer_on_wc, nullptr};
	ibv_wc foreign{};
	foreign.qp_num = 0x900;
	foreign.wr_id = 31;
	foreign.opcode = IBV_WC_RDMA_WRITE;
	fake::nic().send_cq.push_back(foreign);
	g.run_messages(4);
	assert_int_equal(rp::responder_run(&g.r), 0);
	assert_int_equal(g_peer_got.size(), 1);
	assert_int_equal(g_peer_got[0].qp_num, 0x900);
	assert_int_equal(g_peer_got[0].wr_id, 31);
	assert_int_equal(g.r.c.wc_errors.total, 0);
}

void credit_completions_reaped_by_the_peer_free_credit(void **)
{
	/* The requester on the same lcore reaps the responder's credit-write completions:
	 * handed over, they free the credit ring, and the credit that was held back for
	 * lack of a free source word goes out without another message arriving (else the
	 * requester, out of window, and the responder would wait on each other). */
	Rig g(rp::Verb::write_imm);
	fake::nic().complete_signalled = false;
	rp::responder_start(&g.r);
	for (uint64_t s = 0; s < 2 * (rp::kCreditRing + 1); s++)
		g.arrive(0, false);
	while (!fake::nic().recv_cq.empty())
		rp::responder_burst(&g.r);
	assert_int_equal(g.r.c.credit_writes, rp::kCreditRing);   // the fifth is held back
	assert_int_equal(g.r.qps[0].credit_last, 2 * rp::kCreditRing);
	for (const auto &chain : fake::nic().chains) {
		ibv_wc wc{};
		wc.qp_num = fake::kQpNumBase;
		wc.wr_id = chain[0].wr_id;
		wc.opcode = IBV_WC_RDMA_WRITE;
		rp::responder_on_send_wc(&g.r, wc, 0);
	}
	assert_int_equal(g.r.qps[0].credit_completed, rp::kCreditRing);
	rp::responder_burst(&g.r);   // nothing arrives: only the freed ring lets it go
	assert_int_equal(g.r.c.credit_writes, rp::kCreditRing + 1);
	assert_int_equal(g.r.qps[0].credit_last, 2 * (rp::kCreditRing + 1));
	/* A credit write flushed after a peer process announced its counts (it disconnects
	 * at its end) is judged at the end: the peer's last messages may still be in the
	 * receive CQ when the flush is polled. Meanwhile no credit goes through the QP. */
	ibv_wc flushed{};
	flushed.qp_num = fake::kQpNumBase;
	flushed.status = IBV_WC_WR_FLUSH_ERR;
	uint64_t announced = 2 * (rp::kCreditRing + 1) + rp::kCreditRing;
	g.ctl.qp_sent = &announced;
	g.ctl.counts_known = true;
	rp::responder_on_send_wc(&g.r, flushed, 0);
	assert_int_equal(g.r.c.wc_errors.total, 0);
	assert_int_equal(g.r.qps[0].flushed_credit, 1);
	for (uint32_t s = 0; s < rp::kCreditRing; s++)
		g.arrive(0, false);   // polled after the flush
	while (!fake::nic().recv_cq.empty())
		rp::responder_burst(&g.r);
	assert_int_equal(g.r.c.credit_writes, rp::kCreditRing + 1);   // none through the flushed QP
	rp::responder_finish(&g.r);
	assert_int_equal(g.r.c.credit_flushed_late, 1);
	assert_int_equal(g.r.c.wc_errors.total, 0);
	g.ctl.counts_known = false;
	/* A completion of a QP neither role owns is still an error. */
	ibv_wc stray{};
	stray.qp_num = 0xdead;
	rp::responder_on_send_wc(&g.r, stray, 0);
	assert_int_equal(g.r.c.wc_errors.total, 1);
}

/* A credit write flushed by a peer that announced more than ever arrived is an error,
 * counted at the end. */
void credit_flush_before_all_arrived_is_an_error(void **)
{
	Rig g(rp::Verb::write_imm);
	rp::responder_start(&g.r);
	for (uint32_t s = 0; s < 3; s++)
		g.arrive(0, false);
	while (!fake::nic().recv_cq.empty())
		rp::responder_burst(&g.r);
	ibv_wc flushed{};
	flushed.qp_num = fake::kQpNumBase;
	flushed.status = IBV_WC_WR_FLUSH_ERR;
	uint64_t announced[2] = {4, 0};
	g.ctl.qp_sent = announced;
	g.ctl.counts_known = true;
	rp::responder_on_send_wc(&g.r, flushed, 0);
	assert_int_equal(g.r.c.wc_errors.total, 0);
	rp::responder_finish(&g.r);
	assert_int_equal(g.r.c.wc_errors.total, 1);
	assert_int_equal(g.r.c.credit_flushed_late, 0);
	assert_true(g.r.qps[0].failed);
}

/* The credit writes of a run into the flow's word, in order: their values, and each
 * must be one 8-byte RDMA_WRITE to that word (rkey 11) through QP qp_index. */
std::vector<uint64_t> flow_writes(const Rig &g, uint32_t qp_index)
{
	std::vector<uint64_t> v;
	for (auto &chain : fake::nic().chains)
		for (const fake::PostedWr &w : chain) {
			if (w.remote_addr != reinterpret_cast<uintptr_t>(&g.flow_dst))
				continue;
			assert_int_equal(w.opcode, IBV_WR_RDMA_WRITE);
			assert_int_equal(w.sge_len, 8);
			assert_int_equal(w.rkey, 11);
			assert_true(w.send_flags & IBV_SEND_SIGNALED);
			assert_int_equal(w.qp_num, fake::kQpNumBase + qp_index);
			v.push_back(w.first_word);
		}
	return v;
}

/* A flow window without credit per QP (sends): the flow's consumed count goes into its
 * word every flow_step messages, over all QPs, through QP 0; nothing per QP. */
void flow_credit_every_step_through_qp0(void **)
{
	Rig g(rp::Verb::send_imm, 2, FlowWindow{16, 4, false});
	g.run_messages(20);
	assert_int_equal(rp::responder_run(&g.r), 0);
	assert_int_equal(g.r.c.received, 40);
	const std::vector<uint64_t> v = flow_writes(g, 0);
	assert_int_equal(v.size(), 10);
	for (size_t k = 0; k < v.size(); k++)
		assert_int_equal(v[k], 4 * (k + 1));
	assert_int_equal(g.r.c.credit_writes, 10);   // all of them the flow's
	assert_int_equal(fake::nic().total_wrs(), 10);
	assert_int_equal(g.flow_dst, 40);   // what the requester would read
	assert_int_equal(g.credit_dst[0], 0);
	assert_int_equal(g.credit_dst[1], 0);
}

/* write_imm keeps credit per QP under a flow window (its slots): each QP's count goes
 * to its own word through itself, and the flow's to the flow's word through QP 0. */
void flow_credit_beside_qp_credit(void **)
{
	Rig g(rp::Verb::write_imm, 2, FlowWindow{16, 4, true});
	g.run_messages(10);
	assert_int_equal(rp::responder_run(&g.r), 0);
	const std::vector<uint64_t> v = flow_writes(g, 0);
	const std::vector<uint64_t> want = {4, 8, 12, 16, 20};
	assert_true(v == want);
	uint64_t per_qp[2] = {0, 0};
	for (auto &chain : fake::nic().chains)
		for (const fake::PostedWr &w : chain)
			for (uint32_t qi = 0; qi < 2; qi++)
				if (w.remote_addr == reinterpret_cast<uintptr_t>(&g.credit_dst[qi])) {
					assert_int_equal(w.qp_num, fake::kQpNumBase + qi);
					per_qp[qi]++;
				}
	assert_int_equal(per_qp[0], 5);   // every credit_step (2) of each QP's 10
	assert_int_equal(per_qp[1], 5);
	assert_int_equal(g.r.c.credit_writes, 15);
	assert_int_equal(g.flow_dst, 20);
	assert_int_equal(g.credit_dst[0], 10);
	assert_int_equal(g.credit_dst[1], 10);
}

/* The QP that carries the flow's credit fails: the next write goes through the next QP
 * and carries the count at once, below a step (what went through the failed one may not
 * have landed); then every step again from there. */
void flow_credit_moves_off_a_failed_qp(void **)
{
	Rig g(rp::Verb::send_imm, 2, FlowWindow{16, 4, false});
	rp::responder_start(&g.r);
	auto drain = [&] {
		while (!fake::nic().recv_cq.empty())
			rp::responder_burst(&g.r);
		rp::responder_burst(&g.r);
	};
	for (int i = 0; i < 3; i++) {
		g.arrive(0, false);
		g.arrive(1, false);
	}
	drain();
	assert_int_equal(g.r.c.received, 6);
	assert_true(flow_writes(g, 0) == std::vector<uint64_t>{4});
	g.arrive(0, false, IBV_WC_REM_ACCESS_ERR);
	drain();
	/* The failure alone moves the flow's credit: the count (6, below a step since 4)
	 * goes again through QP 1, since what QP 0 carried may not have landed. */
	assert_true(g.r.qps[0].failed);
	assert_int_equal(g.r.credit_qp, 1);
	const size_t before = fake::nic().chains.size();
	const fake::PostedWr &w = fake::nic().chains.back()[0];
	assert_int_equal(w.qp_num, fake::kQpNumBase + 1);
	assert_int_equal(w.remote_addr, reinterpret_cast<uintptr_t>(&g.flow_dst));
	assert_int_equal(w.first_word, 6);
	assert_int_equal(g.flow_dst, 6);
	assert_int_equal(g.r.c.credit_writes, 2);
	g.arrive(1, false);   // 7: less than a step since 6
	drain();
	assert_int_equal(fake::nic().chains.size(), before);
	for (int i = 0; i < 3; i++)
		g.arrive(1, false);   // 10
	drain();
	assert_int_equal(fake::nic().chains.size(), before + 1);
	assert_int_equal(fake::nic().chains.back()[0].qp_num, fake::kQpNumBase + 1);
	assert_int_equal(g.flow_dst, 10);
	assert_int_equal(g.r.c.credit_writes, 3);
}

/* The flow's credit write itself completes with an error on QP 0 (it never landed): the
 * next burst writes the same count again through QP 1, though no message arrived since
 * and the count did not move from the one last written. */
/* n messages on each of QPs 0 and 1, then bursts until the receive CQ is polled empty. */
void arrive_on_both(Rig &g, int n)
{
	for (int i = 0; i < n; i++) {
		g.arrive(0, false);
		g.arrive(1, false);
	}
	while (!fake::nic().recv_cq.empty())
		rp::responder_burst(&g.r);
}

void flow_credit_write_error_rewrites_through_next_qp(void **)
{
	Rig g(rp::Verb::send_imm, 2, FlowWindow{16, 4, false});
	/* QP 0's first credit write (wr_id 0, tagged as the flow's) fails, and writes nothing. */
	fake::nic().error_at_wr_id = rp::kFlowCreditTag | 0;
	fake::nic().error_qp_num = fake::kQpNumBase;
	fake::nic().error_status = IBV_WC_REM_ACCESS_ERR;
	rp::responder_start(&g.r);
	arrive_on_both(g, 2);
	assert_int_equal(g.r.c.received, 4);
	assert_int_equal(fake::nic().chains.size(), 1);   // the write of 4, through QP 0
	assert_int_equal(fake::nic().chains[0][0].qp_num, fake::kQpNumBase);
	assert_int_equal(fake::nic().chains[0][0].first_word, 4);
	assert_int_equal(g.flow_dst, 0);   // it failed: nothing landed
	assert_int_equal(fake::nic().send_cq.size(), 1);   // its error, not yet polled
	assert_false(g.r.qps[0].failed);
	/* One burst, nothing arriving: it polls the error and writes 4 again through QP 1. */
	rp::responder_burst(&g.r);
	assert_true(g.r.qps[0].failed);
	assert_int_equal(g.r.c.wc_errors.by_status[IBV_WC_REM_ACCESS_ERR], 1);
	assert_int_equal(g.r.credit_qp, 1);
	assert_int_equal(g.r.c.received, 4);
	assert_int_equal(fake::nic().chains.size(), 2);
	const fake::PostedWr &w = fake::nic().chains[1][0];
	assert_int_equal(w.qp_num, fake::kQpNumBase + 1);
	assert_int_equal(w.remote_addr, reinterpret_cast<uintptr_t>(&g.flow_dst));
	assert_int_equal(w.rkey, 11);
	assert_int_equal(w.first_word, 4);
	assert_int_equal(g.flow_dst, 4);   // the requester sees its credit after all
	assert_int_equal(g.r.c.credit_writes, 2);
	/* Once: later bursts with nothing new write nothing more. */
	for (int i = 0; i < 3; i++)
		rp::responder_burst(&g.r);
	assert_int_equal(fake::nic().chains.size(), 2);
}

/* Busy-waits until `tsc` cycles have passed since t0. */
void wait_past(uint64_t t0, uint64_t tsc)
{
	while (rte_rdtsc() - t0 <= tsc)
		;
}

/* The flow's credit write through QP 0 neither lands nor fails (the sender's end of QP 0
 * failed unseen from here; the NIC retries it for ever). Once credit_retry_tsc has passed
 * with it not landed, a burst writes the same count again through QP 1, with nothing new
 * arriving; before that, nothing is written again, and once that one lands, no more. */
void flow_credit_not_landed_moves_to_next_qp(void **)
{
	Rig g(rp::Verb::send_imm, 2, FlowWindow{16, 4, false});
	/* 50 ms: far longer than the bursts below take, however this lcore is scheduled. */
	const uint64_t retry = rte_get_tsc_hz() / 20;
	g.r.p.credit_retry_tsc = retry;
	g.r.p.stall_tsc = 100 * rte_get_tsc_hz();   // the waits below are no stall
	fake::nic().hold_qp_num = fake::kQpNumBase;   // what is posted on QP 0 stays on the wire
	rp::responder_start(&g.r);
	arrive_on_both(g, 2);
	rp::responder_burst(&g.r);
	assert_int_equal(g.r.c.received, 4);
	assert_true(flow_writes(g, 0) == std::vector<uint64_t>{4});   // a step's worth, through QP 0
	assert_int_equal(g.r.flow_credit_last, 4);
	assert_int_equal(g.r.flow_credit_landed, 0);   // not completed
	assert_int_equal(g.flow_dst, 0);
	assert_true(fake::nic().send_cq.empty());
	assert_false(g.r.qps[0].failed);
	/* Within the retry time: not written again. */
	const uint64_t t0 = g.r.flow_write_tsc;
	for (int i = 0; i < 3; i++)
		rp::responder_burst(&g.r);
	assert_true(rte_rdtsc() - t0 < retry);   // else this machine is far too slow for the test
	assert_int_equal(fake::nic().chains.size(), 1);
	assert_int_equal(g.r.c.flow_credit_moves, 0);
	assert_int_equal(g.r.credit_qp, 0);
	/* Past it: the same count, through QP 1, nothing new having arrived. */
	wait_past(t0, retry);
	rp::responder_burst(&g.r);
	assert_int_equal(g.r.c.received, 4);
	assert_int_equal(g.r.credit_qp, 1);
	assert_int_equal(g.r.c.flow_credit_moves, 1);
	assert_int_equal(g.r.c.credit_writes, 2);
	assert_int_equal(fake::nic().chains.size(), 2);
	const fake::PostedWr &w = fake::nic().chains[1][0];
	assert_int_equal(w.qp_num, fake::kQpNumBase + 1);
	assert_int_equal(w.remote_addr, reinterpret_cast<uintptr_t>(&g.flow_dst));
	assert_int_equal(w.rkey, 11);
	assert_true(w.wr_id & rp::kFlowCreditTag);
	assert_int_equal(w.first_word, 4);
	assert_int_equal(g.flow_dst, 4);   // the requester sees its credit after all
	/* Its completion is polled: landed. */
	rp::responder_burst(&g.r);
	assert_int_equal(g.r.flow_credit_landed, 4);
	assert_int_equal(g.r.qps[1].credit_completed, 1);
	/* Landed: however long nothing arrives, no more writes and no more moves. */
	wait_past(g.r.flow_write_tsc, retry);
	for (int i = 0; i < 3; i++)
		rp::responder_burst(&g.r);
	assert_int_equal(fake::nic().chains.size(), 2);
	assert_int_equal(g.r.c.flow_credit_moves, 1);
	assert_int_equal(g.r.credit_qp, 1);
	assert_int_equal(g.r.c.credit_writes, 2);
	assert_false(g.r.finished);
}

void write_final_window_is_checked(void **)
{
	Rig g(rp::Verb::write, 2);
	/* QP 0 sent 13 writes into 8 slots: slots 0-4 hold 8-12, slots 5-7 hold 5-7.
	 * QP 1 sent 3: slots 0-2. */
	g.sent = {13, 3};
	for (uint64_t s = 0; s < 13; s++)
		rp::pattern_fill(g.memory.data() + (s % kSlots) * kMsg, kMsg, rp::msg_key(0, s));
	for (uint64_t s = 0; s < 3; s++)
		rp::pattern_fill(g.memory.data() + (kSlots + s) * kMsg, kMsg, rp::msg_key(1, s));
	g.requester_finished();
	assert_int_equal(rp::responder_run(&g.r), 0);
	assert_int_equal(g.r.c.window_slots_checked, 11);
	assert_int_equal(g.r.c.payload_errors, 0);

	/* A write that never landed (slot 6 of QP 0 still holds message 6? no: zeroes). */
	Rig h(rp::Verb::write);
	h.sent = {13};
	for (uint64_t s = 0; s < 13; s++)
		if (s != 6)
			rp::pattern_fill(h.memory.data() + (s % kSlots) * kMsg, kMsg, rp::msg_key(0, s));
	h.requester_finished();
	assert_int_equal(rp::responder_run(&h.r), -1);
	assert_int_equal(h.r.c.payload_errors, 1);
	assert_int_equal(h.r.c.first_bad_seq, 6);
}

void atomic_final_words_are_checked(void **)
{
	Rig g(rp::Verb::fetch_add, 2);
	g.sent = {7, 9};
	uint64_t w0 = 7, w1 = 8;   // QP 1 lost one increment
	memcpy(g.memory.data(), &w0, 8);
	memcpy(g.memory.data() + 8, &w1, 8);
	g.requester_finished();
	assert_int_equal(rp::responder_run(&g.r), -1);
	assert_int_equal(g.r.c.counters_checked, 2);
	assert_int_equal(g.r.c.payload_errors, 1);
	assert_int_equal(g.r.c.first_bad_qp, 1);
	assert_int_equal(g.r.c.first_bad_seq, 8);   // for atomics: the word found
}

/* A QP whose requester stalled (sent 9, saw 5 complete): its word may count 5 to 9. */
void atomic_final_words_of_a_stalled_qp(void **)
{
	Rig g(rp::Verb::fetch_add, 3);
	g.sent = {9, 9, 9};
	std::vector<uint64_t> completed = {5, 5, 5};
	g.ctl.qp_completed = completed.data();
	const uint64_t words[3] = {7, 4, 10};   // inside; one completed atomic lost; one more than sent
	memcpy(g.memory.data(), words, sizeof(words));
	g.requester_finished();
	assert_int_equal(rp::responder_run(&g.r), -1);
	assert_int_equal(g.r.c.counters_checked, 3);
	assert_int_equal(g.r.c.payload_errors, 2);
	assert_int_equal(g.r.c.first_bad_qp, 1);
	assert_int_equal(g.r.c.first_bad_seq, 4);
}

/* A write window whose requester stalled: slots whose last message did not complete
 * are not judged (it may not have landed), the others are. */
void write_final_window_of_a_stalled_qp(void **)
{
	Rig g(rp::Verb::write);
	g.sent = {13};
	std::vector<uint64_t> completed = {10};
	g.ctl.qp_completed = completed.data();
	for (uint64_t s = 0; s < 10; s++)   // 10-12 never landed: slots 2-4 hold 2-4
		rp::pattern_fill(g.memory.data() + (s % kSlots) * kMsg, kMsg, rp::msg_key(0, s));
	g.requester_finished();
	assert_int_equal(rp::responder_run(&g.r), 0);
	assert_int_equal(g.r.c.window_slots_checked, 5);
	assert_int_equal(g.r.c.payload_errors, 0);

	Rig h(rp::Verb::write);   // the same, and a completed message missing from slot 7
	h.sent = {13};
	h.ctl.qp_completed = completed.data();
	for (uint64_t s = 0; s < 10; s++)
		if (s != 7)
			rp::pattern_fill(h.memory.data() + (s % kSlots) * kMsg, kMsg, rp::msg_key(0, s));
	h.requester_finished();
	assert_int_equal(rp::responder_run(&h.r), -1);
	assert_int_equal(h.r.c.payload_errors, 1);
	assert_int_equal(h.r.c.first_bad_seq, 7);
}

void read_window_is_prefilled(void **)
{
	Rig g(rp::Verb::read, 2);
	for (uint32_t q = 0; q < 2; q++)
		for (uint32_t k = 0; k < kSlots; k++)
			assert_int_equal(rp::pattern_check(g.memory.data() + (q * kSlots + k) * kMsg, kMsg, rp::msg_key(q, k)), -1);
}


/* A reliable responder of one QP (qp numbered kQpNumBase) on the fake NIC, receiving
 * into pool; completions are handed in as the lcore's router would. */
void reliable_one_qp(rp::Responder &r, rp::RunControl &ctl, ibv_qp &qp, rp::Verb v, uint32_t slots, rte_mempool *pool)
{
	qp.qp_num = fake::kQpNumBase;
	r.ops = &fake::kOps;
	r.rx_pool = pool;
	r.ctl = &ctl;
	r.p = rp::ResponderParams{v, kMsg, slots, 4, true, 2000000000ull, 1000};
	r.p.reliable = true;
	std::string err;
	assert_int_equal(rp::responder_init(&r, 1, &err), 0);
	r.qps[0].qp = &qp;
	assert_int_equal(rp::responder_add_qps(&r, &err), 0);
}

/* UC made reliable in software: messages placed by the sequence in their immediate, a
 * hole filled by a retransmitted write (header + chunk, copied into its slot), a
 * duplicate dropped, a header aimed elsewhere refused with nothing written. Completions
 * are handed in as the lcore's router would (responder_on_recv_wc). */
void reliable_places_by_sequence(void **)
{
	fake::reset();
	constexpr uint32_t slots = 16;
	std::vector<unsigned char> memory(slots * kMsg, 0);
	std::vector<unsigned char> rxbuf(sizeof(rp::RetxHeader) + kMsg);
	rte_mempool *pool = rte_mempool_create("ut_rel_rx", 64, sizeof(rp::RetxHeader) + kMsg, 0, 0, nullptr, nullptr, nullptr,
					       nullptr, 0, 0);
	assert_non_null(pool);
	ibv_qp qp{};
	rp::RunControl ctl;
	rp::Responder r;
	r.memory = memory.data();
	reliable_one_qp(r, ctl, qp, rp::Verb::write_imm, slots, pool);
	auto write_imm = [&](uint64_t seq, bool last = false) {
		rp::pattern_fill(memory.data() + (seq % slots) * kMsg, kMsg, rp::msg_key(0, seq));
		ibv_wc wc{};
		wc.qp_num = qp.qp_num;
		wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		wc.wc_flags = IBV_WC_WITH_IMM;
		wc.imm_data = htonl(static_cast<uint32_t>(seq) | (last ? rp::kImmLast : 0));
		wc.byte_len = kMsg;
		rp::responder_on_recv_wc(&r, wc, 1);
	};
	auto retx = [&](uint64_t seq, uint64_t offset) {
		void *b = nullptr;
		assert_int_equal(rte_mempool_get(pool, &b), 0);
		rp::RetxHeader h{offset, htonl(static_cast<uint32_t>(seq))};
		memcpy(b, &h, sizeof(h));
		rp::pattern_fill(static_cast<unsigned char *>(b) + sizeof(h), kMsg, rp::msg_key(0, seq));
		ibv_wc wc{};
		wc.wr_id = reinterpret_cast<uintptr_t>(b);
		wc.qp_num = qp.qp_num;
		wc.opcode = IBV_WC_RECV;
		wc.byte_len = sizeof(h) + kMsg;
		rp::responder_on_recv_wc(&r, wc, 1);
	};
	write_imm(0);
	write_imm(1);
	write_imm(3);   // 2 lost
	assert_int_equal(r.qps[0].win.cum, 2);
	assert_int_equal(r.c.out_of_order, 1);
	assert_true(r.qps[0].ack_now);   // a new hole: ACK at once
	/* A header that names another slot: refused, slot 2 untouched. */
	retx(2, 5 * kMsg);
	assert_int_equal(r.c.retx_header_bad, 1);
	assert_int_equal(memory[2 * kMsg], 0);
	retx(2, static_cast<uint64_t>(slots) * kMsg);   // past the window
	assert_int_equal(r.c.retx_header_bad, 2);
	retx(2, 2 * kMsg);
	assert_int_equal(r.c.retx_received, 1);
	assert_int_equal(r.qps[0].win.cum, 4);
	write_imm(1);   // a duplicate
	assert_int_equal(r.c.duplicates, 1);
	write_imm(4, true);
	assert_true(r.qps[0].complete);
	assert_int_equal(r.lasts, 1);
	assert_int_equal(r.c.received, 5);
	assert_int_equal(r.c.verified, 5);
	assert_int_equal(r.c.payload_errors, 0);
	assert_int_equal(rte_mempool_avail_count(pool), 64);   // every receive buffer back
	rte_mempool_free(pool);
}

/* Reliable sends: a receive buffer goes back to the pool whatever became of its
 * message (a first arrival, a duplicate, a broken one), collected and put back in bulk
 * once the completion's caller is done with it; none is kept or lost. */
void reliable_send_buffers_go_back(void **)
{
	fake::reset();
	rte_mempool *pool = rte_mempool_create("ut_rel_send", 64, kMsg, 0, 0, nullptr, nullptr, nullptr, nullptr, 0, 0);
	assert_non_null(pool);
	ibv_qp qp{};
	rp::RunControl ctl;
	rp::Responder r;
	reliable_one_qp(r, ctl, qp, rp::Verb::send_imm, 16, pool);
	auto send = [&](uint64_t seq, ibv_wc_status st = IBV_WC_SUCCESS) {
		void *b = nullptr;
		assert_int_equal(rte_mempool_get(pool, &b), 0);
		rp::pattern_fill(b, kMsg, rp::msg_key(0, seq));
		ibv_wc wc{};
		wc.status = st;
		wc.wr_id = reinterpret_cast<uintptr_t>(b);
		wc.qp_num = qp.qp_num;
		wc.opcode = IBV_WC_RECV;
		wc.wc_flags = IBV_WC_WITH_IMM;
		wc.imm_data = htonl(static_cast<uint32_t>(seq));
		wc.byte_len = kMsg;
		rp::responder_on_recv_wc(&r, wc, 1);
		assert_int_equal(r.nfreed, 0);
		assert_int_equal(rte_mempool_avail_count(pool), 64);
	};
	send(0);
	send(1);
	send(1);   // a duplicate
	send(2, IBV_WC_REM_INV_REQ_ERR);   // broken: the QP waits for its restart
	assert_int_equal(r.c.received, 2);
	assert_int_equal(r.c.verified, 2);
	assert_int_equal(r.c.duplicates, 1);
	assert_int_equal(r.c.broken, 1);
	rte_mempool_free(pool);
}

/* Chunks: messages of 24 bytes in chunks of 10 (10, 10, 4), each chunk its own
 * sequence. A message counts (and its payload is checked) once all its chunks are in,
 * in whatever order; a resent chunk must name its own place and length. */
void reliable_chunks_make_whole_messages(void **)
{
	fake::reset();
	constexpr uint32_t slots = 4;
	std::vector<unsigned char> memory(slots * kMsg, 0);
	rte_mempool *pool = rte_mempool_create("ut_rel_chunks", 16, sizeof(rp::RetxHeader) + 10, 0, 0, nullptr, nullptr,
					       nullptr, nullptr, 0, 0);
	assert_non_null(pool);
	ibv_qp qp{};
	rp::RunControl ctl;
	rp::Responder r;
	r.memory = memory.data();
	qp.qp_num = fake::kQpNumBase;
	r.ops = &fake::kOps;
	r.rx_pool = pool;
	r.ctl = &ctl;
	r.p = rp::ResponderParams{rp::Verb::write_imm, kMsg, slots, 4, true, 2000000000ull, 1000};
	r.p.reliable = true;
	r.p.chunk_bytes = 10;
	std::string err;
	assert_int_equal(rp::responder_init(&r, 1, &err), 0);
	r.qps[0].qp = &qp;
	assert_int_equal(rp::responder_add_qps(&r, &err), 0);
	assert_int_equal(r.qps[0].win.window, slots * 3);
	unsigned char src[3][kMsg];   // the sender's messages 0..2
	for (uint64_t m = 0; m < 3; m++)
		rp::pattern_fill(src[m], kMsg, rp::msg_key(0, m));
	auto chunk = [&](uint64_t seq, bool last = false) {
		const uint64_t m = seq / 3, off = (seq % 3) * 10, len = seq % 3 == 2 ? 4 : 10;
		memcpy(memory.data() + (m % slots) * kMsg + off, src[m] + off, len);
		ibv_wc wc{};
		wc.qp_num = qp.qp_num;
		wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		wc.wc_flags = IBV_WC_WITH_IMM;
		wc.imm_data = htonl(static_cast<uint32_t>(seq) | (last ? rp::kImmLast : 0));
		wc.byte_len = static_cast<uint32_t>(len);
		rp::responder_on_recv_wc(&r, wc, 1);
	};
	auto retx = [&](uint64_t seq, uint64_t offset, uint32_t len) {
		void *b = nullptr;
		assert_int_equal(rte_mempool_get(pool, &b), 0);
		rp::RetxHeader h{offset, htonl(static_cast<uint32_t>(seq))};
		memcpy(b, &h, sizeof(h));
		memcpy(static_cast<unsigned char *>(b) + sizeof(h), src[seq / 3] + (seq % 3) * 10, len);
		ibv_wc wc{};
		wc.wr_id = reinterpret_cast<uintptr_t>(b);
		wc.qp_num = qp.qp_num;
		wc.opcode = IBV_WC_RECV;
		wc.byte_len = static_cast<uint32_t>(sizeof(h)) + len;
		rp::responder_on_recv_wc(&r, wc, 1);
	};
	chunk(0);
	chunk(2);
	assert_int_equal(r.c.received, 0);   // chunk 1 still missing
	chunk(1);
	assert_int_equal(r.c.received, 1);
	assert_int_equal(r.c.verified, 1);
	chunk(3);
	chunk(5);   // 4 lost
	assert_int_equal(r.qps[0].win.cum, 4);
	assert_int_equal(r.c.received, 1);
	retx(4, kMsg, 10);                 // chunk 3's place
	retx(4, kMsg + 10, 4);             // its place, another's length
	assert_int_equal(r.c.retx_header_bad, 2);
	assert_int_equal(memory[kMsg + 10], 0);   // nothing written
	retx(4, kMsg + 10, 10);
	assert_int_equal(r.c.retx_received, 1);
	assert_int_equal(r.qps[0].win.cum, 6);
	assert_int_equal(r.c.received, 2);
	chunk(4);   // the original, late: a duplicate
	assert_int_equal(r.c.duplicates, 1);
	chunk(6);
	chunk(7);
	chunk(8, true);
	assert_true(r.qps[0].complete);
	assert_int_equal(r.c.received, 3);
	assert_int_equal(r.c.verified, 3);
	assert_int_equal(r.c.bytes, 3 * kMsg);
	assert_int_equal(r.c.payload_errors, 0);
	assert_int_equal(rte_mempool_avail_count(pool), 16);
	rte_mempool_free(pool);
}

/* One reliable send_imm QP and a pool of 8 receive buffers (the restart tests). */
struct RestartRig {
	rte_mempool *pool = nullptr;
	ibv_qp qp{};
	rp::RunControl ctl;
	rp::Responder r;
	explicit RestartRig(const char *name)
	{
		fake::reset();
		pool = rte_mempool_create(name, 8, kMsg, 0, 0, nullptr, nullptr, nullptr, nullptr, 0, 0);
		assert_non_null(pool);
		reliable_one_qp(r, ctl, qp, rp::Verb::send_imm, 8, pool);
	}
	~RestartRig() { rte_mempool_free(pool); }
};

/* A loss inside a multi-packet UC message, as rxe with an SRQ reports it (a receive
 * completed REM_INV_REQ_ERR): the QP is not failed but marked broken (its ACK says so);
 * only the sender's request stops it, and it restarts once the settle time has passed;
 * a receive flushed meanwhile only brings its buffer back; every buffer goes back.
 * When the restart itself fails, the QP and the run fail. */
void reliable_broken_message_restarts_the_qp(void **)
{
	RestartRig g("ut_rel_broken");
	rp::Responder &r = g.r;
	ibv_qp &qp = g.qp;
	rte_mempool *pool = g.pool;
	r.p.restart_settle_tsc = 100;
	auto complete = [&](ibv_wc_status st, uint64_t now) {
		void *b = nullptr;
		assert_int_equal(rte_mempool_get(pool, &b), 0);
		ibv_wc wc{};
		wc.wr_id = reinterpret_cast<uintptr_t>(b);
		wc.qp_num = qp.qp_num;
		wc.status = st;
		rp::responder_on_recv_wc(&r, wc, now);
	};
	complete(IBV_WC_REM_INV_REQ_ERR, 1000);
	assert_true(r.qps[0].broken);
	assert_true(r.qps[0].ack_now);   // the sender hears of it at once
	assert_int_equal(r.c.broken, 1);
	complete(IBV_WC_REM_INV_REQ_ERR, 1010);   // reported once
	assert_int_equal(r.c.broken, 1);
	assert_int_equal(fake::nic().stopped.size(), 0);   // not while the sender may still send
	rp::responder_on_restart_request(&r, 0, 1, 1020);   // the sender's first pause
	assert_false(r.qps[0].broken);
	assert_int_equal(r.c.qp_restarts, 1);
	assert_int_equal(fake::nic().stopped.size(), 1);
	assert_int_equal(fake::nic().stopped[0], qp.qp_num);
	rp::responder_on_restart_request(&r, 0, 1, 1030);   // asked again while stopped: once
	assert_int_equal(fake::nic().stopped.size(), 1);
	assert_false(r.qps[0].restarted);
	complete(IBV_WC_WR_FLUSH_ERR, 1050);             // the receive rxe held, flushed
	assert_int_equal(r.c.broken, 1);
	rp::responder_finish_restarts(&r, 1119);
	assert_int_equal(fake::nic().restarted.size(), 0);   // not before the settle time
	rp::responder_finish_restarts(&r, 1121);
	assert_int_equal(fake::nic().restarted.size(), 1);
	assert_int_equal(fake::nic().restarted[0], qp.qp_num);
	assert_true(r.qps[0].restarted);   // the next ACK says so
	assert_int_equal(r.c.restart_requests, 2);
	/* The sender asks again in the same pause (the ACK was lost): answered again, not
	 * restarted again; a request of an earlier pause, come late, changes nothing. */
	r.qps[0].restarted = false;
	rp::responder_on_restart_request(&r, 0, 1, 1200);
	assert_true(r.qps[0].restarted);
	assert_true(r.qps[0].ack_now);
	r.qps[0].restarted = r.qps[0].ack_now = false;
	rp::responder_on_restart_request(&r, 0, 0, 1210);
	assert_false(r.qps[0].restarted);
	assert_int_equal(fake::nic().stopped.size(), 1);
	assert_int_equal(r.c.qp_restarts, 1);
	assert_false(r.qps[0].failed);
	assert_false(r.finished);
	assert_int_equal(r.c.wc_errors.total, 0);
	/* A receive flushed later (the QP went to ERR by itself): broken the same way. */
	complete(IBV_WC_WR_FLUSH_ERR, 2000);
	assert_int_equal(r.c.broken, 2);
	rp::responder_on_restart_request(&r, 0, 2, 2010);
	fake::nic().restart_error = EINVAL;
	rp::responder_finish_restarts(&r, 3000);
	assert_int_equal(r.c.restart_errors, 1);
	assert_true(r.qps[0].failed);
	assert_true(r.finished);
	assert_non_null(r.c.fail_reason);
	/* Failed, a QP is not broken or stopped again: its errors are counted. */
	complete(IBV_WC_REM_INV_REQ_ERR, 4000);
	assert_int_equal(r.c.broken, 2);
	assert_int_equal(r.c.qp_restarts, 2);
	assert_int_equal(r.c.wc_errors.total, 1);
	assert_int_equal(rte_mempool_avail_count(pool), 8);   // every buffer back
}

/* A QP that cannot even be stopped for its restart fails, and the run with it. */
void reliable_stop_failure_fails_the_qp(void **)
{
	RestartRig g("ut_rel_nostop");
	rp::Responder &r = g.r;
	fake::nic().stop_error = EINVAL;
	rp::responder_on_restart_request(&r, 0, 1, 1);
	assert_int_equal(r.c.qp_restarts, 0);
	assert_int_equal(r.c.restart_errors, 1);
	assert_true(r.qps[0].failed);
	assert_true(r.finished);
	assert_non_null(r.c.fail_reason);
}
} // namespace

int main()
{
	if (!eal_for_tests("test_responder"))
		return 1;
	const CMUnitTest tests[] = {
		cmocka_unit_test(write_imm_clean_run_two_qps),
		cmocka_unit_test(send_buffers_are_checked_and_recycled),
		cmocka_unit_test(corrupted_payload_is_caught),
		cmocka_unit_test(no_verify_skips_payload_only),
		cmocka_unit_test(sequence_gap_is_caught),
		cmocka_unit_test(completion_error_fails_its_qp_only),
		cmocka_unit_test(unknown_qp_is_counted),
		cmocka_unit_test(bursts_of_several_qps),
		cmocka_unit_test(one_pass_catches_every_byte_with_and_without_tail),
		cmocka_unit_test(write_imm_receives_with_buffers_give_them_back),
		cmocka_unit_test(unexpected_opcode_is_counted),
		cmocka_unit_test(refill_cut_short_by_empty_pool),
		cmocka_unit_test(stall_ends_the_run),
		cmocka_unit_test(counts_told_late_end_the_run),
		cmocka_unit_test(requester_gave_up_early),
		cmocka_unit_test(shared_send_cq_hands_other_qps_to_the_peer),
		cmocka_unit_test(credit_completions_reaped_by_the_peer_free_credit),
		cmocka_unit_test(credit_flush_before_all_arrived_is_an_error),
		cmocka_unit_test(flow_credit_every_step_through_qp0),
		cmocka_unit_test(flow_credit_beside_qp_credit),
		cmocka_unit_test(flow_credit_moves_off_a_failed_qp),
		cmocka_unit_test(flow_credit_write_error_rewrites_through_next_qp),
		cmocka_unit_test(flow_credit_not_landed_moves_to_next_qp),
		cmocka_unit_test(write_final_window_is_checked),
		cmocka_unit_test(atomic_final_words_are_checked),
		cmocka_unit_test(atomic_final_words_of_a_stalled_qp),
		cmocka_unit_test(write_final_window_of_a_stalled_qp),
		cmocka_unit_test(read_window_is_prefilled),
		cmocka_unit_test(reliable_places_by_sequence),
		cmocka_unit_test(reliable_send_buffers_go_back),
		cmocka_unit_test(reliable_chunks_make_whole_messages),
		cmocka_unit_test(reliable_broken_message_restarts_the_qp),
		cmocka_unit_test(reliable_stop_failure_fails_the_qp),
	};
	int rc = cmocka_run_group_tests_name("responder", tests, nullptr, nullptr);
	rte_eal_cleanup();
	return rc;
}
