/* The receiving role against the faked NIC: verification, sequence checks, credit
 * return, completion errors and stalls, all without hanging. */
#include "engine/pattern.h"
#include "engine/receiver.h"
#include "engine/wr_chain.h"
#include "fake_verbs.h"

#include <arpa/inet.h>

#include "cmocka_cpp.h"

#include <vector>

namespace {

constexpr uint32_t kMsg = 24;      // not a multiple of 8: exercises the tail compare
constexpr uint32_t kSlots = 8;

struct Rig {
	std::vector<unsigned char> window = std::vector<unsigned char>(kSlots * kMsg);
	uint64_t credit_src[rp::kCreditRing] = {};
	rp::RunControl ctl;
	rp::Receiver r;

	Rig()
	{
		fake::reset();
		r.ops = &fake::kOps;
		r.recv_cq = fake::nic().recv_cq_handle;
		r.send_cq = fake::nic().send_cq_handle;
		r.window = window.data();
		r.credit_src = credit_src;
		r.credit_remote_addr = 0x5000;
		r.credit_rkey = 9;
		r.ctl = &ctl;
		r.p = rp::ReceiverParams{kMsg, kSlots, 2, true, 2000000000ull, 1000};
		assert_int_equal(r.refill.init(kSlots + 4, 4, rp::kRxPollBurst), 0);
		assert_int_equal(r.refill.fill(fake::kOps, nullptr), static_cast<int>(kSlots + 4));
		/* One message per poll, its payload written into its slot as it is delivered. */
		fake::nic().recv_burst = 1;
		fake::nic().deliver = [this](const ibv_wc &wc) {
			if (wc.status != IBV_WC_SUCCESS)
				return;
			uint64_t seq = wc.wr_id;   // the test keeps the true sequence in wr_id
			rp::pattern_fill(window.data() + (seq % kSlots) * kMsg, kMsg, seq);
			if (seq == corrupt)
				window[(seq % kSlots) * kMsg + 17] ^= 0x40;
		};
	}

	uint64_t corrupt = UINT64_MAX;

	void arrive(uint64_t seq, uint32_t imm_seq, bool last, ibv_wc_status st = IBV_WC_SUCCESS)
	{
		ibv_wc wc{};
		wc.wr_id = seq;
		wc.status = st;
		wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		wc.byte_len = kMsg;
		wc.imm_data = htonl(imm_seq | (last ? rp::kImmLast : 0));
		wc.wc_flags = IBV_WC_WITH_IMM;
		fake::nic().recv_cq.push_back(wc);
	}

	void run_messages(uint64_t n)
	{
		for (uint64_t s = 0; s < n; s++)
			arrive(s, static_cast<uint32_t>(s), s == n - 1);
	}
};

void clean_run(void **)
{
	Rig g;
	g.run_messages(20);
	assert_int_equal(rp::receiver_run(&g.r), 0);
	assert_int_equal(g.r.c.received, 20);
	assert_int_equal(g.r.c.verified, 20);
	assert_int_equal(g.r.c.bytes, 20 * kMsg);
	assert_true(g.r.c.saw_last);
	assert_null(g.r.c.fail_reason);
	/* Credit every 2 messages: 10 signalled 8-byte RDMA_WRITEs of the consumed count. */
	assert_int_equal(g.r.c.credit_writes, 10);
	auto &chains = fake::nic().chains;
	assert_int_equal(chains.size(), 10);
	for (size_t i = 0; i < chains.size(); i++) {
		assert_int_equal(chains[i][0].opcode, IBV_WR_RDMA_WRITE);
		assert_int_equal(chains[i][0].remote_addr, 0x5000);
		assert_int_equal(chains[i][0].sge_len, 8);
		assert_int_equal(*reinterpret_cast<uint64_t *>(chains[i][0].sge_addr), 2 * (i + 1));
	}
	/* 20 receives consumed from a 12-deep SRQ: refilled in batches of >= 4. */
	assert_true(fake::nic().srq_posted >= 12 + 16);
	assert_true(g.r.refill.missing() < 4);
}

void corrupted_payload_is_caught(void **)
{
	Rig g;
	g.corrupt = 5;
	g.run_messages(20);
	assert_int_equal(rp::receiver_run(&g.r), -1);
	assert_int_equal(g.r.c.received, 20);
	assert_int_equal(g.r.c.verified, 19);
	assert_int_equal(g.r.c.payload_errors, 1);
	assert_int_equal(g.r.c.first_bad_seq, 5);
	assert_int_equal(g.r.c.first_bad_offset, 17);
}

void no_verify_skips_payload_only(void **)
{
	Rig g;
	g.r.p.verify = false;
	g.corrupt = 5;
	g.run_messages(10);
	assert_int_equal(rp::receiver_run(&g.r), 0);
	assert_int_equal(g.r.c.payload_errors, 0);
	assert_int_equal(g.r.c.verified, 10);
}

void sequence_gap_is_caught(void **)
{
	Rig g;
	for (uint64_t s = 0; s < 10; s++)
		g.arrive(s, static_cast<uint32_t>(s == 4 ? 5 : s), s == 9);   // imm of #4 skips ahead
	assert_int_equal(rp::receiver_run(&g.r), -1);
	assert_int_equal(g.r.c.sequence_errors, 1);
	assert_int_equal(g.r.c.first_bad_seq, 4);
	assert_int_equal(g.r.c.verified, 9);
}

void completion_error_is_named_and_stops(void **)
{
	Rig g;
	g.arrive(0, 0, false);
	g.arrive(1, 1, false, IBV_WC_REM_ACCESS_ERR);
	g.arrive(2, 2, true);
	assert_int_equal(rp::receiver_run(&g.r), -1);
	assert_string_equal(g.r.c.fail_reason, "receive completion error");
	assert_int_equal(g.r.c.wc_errors.total, 1);
	assert_int_equal(g.r.c.wc_errors.by_status[IBV_WC_REM_ACCESS_ERR], 1);
	assert_int_equal(g.r.c.wc_errors.first_status, IBV_WC_REM_ACCESS_ERR);
}

void stall_ends_the_run(void **)
{
	Rig g;
	g.r.p.stall_tsc = 1000;   // a few microseconds of nothing
	assert_int_equal(rp::receiver_run(&g.r), -1);
	assert_string_equal(g.r.c.fail_reason, "stalled: no message from the writer");
}

void writer_gave_up_early(void **)
{
	Rig g;
	for (uint64_t s = 0; s < 3; s++)
		g.arrive(s, static_cast<uint32_t>(s), false);
	g.ctl.writer_sent.store(3);
	g.ctl.writer_done.store(true);
	/* Everything the writer sent arrived but no LAST: the run ends, and is not clean. */
	assert_int_equal(rp::receiver_run(&g.r), -1);
	assert_int_equal(g.r.c.received, 3);
	assert_false(g.r.c.saw_last);
}

} // namespace

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(clean_run),
		cmocka_unit_test(corrupted_payload_is_caught),
		cmocka_unit_test(no_verify_skips_payload_only),
		cmocka_unit_test(sequence_gap_is_caught),
		cmocka_unit_test(completion_error_is_named_and_stops),
		cmocka_unit_test(stall_ends_the_run),
		cmocka_unit_test(writer_gave_up_early),
	};
	return cmocka_run_group_tests_name("receiver", tests, nullptr, nullptr);
}
