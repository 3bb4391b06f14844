/* The requesting role against the faked NIC, on a real rte_mempool (EAL without
 * hugepages): chains, selective signalling, buffer recycling, flow control, every
 * verb's result checks, and a completion error that stops only its QP. */
#include "engine/pattern.h"
#include "engine/requester.h"
#include "verbs/ctrl_qp.h"
#include "eal_for_tests.h"
#include "fake_verbs.h"

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "cmocka_cpp.h"

#include <arpa/inet.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace {

constexpr unsigned kPoolSize = 1200;
constexpr uint32_t kSlots = 256;

struct Rig {
	rte_mempool *pool;
	rp::MrTable mrs;
	std::vector<uint64_t> credits;
	uint64_t flow_word = 0;              // flow 0's credit word, with p.flow_window
	std::vector<ibv_qp> qps;
	std::vector<unsigned char> remote;   // the responder's memory the fake NIC writes/reads
	rp::RunControl ctl;
	rp::Requester r;

	Rig(rp::RequesterParams p, uint32_t nqps = 1)
	{
		fake::reset();
		static int id;
		/* A unique name: a failed test longjmps past the destructor and leaks its pool. */
		std::string name = "ut_tx" + std::to_string(id++);
		pool = rte_mempool_create(name.c_str(), kPoolSize, p.msg_bytes, 0, 0, nullptr, nullptr, nullptr,
					  nullptr, 0, 0);
		assert_non_null(pool);
		fake::map_pool(pool, &mrs);
		credits.assign(nqps, 0);
		qps.assign(nqps, ibv_qp{});
		uint64_t per_qp = rp::verb_is_atomic(p.verb) ? 8 : static_cast<uint64_t>(kSlots) * p.msg_bytes;
		remote.assign(per_qp * nqps, 0);
		r.ops = &fake::kOps;
		r.send_cq = fake::nic().send_cq_handle;
		r.pool = pool;
		r.mrs = &mrs;
		r.ctl = &ctl;
		r.p = p;
		std::string err;
		assert_int_equal(rp::requester_init(&r, nqps, &err), 0);
		for (uint32_t i = 0; i < nqps; i++) {
			qps[i].qp_num = fake::kQpNumBase + i;
			r.qps[i].qp = &qps[i];
			r.qps[i].remote = {reinterpret_cast<uintptr_t>(remote.data()) + i * per_qp, 77,
					   rp::verb_is_atomic(p.verb) ? 0 : kSlots};
			/* Under a flow window, a QP keeps a credit word only where its own window is
			 * smaller (write_imm's slots), as requester_bind gives it. */
			if (rp::verb_consumes_receive(p.verb) && (p.flow_window == 0 || p.window < p.flow_window))
				r.qps[i].credit_word = &credits[i];
			/* A read finds slot k of QP i holding message key (i, k), as the responder fills it. */
			if (p.verb == rp::Verb::read)
				for (uint32_t k = 0; k < kSlots; k++)
					rp::pattern_fill(remote.data() + i * per_qp + k * p.msg_bytes, p.msg_bytes, rp::msg_key(i, k));
		}
		if (p.flow_window)
			r.flow_credit[0].word = &flow_word;
		assert_int_equal(rp::requester_add_qps(&r, &err), 0);
		/* A responder that consumes at once: one shared credit counter is enough for one QP. */
		if (nqps == 1 && rp::verb_consumes_receive(p.verb))
			fake::nic().credit_word = &credits[0];
		if (!rp::verb_is_atomic(p.verb) && p.verb != rp::Verb::read)
			fake::nic().check_len = p.msg_bytes;
	}
	~Rig() { rte_mempool_free(pool); }
};

rp::RequesterParams params(rp::Verb v, uint64_t messages, uint32_t msg = 40)
{
	/* verb, msg, batch, signal_every, sq_depth, window, messages, duration, stall, corrupt */
	return rp::RequesterParams{v, msg, 32, 32, 128, kSlots, messages, 0, 2000000000ull, UINT64_MAX};
}

void sends_all_in_chains(void **)
{
	Rig g(params(rp::Verb::write_imm, 1000));
	assert_int_equal(rp::requester_run(&g.r), 0);
	const fake::Nic &n = fake::nic();
	assert_int_equal(g.r.c.sent, 1000);
	assert_int_equal(g.r.c.completed, 1000);
	assert_int_equal(n.total_wrs(), 1000);
	assert_int_equal(g.r.c.post_calls, n.chains.size());
	assert_int_equal(n.chains.size(), 32);   // 31 full chains of 32 + one of 8
	uint64_t seq = 0, signalled = 0;
	for (auto &chain : n.chains) {
		assert_true(chain.size() <= 32);
		for (auto &wr : chain) {
			assert_int_equal(wr.wr_id, seq);
			assert_int_equal(wr.opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
			assert_int_equal(wr.remote_addr, reinterpret_cast<uintptr_t>(g.remote.data()) + (seq % kSlots) * 40);
			assert_int_equal(wr.lkey, 0x40);
			bool sig = wr.send_flags & IBV_SEND_SIGNALED;
			assert_int_equal(sig, (seq + 1) % 32 == 0 || seq == 999);
			signalled += sig;
			seq++;
		}
	}
	assert_int_equal(signalled, 32);
	/* Every payload held its pattern when posted, and every buffer came back. */
	assert_int_equal(n.pattern_mismatches, 0);
	assert_int_equal(rte_mempool_avail_count(g.pool), kPoolSize);
	assert_true(g.ctl.requester_done.load());
	assert_int_equal(g.ctl.qp_sent[0], 1000);
}

/* An abort with a reason (a port gone down, from the async events' hook) is named as
 * the requester's failure; one without names only the abort. */
void abort_names_its_reason(void **)
{
	{
		Rig g(params(rp::Verb::write_imm, 1000));
		g.ctl.abort_with("its port went down");
		g.ctl.abort_with("a later reason");   // the first one stays
		assert_int_not_equal(rp::requester_run(&g.r), 0);
		assert_string_equal(g.r.c.fail_reason, "its port went down");
	}
	{
		Rig g(params(rp::Verb::write_imm, 1000));
		rp::RunControl run;
		g.ctl.run = &run;
		run.abort.store(true);
		assert_int_not_equal(rp::requester_run(&g.r), 0);
		assert_string_equal(g.r.c.fail_reason, "aborted");
	}
}

/* Busy bursts look at the control plane every kLookEvery: an abort, the console's end
 * and a pause are each taken in within that many bursts of a busy run. */
void control_is_seen_within_a_look(void **)
{
	for (int what = 0; what < 3; what++) {
		Rig g(params(rp::Verb::write, 1000000));
		rp::requester_start(&g.r);
		for (int i = 0; i < 7; i++)
			assert_int_not_equal(rp::requester_burst(&g.r), 0);   // busy: the fake completes at once
		if (what == 0)
			g.ctl.abort_with("stopped");
		else if (what == 1)
			g.ctl.end();
		else
			g.ctl.paused.store(true);
		uint32_t bursts = 0;
		const uint64_t sent = g.r.c.sent;
		while (!g.r.finished && !g.r.timed_out && !(what == 2 && g.r.paced) && bursts <= rp::kLookEvery) {
			rp::requester_burst(&g.r);
			bursts++;
		}
		assert_true(bursts <= rp::kLookEvery);
		assert_true(g.r.c.sent - sent <= uint64_t{rp::kLookEvery} * 32);
		if (what == 0)
			assert_string_equal(g.r.c.fail_reason, "stopped");
		if (what == 2) {   // paused: nothing more goes
			const uint64_t held = g.r.c.sent;
			for (int i = 0; i < 40; i++)
				rp::requester_burst(&g.r);
			assert_int_equal(g.r.c.sent, held);
			g.ctl.end();
		}
		while (!g.r.finished)
			rp::requester_burst(&g.r);
		rp::requester_finish(&g.r);
	}
}

/* A duration run's deadline is checked every burst, not only at a look. */
void deadline_is_checked_every_burst(void **)
{
	rp::RequesterParams p = params(rp::Verb::write, 0);
	p.duration_tsc = 1ull << 60;
	Rig g(p);
	rp::requester_start(&g.r);
	for (int i = 0; i < 3; i++)
		rp::requester_burst(&g.r);
	g.r.deadline = 0;   // due now
	rp::requester_burst(&g.r);
	assert_true(g.r.timed_out);
	while (!g.r.finished)
		rp::requester_burst(&g.r);
	assert_int_equal(rp::requester_finish(&g.r), 0);
}

void spreads_over_qps(void **)
{
	/* 1000 plain writes over 3 QPs (no credit needed): 334 + 333 + 333, each QP its own
	 * sequence, and every WR posted on the QP it belongs to. */
	Rig g(params(rp::Verb::write, 1000), 3);
	assert_int_equal(rp::requester_run(&g.r), 0);
	assert_int_equal(g.r.qps[0].sent, 334);
	assert_int_equal(g.r.qps[1].sent, 333);
	assert_int_equal(g.r.qps[2].sent, 333);
	assert_int_equal(g.r.c.completed, 1000);
	/* Each QP's window holds its own last messages, keyed by that QP (the responder's
	 * final check: slot k holds the last s < sent with s % slots == k). */
	for (uint32_t qi = 0; qi < 3; qi++) {
		const uint64_t sent = g.r.qps[qi].sent;
		for (uint64_t k = 0; k < kSlots; k++) {
			const uint64_t s = k + (sent - 1 - k) / kSlots * kSlots;
			assert_int_equal(rp::pattern_check(g.remote.data() + (qi * kSlots + k) * 40, 40, rp::msg_key(qi, s)), -1);
		}
	}
	assert_int_equal(rte_mempool_avail_count(g.pool), kPoolSize);
}

/* A plain write of a run of known length: only the messages no later one overwrites
 * (the last window of each QP, which the responder checks) get a pattern; the others
 * are seen by no one. */
void plain_write_stamps_only_the_last_window(void **)
{
	Rig g(params(rp::Verb::write, 1000));
	assert_int_equal(rp::requester_run(&g.r), 0);
	const fake::Nic &n = fake::nic();
	assert_int_equal(n.pattern_mismatches, 1000 - kSlots);
	assert_int_equal(n.first_mismatch, 0);
	for (uint64_t k = 0; k < kSlots; k++) {
		const uint64_t s = k + (999 - k) / kSlots * kSlots;
		assert_int_equal(rp::pattern_check(g.remote.data() + k * 40, 40, rp::msg_key(0, s)), -1);
	}
}

/* Bound buffers: a QP keeps the buffers of its first round of messages (its in-flight
 * ring, 128 here) and posts message s from the s % 128-th of them, each with its lkey;
 * they go back to the pool when the run ends. */
void bound_buffers_are_kept_and_reused(void **)
{
	Rig g(params(rp::Verb::write_imm, 1000));
	rp::requester_start(&g.r);
	assert_true(g.r.bound);
	while (!g.r.finished) {
		rp::requester_burst(&g.r);
		assert_true(rte_mempool_avail_count(g.pool) + g.r.qps[0].bound == kPoolSize);
	}
	assert_int_equal(g.r.qps[0].bound, 128);
	assert_int_equal(rp::requester_finish(&g.r), 0);
	assert_int_equal(rte_mempool_avail_count(g.pool), kPoolSize);
	std::vector<uint64_t> addr(128, 0);
	for (auto &chain : fake::nic().chains)
		for (auto &wr : chain) {
			uint64_t &a = addr[wr.wr_id % 128];
			if (a == 0)
				a = wr.sge_addr;
			assert_int_equal(wr.sge_addr, a);   // message s always from the s % 128-th buffer
			assert_int_equal(wr.lkey, 0x40);
		}
	std::sort(addr.begin(), addr.end());
	assert_true(std::adjacent_find(addr.begin(), addr.end()) == addr.end());   // 128 different buffers
	assert_int_equal(fake::nic().pattern_mismatches, 0);
}

/* A pool that cannot give every QP its ring when the run starts (squeezed by a test, or
 * shared) is used per chain instead: the QPs never wait for buffers others keep. */
void short_pool_is_used_per_chain(void **)
{
	Rig g(params(rp::Verb::write, 4000), 10);   // 10 x 128 > 1200
	assert_true(g.r.bound);
	assert_int_equal(rp::requester_run(&g.r), 0);
	assert_false(g.r.bound);
	assert_int_equal(g.r.c.completed, 4000);
	assert_int_equal(rte_mempool_avail_count(g.pool), kPoolSize);
}

void injected_corruption_reaches_the_wire(void **)
{
	rp::RequesterParams p = params(rp::Verb::write_imm, 100);
	p.corrupt_msg = 42;
	Rig g(p);
	assert_int_equal(rp::requester_run(&g.r), 0);
	assert_int_equal(fake::nic().pattern_mismatches, 1);
	assert_int_equal(fake::nic().first_mismatch, 42);
}

void read_results_are_checked(void **)
{
	Rig g(params(rp::Verb::read, 600, 24));
	assert_int_equal(rp::requester_run(&g.r), 0);
	assert_int_equal(g.r.c.verified, 600);
	assert_int_equal(g.r.c.result_errors, 0);
	/* A slot the responder never filled reads back as a mismatch. */
	Rig h(params(rp::Verb::read, 600, 24));
	h.remote[5 * 24 + 3] ^= 1;
	assert_int_equal(rp::requester_run(&h.r), -1);
	assert_int_equal(h.r.c.result_errors, 3);    // seq 5, 261, 517 all read slot 5
	assert_int_equal(h.r.c.first_bad_seq, 5);
	assert_int_equal(h.r.c.first_bad_offset, 3);
}

void read_that_brings_nothing_is_caught(void **)
{
	/* The buffer is poisoned before each READ: a READ that moves no data fails. */
	Rig g(params(rp::Verb::read, 64, 24));
	fake::nic().execute_one_sided = false;
	assert_int_equal(rp::requester_run(&g.r), -1);
	assert_int_equal(g.r.c.result_errors, 64);
	assert_int_equal(g.r.c.verified, 0);
}

void atomics_return_values_are_checked(void **)
{
	for (rp::Verb v : {rp::Verb::fetch_add, rp::Verb::cmp_swap}) {
		Rig g(params(v, 500, 8), 2);
		assert_int_equal(rp::requester_run(&g.r), 0);
		assert_int_equal(g.r.c.verified, 500);
		uint64_t w0, w1;
		memcpy(&w0, g.remote.data(), 8);
		memcpy(&w1, g.remote.data() + 8, 8);
		assert_int_equal(w0, 250);   // each QP's word moved once per message
		assert_int_equal(w1, 250);
		/* A word that did not start at 0. FETCH_AND_ADD: every return value is off.
		 * CMP_AND_SWP: compares 0, 1, 2 fail (and return 3), then 3 matches and the
		 * rest line up again: exactly those 3 are caught. */
		Rig h(params(v, 10, 8));
		h.remote[0] = 3;
		assert_int_equal(rp::requester_run(&h.r), -1);
		assert_int_equal(h.r.c.result_errors, v == rp::Verb::fetch_add ? 10 : 3);
		assert_int_equal(h.r.c.first_bad_seq, 0);
	}
}

void completion_error_stops_only_its_qp(void **)
{
	Rig g(params(rp::Verb::write, 900), 3);
	fake::nic().error_at_wr_id = 63;   // QP 1's 64th message (a signalled one)
	fake::nic().error_qp_num = fake::kQpNumBase + 1;
	fake::nic().error_status = IBV_WC_REM_ACCESS_ERR;
	assert_int_equal(rp::requester_run(&g.r), -1);
	assert_string_equal(g.r.c.fail_reason, "completion errors");
	assert_int_equal(g.r.c.failed_qps, 1);
	assert_true(g.r.qps[1].failed);
	assert_int_equal(g.r.c.wc_errors.by_status[IBV_WC_REM_ACCESS_ERR], 1);
	/* The other QPs went on to the end; QP 1 retired only up to its last good signal. */
	assert_int_equal(g.r.qps[0].completed, 300);
	assert_int_equal(g.r.qps[2].completed, 300);
	assert_int_equal(g.r.qps[1].completed, 32);
	assert_int_equal(g.r.c.completed, 632);
	assert_true(g.ctl.requester_done.load());
}

/* A WR of a later round of a prebuilt chain (period 256: seq 300 is entry 44's) fails:
 * its error names its own sequence, and QP 0 retired only up to its last good signal. */
void prebuilt_error_names_its_sequence(void **)
{
	Rig g(params(rp::Verb::write, 1000));
	fake::nic().error_at_wr_id = 300;
	fake::nic().error_status = IBV_WC_REM_ACCESS_ERR;
	assert_true(g.r.prebuilt);
	assert_int_equal(g.r.pre.period(), 256);
	assert_int_equal(rp::requester_run(&g.r), -1);
	assert_true(g.r.qps[0].failed);
	assert_int_equal(g.r.c.wc_errors.by_status[IBV_WC_REM_ACCESS_ERR], 1);
	assert_int_equal(g.r.c.wc_errors.first_wr_id, 300);
	assert_int_equal(rte_mempool_avail_count(g.pool), kPoolSize);
}

/* Where no period fits (rings of 128, 256 slots, a signal every 40: 1280), or buffers
 * are not bound, chains are built per post, as before; sends have no window. */
void prebuilt_only_where_the_period_fits(void **)
{
	{
		rp::RequesterParams p = params(rp::Verb::write, 1000);
		p.signal_every = 40;
		Rig g(p);
		assert_int_equal(g.r.pre.period(), 0);
		assert_false(g.r.prebuilt);
		assert_int_equal(rp::requester_run(&g.r), 0);
		assert_int_equal(g.r.c.completed, 1000);
	}
	{
		Rig g(params(rp::Verb::send, 1000));
		assert_int_equal(g.r.pre.period(), 128);   // the buffers' ring
		assert_true(g.r.prebuilt);
		assert_int_equal(rp::requester_run(&g.r), 0);
		assert_int_equal(g.r.c.completed, 1000);
		assert_int_equal(fake::nic().pattern_mismatches, 0);
		assert_int_equal(fake::nic().total_wrs(), 1000);
	}
	{
		rp::RequesterParams p = params(rp::Verb::write, 1000);
		p.inject_loss = 1u << 30;   // plain UC's loss hook relinks chains: built per post
		Rig g(p);
		assert_false(g.r.prebuilt);
	}
}

void flows_split_messages_and_errors(void **)
{
	/* Two flows on one context: a 1-QP flow and a 2-QP flow, 300 messages each. An error
	 * on the 1-QP flow is counted under it alone, and the other flow finishes. */
	Rig g(params(rp::Verb::write, 300), 3);
	const uint32_t sizes[] = {1, 2};
	std::string err;
	assert_int_equal(rp::requester_set_flows(&g.r, sizes, 2, &err), 0);
	assert_int_equal(g.r.qps[0].target, 300);
	assert_int_equal(g.r.qps[1].target, 150);
	assert_int_equal(g.r.qps[2].target, 150);
	assert_int_equal(g.r.qps[0].flow, 0);
	assert_int_equal(g.r.qps[2].flow, 1);
	fake::nic().error_at_wr_id = 63;
	fake::nic().error_qp_num = fake::kQpNumBase;
	fake::nic().error_status = IBV_WC_REM_ACCESS_ERR;
	assert_int_equal(rp::requester_run(&g.r), -1);
	assert_int_equal(g.r.flow_errors[0].by_status[IBV_WC_REM_ACCESS_ERR], 1);
	assert_int_equal(g.r.flow_errors[1].total, 0);
	assert_true(g.r.qps[0].failed);
	assert_int_equal(g.r.qps[1].completed, 150);
	assert_int_equal(g.r.qps[2].completed, 150);
	/* Sizes that do not add up to the QPs set up are refused. */
	const uint32_t wrong[] = {1, 1};
	assert_int_equal(rp::requester_set_flows(&g.r, wrong, 2, &err), -EINVAL);
	assert_string_equal(err.c_str(), "requester: flows of 2 QPs in all, but 3 QPs were set up");
}

void window_limits_what_is_in_flight(void **)
{
	Rig g(params(rp::Verb::send, 1000));
	fake::nic().credit_word = nullptr;   // the responder never gives credit back
	g.r.p.stall_tsc = 100000;
	assert_int_equal(rp::requester_run(&g.r), -1);
	assert_int_equal(g.r.c.sent, kSlots);   // exactly the window
	assert_string_equal(g.r.c.fail_reason, "stalled: no credit or completion for the send queues (QP 0: sent 256 of 1000, "
					       "completed 256, credited 0; its window is full: send queue 128, window 256)");
}

/* A send flow under a flow window of 16 over 4 QPs, batch 8: its QPs have no window
 * or credit word of their own, only the flow's (what the builder gives a send flow). */
rp::RequesterParams flow_window_params(uint64_t messages)
{
	rp::RequesterParams p = params(rp::Verb::send, messages);
	p.batch = 8;
	p.signal_every = 8;
	p.sq_depth = 32;
	p.window = 16;
	p.flow_window = 16;
	return p;
}

/* Bursts enough for everything the windows allow to be posted and completed. */
void settle(rp::Requester &r)
{
	for (int i = 0; i < 20; i++)
		rp::requester_burst(&r);
}

/* The flow's QPs together post no more than the flow window beyond the flow's credit
 * word, whatever their send queues would take, and as much again as the word moves. */
void flow_window_bounds_all_qps_together(void **)
{
	Rig g(flow_window_params(400), 4);
	for (uint32_t i = 0; i < 4; i++)
		assert_null(g.r.qps[i].credit_word);
	rp::requester_start(&g.r);
	settle(g.r);
	assert_int_equal(g.r.c.sent, 16);   // 4 send queues of 32 would take 128
	assert_int_equal(g.r.flow_sent[0], 16);
	assert_int_equal(g.r.c.completed, 16);   // held back by the window, not the send queues
	g.flow_word = 8;
	settle(g.r);
	assert_int_equal(g.r.c.sent, 24);
	assert_int_equal(g.r.flow_credit[0].credit, 8);
	g.flow_word = 12;   // half a batch of room: a short chain
	settle(g.r);
	assert_int_equal(g.r.c.sent, 28);
	assert_int_equal(g.r.c.credit_anomalies, 0);
	/* A perfect receiver (the fake credits each message as it is posted): the rest goes. */
	fake::nic().credit_word = &g.flow_word;
	g.flow_word = 28;
	while (!g.r.finished)
		rp::requester_burst(&g.r);
	assert_int_equal(rp::requester_finish(&g.r), 0);
	assert_int_equal(g.r.c.sent, 400);
	assert_int_equal(g.r.c.completed, 400);
	assert_int_equal(rte_mempool_avail_count(g.pool), kPoolSize);
}

/* The flow's word is taken only forward (written through one QP at a time, an older
 * write may land late); a count above what the flow sent is an anomaly, not credit. */
void flow_credit_only_goes_forward(void **)
{
	Rig g(flow_window_params(400), 4);
	rp::requester_start(&g.r);
	settle(g.r);
	g.flow_word = 12;
	settle(g.r);
	assert_int_equal(g.r.c.sent, 28);
	g.flow_word = 4;   // backwards: no less credit, so no room is lost or gained
	settle(g.r);
	assert_int_equal(g.r.flow_credit[0].credit, 12);
	assert_int_equal(g.r.c.sent, 28);
	assert_int_equal(g.r.c.credit_anomalies, 0);
	g.flow_word = 1000;   // beyond the 28 sent
	settle(g.r);
	assert_true(g.r.c.credit_anomalies > 0);
	assert_int_equal(g.r.flow_credit[0].credit, 12);
	assert_int_equal(g.r.c.sent, 28);
	g.flow_word = 28;   // a sane count again: taken
	settle(g.r);
	assert_int_equal(g.r.flow_credit[0].credit, 28);
	assert_int_equal(g.r.c.sent, 44);
}

/* A flow window shared by 8 QPs, batch 8: each credit step of 16 lets two QPs post.
 * Each burst starts at the QP after the last one that posted in the one before, so the
 * steps go round all 8 (QPs 0-1, 2-3, 4-5, 6-7); from QP 0 every time, QPs 0 and 1
 * would take every step and the other 6 would never post. */
void flow_window_goes_round_all_qps(void **)
{
	Rig g(flow_window_params(8 * 64), 8);   // 64 per QP
	for (uint32_t i = 0; i < 8; i++)
		assert_null(g.r.qps[i].credit_word);
	rp::requester_start(&g.r);
	for (uint32_t step = 0; step < 4; step++) {
		g.flow_word = 16 * step;   // everything sent so far credited
		uint64_t before[8];
		for (uint32_t i = 0; i < 8; i++)
			before[i] = g.r.qps[i].sent;
		rp::requester_burst(&g.r);
		assert_int_equal(g.r.flow_sent[0], 16 * (step + 1));
		for (uint32_t i = 0; i < 8; i++) {
			const bool posts = i / 2 == step;   // this step's pair
			assert_int_equal(g.r.qps[i].sent - before[i], posts ? 8 : 0);
		}
	}
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(g.r.qps[i].sent, 8);   // every QP had its turn
	assert_int_equal(g.r.c.credit_anomalies, 0);
}

/* A flow that never gets its credit stalls at exactly its window, and the stall names
 * the flow's window. */
void flow_window_stall_names_it(void **)
{
	Rig g(flow_window_params(400), 4);
	g.r.p.stall_tsc = 100000;
	assert_int_equal(rp::requester_run(&g.r), -1);
	assert_int_equal(g.r.c.sent, 16);
	assert_string_equal(g.r.c.fail_reason, "stalled: no credit or completion for the send queues (QP 0: sent 8 of 100, "
					       "completed 8, credited 8; its flow's window (over all its QPs) is full: "
					       "send queue 32, window 16)");
}

/* A QP of the flow fails while the flow's window is full: the messages it had sent from
 * the failed one on will never be credited, so they leave the flow's window, and its
 * other QP goes on without any credit moving; the run ends on the completion error, not
 * on a stall of the flow's window. */
/* QP 0's first message fails with `status` while the flow's window is full. Where the
 * status proves it never arrived (RNR retries exceeded), its 8 leave the window and
 * QP 1 goes on; a retry exceeded proves nothing (an ACK may have been lost): they stay
 * counted and the flow stalls on its window. */
void failed_qp_case(ibv_wc_status status, bool released)
{
	rp::RequesterParams p = flow_window_params(32);   // 16 per QP
	Rig g(p, 2);
	g.r.p.stall_tsc = 100000;
	for (uint32_t i = 0; i < 2; i++)
		assert_null(g.r.qps[i].credit_word);
	/* QP 0's first message completes with an error (the fake queues it as it is posted). */
	fake::nic().error_at_wr_id = 0;
	fake::nic().error_qp_num = fake::kQpNumBase;
	fake::nic().error_status = status;
	rp::requester_start(&g.r);
	rp::requester_burst(&g.r);
	assert_int_equal(g.r.qps[0].sent, 8);
	assert_int_equal(g.r.qps[1].sent, 8);
	assert_int_equal(g.r.flow_sent[0], 16);   // the flow's window is full
	assert_false(g.r.qps[0].failed);
	rp::requester_burst(&g.r);   // polls the error
	assert_true(g.r.qps[0].failed);
	assert_int_equal(g.flow_word, 0);
	assert_int_equal(g.r.flow_credit[0].credit, 0);
	assert_int_equal(g.r.flow_credit[0].lost, released ? 8 : 0);
	assert_int_equal(g.r.qps[1].sent, released ? 16 : 8);
	while (!g.r.finished)
		rp::requester_burst(&g.r);
	assert_int_equal(rp::requester_finish(&g.r), -1);
	assert_int_equal(g.r.c.wc_errors.by_status[status], 1);
	assert_int_equal(g.r.c.credit_anomalies, 0);
	if (released) {
		assert_string_equal(g.r.c.fail_reason, "completion errors");   // no stall
		assert_int_equal(g.r.qps[1].completed, 16);
	} else {
		assert_non_null(strstr(g.r.c.fail_reason, "its flow's window (over all its QPs) is full"));
	}
}

void failed_qp_leaves_the_flow_window(void **)
{
	failed_qp_case(IBV_WC_RNR_RETRY_EXC_ERR, true);
}

void failed_qp_that_proves_nothing_stays_in_the_window(void **)
{
	failed_qp_case(IBV_WC_RETRY_EXC_ERR, false);
}

/* write_imm under a flow window keeps its QPs' windows (its slots): both bound it. QP 0
 * fills its window of 8, QP 1 gets the 4 left of the flow's 12; then each QP's own
 * credit holds it where the flow has room, and the flow's where the QP has. */
void flow_window_and_qp_windows_both_bound(void **)
{
	rp::RequesterParams p = params(rp::Verb::write_imm, 400);
	p.batch = 4;
	p.signal_every = 4;
	p.sq_depth = 16;
	p.window = 8;
	p.flow_window = 12;
	Rig g(p, 2);
	assert_non_null(g.r.qps[0].credit_word);
	rp::requester_start(&g.r);
	settle(g.r);
	assert_int_equal(g.r.qps[0].sent, 8);
	assert_int_equal(g.r.qps[1].sent, 4);
	g.flow_word = 12;
	settle(g.r);
	assert_int_equal(g.r.qps[0].sent, 8);
	assert_int_equal(g.r.qps[1].sent, 8);
	g.credits[0] = 8;
	g.flow_word = 14;
	settle(g.r);
	assert_int_equal(g.r.qps[0].sent, 16);   // its own window again
	assert_int_equal(g.r.qps[1].sent, 8);    // its window is full, the flow's is not
	g.credits[1] = 8;
	settle(g.r);
	assert_int_equal(g.r.qps[1].sent, 10);   // the flow's 2 left
	assert_int_equal(g.r.qps[0].sent, 16);
}

void send_queue_limits_what_is_in_flight(void **)
{
	Rig g(params(rp::Verb::write_imm, 1000));
	fake::nic().complete_signalled = false;   // the NIC never completes anything
	g.r.p.stall_tsc = 100000;
	assert_int_equal(rp::requester_run(&g.r), -1);
	assert_int_equal(g.r.c.sent, 128);   // exactly the send queue depth
	assert_int_equal(g.r.c.completed, 0);
}

/* A WR budget bounds what every QP together holds (the shared send CQ it sizes must
 * take every WR flushed back), below what their send queues would. */
void wr_budget_limits_all_qps_together(void **)
{
	rp::RequesterParams p = params(rp::Verb::write_imm, 10000);
	p.wr_budget = 100;
	Rig g(p, 8);
	fake::nic().complete_signalled = false;   // the NIC never completes anything
	g.r.p.stall_tsc = 100000;
	assert_int_equal(rp::requester_run(&g.r), -1);
	assert_int_equal(g.r.c.sent, 100);   // 8 send queues of 128 would hold 1024
	assert_int_equal(g.r.wr_out, 100);
}

/* Under a budget each chain ends signalled: a QP's unsignalled WRs never wait on a
 * signalled one that the budget, spent on the other QPs, keeps it from posting. */
void wr_budget_chains_end_signalled(void **)
{
	rp::RequesterParams p = params(rp::Verb::write, 5000);
	p.wr_budget = 40;   // less than one signal interval (32) for each of the 16 QPs
	Rig g(p, 16);
	assert_int_equal(rp::requester_run(&g.r), 0);
	assert_int_equal(g.r.c.completed, 5000);
	assert_int_equal(g.r.wr_out, 0);
	for (auto &chain : fake::nic().chains) {
		assert_true(chain.back().send_flags & IBV_SEND_SIGNALED);
		assert_true(chain.size() <= 40);
	}
}

std::vector<ibv_wc> g_peer_got;
void peer_on_wc(void *, const ibv_wc &wc, uint64_t) { g_peer_got.push_back(wc); }

void shared_send_cq_dispatches_both_ways(void **)
{
	/* A responder's credit-write completion on the shared send CQ goes to it; the
	 * requester's own completions, reaped by that responder, retire its messages. */
	Rig g(params(rp::Verb::write, 64));
	g_peer_got.clear();
	g.r.send_peer = rp::CqPeer{peer_on_wc, nullptr};
	fake::nic().complete_signalled = false;
	ibv_wc credit{};
	credit.qp_num = 0x900;
	credit.opcode = IBV_WC_RDMA_WRITE;
	fake::nic().send_cq.push_back(credit);
	rp::requester_start(&g.r);
	rp::requester_burst(&g.r);   // reaps the peer's completion, posts a chain of 32
	assert_int_equal(g_peer_got.size(), 1);
	assert_int_equal(g_peer_got[0].qp_num, 0x900);
	assert_int_equal(g.r.c.wc_errors.total, 0);
	assert_int_equal(g.r.c.sent, 32);
	rp::requester_burst(&g.r);
	assert_int_equal(g.r.c.sent, 64);
	assert_int_equal(g.r.c.completed, 0);
	ibv_wc own{};
	own.qp_num = fake::kQpNumBase;
	own.wr_id = 63;
	own.opcode = IBV_WC_RDMA_WRITE;
	rp::requester_on_send_wc(&g.r, own, rte_rdtsc());
	assert_int_equal(g.r.c.completed, 64);
	rp::requester_burst(&g.r);
	assert_true(g.r.finished);
	assert_int_equal(rp::requester_finish(&g.r), 0);
	assert_int_equal(rte_mempool_avail_count(g.pool), kPoolSize);
}

void lanes_share_qps_and_hand_completions_over(void **)
{
	/* Seed 002's experiment: two lanes post READs to the same two QPs, each its own
	 * messages (wr_ids tagged with the lane), and both poll the one send CQ. A lane that
	 * polls the other's completion hands it over through that lane's ring; every read
	 * result is still checked by the lane that posted it. */
	for (uint32_t every : {1u, 32u}) {
		rp::RequesterParams p = params(rp::Verb::read, 512);
		p.signal_every = every;
		p.sq_depth = 64;   // each lane's half of a 128-deep send queue
		Rig g(p, 2);
		rp::Requester b;
		b.ops = &fake::kOps;
		b.send_cq = fake::nic().send_cq_handle;
		b.pool = g.pool;
		b.mrs = &g.mrs;
		rp::RunControl ctl_b;
		b.ctl = &ctl_b;
		b.p = p;
		std::string err;
		assert_int_equal(rp::requester_init(&b, 2, &err), 0);
		for (uint32_t i = 0; i < 2; i++) {
			b.qps[i].qp = g.r.qps[i].qp;
			b.qps[i].remote = g.r.qps[i].remote;
		}
		assert_int_equal(rp::requester_add_qps(&b, &err), 0);
		rte_ring *rings[2];
		for (int l = 0; l < 2; l++) {
			static int id;
			std::string name = "ut_lane" + std::to_string(id++);
			rings[l] = rte_ring_create(name.c_str(), 512, 0, RING_F_SC_DEQ);
			assert_non_null(rings[l]);
		}
		assert_int_equal(rp::requester_set_lane(&g.r, 0, rings, 2, &err), 0);
		assert_int_equal(rp::requester_set_lane(&b, 1, rings, 2, &err), 0);
		rp::requester_start(&g.r);
		rp::requester_start(&b);
		for (int it = 0; it < 10000 && !(g.r.finished && b.finished); it++) {
			if (!g.r.finished)
				rp::requester_burst(&g.r);
			if (!b.finished)
				rp::requester_burst(&b);
		}
		assert_int_equal(rp::requester_finish(&g.r), 0);
		assert_int_equal(rp::requester_finish(&b), 0);
		for (rp::Requester *r : {&g.r, &b}) {
			assert_int_equal(r->c.sent, 512);
			assert_int_equal(r->c.completed, 512);
			assert_int_equal(r->c.verified, 512);
			assert_int_equal(r->c.wc_errors.total, 0);
		}
		/* Lane 0 polls first: lane 1's completions of each round reach it through its ring. */
		assert_true(b.c.handed_in > 0);
		assert_int_equal(g.r.c.handed_over + b.c.handed_over, g.r.c.handed_in + b.c.handed_in);
		/* The lane is in the top bits of every wr_id; the sequence below them. */
		for (auto &chain : fake::nic().chains)
			for (auto &wr : chain)
				assert_true((wr.wr_id >> rp::kLaneShift) < 2 && (wr.wr_id & rp::kSeqMask) < 512);
		assert_int_equal(rte_mempool_avail_count(g.pool), kPoolSize);
		rte_ring_free(rings[0]);
		rte_ring_free(rings[1]);
	}
}

void rate_limit_paces_each_flow(void **)
{
	/* A pace of one message per 10^12 TSC ticks: nothing is due yet, but a batch ahead
	 * is allowed, per flow, so two flows post one chain each and then wait. */
	rp::RequesterParams p = params(rp::Verb::write, 1000);
	p.tsc_per_msg = 1000000000000ull;
	Rig g(p, 2);
	const uint32_t sizes[2] = {1, 1};
	std::string err;
	assert_int_equal(rp::requester_set_flows(&g.r, sizes, 2, &err), 0);
	rp::requester_start(&g.r);
	for (int i = 0; i < 50; i++)
		rp::requester_burst(&g.r);
	assert_int_equal(g.r.c.sent, 2 * 32);
	assert_int_equal(g.r.flow_sent[0], 32);
	assert_int_equal(g.r.flow_sent[1], 32);
	/* The control plane lifts the limit (the console's set rate FLOW 0): the rest goes
	 * at once. */
	g.r.flow_ctl[0].tsc_per_msg.store(0);
	g.r.flow_ctl[1].tsc_per_msg.store(0);
	while (!g.r.finished)
		rp::requester_burst(&g.r);
	assert_int_equal(rp::requester_finish(&g.r), 0);
	assert_int_equal(g.r.c.sent, 2000);
}

void input_ring_buffers_go_as_they_are(void **)
{
	/* Fed from a ring (a gen or verify stage before it): the requester posts the
	 * buffers it is given, payload untouched, and returns them to their pool. */
	Rig g(params(rp::Verb::send_imm, 64));
	fake::nic().check_len = 0;   // the payloads are the stage's, not msg_key patterns
	rte_ring *in = rte_ring_create("ut_req_in", 128, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	assert_non_null(in);
	std::string err;
	assert_int_equal(rp::requester_set_input(&g.r, nullptr, g.pool, &g.mrs, &err), -EINVAL);
	assert_int_equal(rp::requester_set_input(&g.r, in, g.pool, &g.mrs, &err), 0);
	void *bufs[64];
	assert_int_equal(rte_mempool_get_bulk(g.pool, bufs, 64), 0);
	for (uint64_t k = 0; k < 64; k++) {
		uint64_t word = 0xfeed0000 + k;
		memcpy(bufs[k], &word, sizeof(word));
	}
	assert_int_equal(rte_ring_enqueue_bulk(in, bufs, 64, nullptr), 64);
	assert_int_equal(rp::requester_run(&g.r), 0);
	uint64_t k = 0;
	for (auto &chain : fake::nic().chains)
		for (auto &wr : chain)
			assert_int_equal(wr.first_word, 0xfeed0000 + k++);
	assert_int_equal(k, 64);
	assert_int_equal(rte_mempool_avail_count(g.pool), kPoolSize);
	rte_ring_free(in);
}

void rejects_unsafe_sizing(void **)
{
	rp::Requester r;
	std::string err;
	r.p = params(rp::Verb::write, 10);
	r.p.signal_every = 100;   // sq 128 < 2 x 100
	assert_int_equal(rp::requester_init(&r, 1, &err), -EINVAL);
	assert_string_equal(err.c_str(), "requester: send queue depth 128 must be >= 2 x signal-every (above 1) and >= batch");
	rp::Requester one;   // every WR signalled: a send queue of one, one operation in flight (ib_read_lat's)
	one.p = params(rp::Verb::read, 10);
	one.p.signal_every = one.p.batch = one.p.sq_depth = 1;
	if (rp::requester_init(&one, 1, &err) != 0)
		fail_msg("%s", err.c_str());
}


/* UC made reliable in software, driven without a control QP: chains posted, then ACKs
 * handed to requester_on_ack as the CtrlPort would (at TSC times, as the lcore's burst
 * gives them: a retransmission's post time orders it against later messages). */
rp::RequesterParams reliable_params(uint64_t messages)
{
	rp::RequesterParams p = params(rp::Verb::write_imm, messages);
	p.reliable = true;
	p.rto_min_tsc = 1000;
	p.rto_max_tsc = 1000000;
	p.rto_initial_tsc = 10000;
	p.ns_per_tsc = 1;
	return p;
}

rp::AckMsg ack(uint32_t qpn, uint64_t cum, std::initializer_list<uint64_t> arrived)
{
	rp::AckMsg a{rp::kAckMagic, rp::kAckVersion, 0, qpn, cum, cum, {}};
	for (uint64_t s : arrived)
		a.sack[(s - cum - 1) / 64] |= 1ull << ((s - cum - 1) % 64);
	return a;
}

void reliable_tracks_until_acknowledged(void **)
{
	Rig g(reliable_params(1000));
	fake::nic().check_len = 0;
	const unsigned before = rte_mempool_avail_count(g.pool);
	assert_int_equal(rte_mempool_get_bulk(g.pool, g.r.bufs, 8), 0);
	assert_int_equal(g.r.post_chain(&g.r, 0, 8, rp::kChainMore), 0);
	const fake::Nic &n = fake::nic();
	assert_int_equal(n.chains.size(), 1);
	assert_int_equal(n.chains[0].size(), 8);
	for (uint64_t i = 0; i < 8; i++) {
		assert_int_equal(n.chains[0][i].wr_id, i);          // its place in the send queue
		assert_int_equal(n.chains[0][i].imm_host, i);       // its sequence
	}
	/* Send completions free the queue, not the buffers: those wait for the ACK. */
	assert_int_equal(g.r.qps[0].completed, 0);
	assert_int_equal(rte_mempool_avail_count(g.pool), before - 8);
	const uint32_t qpn = g.qps[0].qp_num;
	rp::requester_on_ack(&g.r, 0, ack(qpn, 2, {4, 5, 6, 7}), rte_rdtsc());
	assert_int_equal(g.r.qps[0].completed, 2);
	assert_int_equal(rte_mempool_avail_count(g.pool), before - 6);
	/* Holes 2 and 3 were sent before 7, which arrived: resent at once as one chain of
	 * SENDs, each a 12-byte header (slot offset, original immediate) and the chunk. */
	assert_int_equal(n.chains.size(), 2);
	assert_int_equal(n.chains[1].size(), 2);
	for (uint64_t i = 0; i < 2; i++) {
		const fake::PostedWr &w = n.chains[1][i];
		assert_int_equal(w.opcode, IBV_WR_SEND);
		assert_int_equal(w.num_sge, 2);
		assert_int_equal(w.sge_len, sizeof(rp::RetxHeader));
		assert_int_equal(w.wr_id, 8 + i);
		rp::RetxHeader h;
		memcpy(&h, reinterpret_cast<const void *>(w.sge_addr), sizeof(h));
		assert_int_equal(h.target_offset, (2 + i) * 40);
		assert_int_equal(ntohl(h.imm), 2 + i);
	}
	assert_int_equal(g.r.c.retx_fast, 2);
	assert_int_equal(g.r.c.sack_holes, 2);
	/* The same ACK again (its copies are newer than 7's): nothing more goes. */
	rp::requester_on_ack(&g.r, 0, ack(qpn, 2, {4, 5, 6, 7}), rte_rdtsc());
	assert_int_equal(n.chains.size(), 2);
	/* Everything acknowledged: every buffer back; the RTT came from 7, sent once. */
	rp::requester_on_ack(&g.r, 0, ack(qpn, 8, {}), rte_rdtsc());
	assert_int_equal(g.r.qps[0].completed, 8);
	assert_int_equal(rte_mempool_avail_count(g.pool), before);
	assert_int_equal(g.r.flow_latency[0].count(), 2);   // cum 2 (message 1) and cum 8 (message 7)
	/* An ACK beyond what was sent is refused. */
	rp::requester_on_ack(&g.r, 0, ack(qpn, 9, {}), rte_rdtsc());
	assert_int_equal(g.r.c.acks_invalid, 1);
	assert_int_equal(g.r.qps[0].completed, 8);
}

/* A receiver whose QP broke says so in an ACK: the sender pauses the QP (nothing new,
 * no fast retransmission) and asks for a restart; the ACK after the restart resumes it,
 * and every message that ACK does not have goes again at once. Without a receiver's
 * control QP to ask, nothing pauses. */
void reliable_broken_qp_pauses_until_restarted(void **)
{
	Rig g(reliable_params(1000));
	fake::nic().check_len = 0;
	rp::CtrlDest dest{};
	const uint32_t qpn = g.qps[0].qp_num;
	assert_int_equal(rte_mempool_get_bulk(g.pool, g.r.bufs, 8), 0);
	assert_int_equal(g.r.post_chain(&g.r, 0, 8, rp::kChainMore), 0);
	const fake::Nic &n = fake::nic();
	rp::AckMsg broken = ack(qpn, 2, {});
	broken.flags = rp::kAckBroken;
	rp::requester_on_ack(&g.r, 0, broken, rte_rdtsc());   // nowhere to ask
	assert_false(g.r.qps[0].paused);
	assert_int_equal(g.r.c.restart_requests, 0);
	g.r.qps[0].peer_ctrl = &dest;
	rp::requester_on_ack(&g.r, 0, broken, rte_rdtsc());
	assert_true(g.r.qps[0].paused);
	assert_int_equal(g.r.c.restart_requests, 0);   // not while its send queue holds WRs
	assert_true(n.chains[0].back().send_flags & IBV_SEND_SIGNALED);   // a chain ends signalled
	g.r.qps[0].wr_done = g.r.qps[0].wr_posted;     // its last completion came
	rp::requester_on_ack(&g.r, 0, broken, rte_rdtsc());
	assert_int_equal(g.r.c.restart_requests, 1);
	assert_int_equal(g.r.qps[0].completed, 2);
	rp::requester_on_ack(&g.r, 0, broken, rte_rdtsc());   // asked once
	assert_int_equal(g.r.c.restart_requests, 1);
	/* Paused: a hole the ACKs show is not resent into the broken QP. */
	rp::requester_on_ack(&g.r, 0, ack(qpn, 2, {5}), rte_rdtsc());
	assert_int_equal(n.chains.size(), 1);
	/* A restarted ACK of another pause (come late) does not resume it. */
	assert_int_equal(g.r.qps[0].epoch, 1);
	rp::AckMsg restarted = ack(qpn, 2, {5});
	restarted.flags = rp::kAckRestarted;
	restarted.epoch = 0;
	rp::requester_on_ack(&g.r, 0, restarted, rte_rdtsc());
	assert_true(g.r.qps[0].paused);
	assert_int_equal(n.chains.size(), 1);
	/* Restarted in this pause: resumed, and 2, 3, 4, 6, 7 go again as one chain. */
	restarted.epoch = 1;
	rp::requester_on_ack(&g.r, 0, restarted, rte_rdtsc());
	assert_false(g.r.qps[0].paused);
	assert_int_equal(n.chains.size(), 2);
	assert_int_equal(n.chains[1].size(), 5);
	const uint64_t want[] = {2, 3, 4, 6, 7};
	for (uint32_t i = 0; i < 5; i++) {
		rp::RetxHeader h;
		memcpy(&h, reinterpret_cast<const void *>(n.chains[1][i].sge_addr), sizeof(h));
		assert_int_equal(ntohl(h.imm), want[i]);
	}
	assert_int_equal(g.r.c.retx_fast, 5);
	rp::requester_on_ack(&g.r, 0, ack(qpn, 8, {}), rte_rdtsc());
	assert_int_equal(g.r.qps[0].completed, 8);
}

/* Chunks (write_imm, software reliability): a 40-byte message in chunks of 16 goes as
 * three WRITE_WITH_IMMs (16, 16 and 8 bytes) to its places in its slot, each its own
 * sequence; a lost chunk is resent alone (its header names its place, its SGE its part
 * of the buffer); a message's buffer goes back once all its chunks are acknowledged. */
void reliable_chunks_are_tracked_one_by_one(void **)
{
	rp::RequesterParams p = reliable_params(1000);
	p.chunk_bytes = 16;
	Rig g(p);
	fake::nic().check_len = 0;
	const unsigned before = rte_mempool_avail_count(g.pool);
	assert_int_equal(rte_mempool_get_bulk(g.pool, g.r.bufs, 2), 0);
	void *b1 = g.r.bufs[1];
	assert_int_equal(g.r.post_chain(&g.r, 0, 2, rp::kChainMore), 0);
	const fake::Nic &n = fake::nic();
	assert_int_equal(n.chains.size(), 1);
	assert_int_equal(n.chains[0].size(), 6);
	const uintptr_t base = reinterpret_cast<uintptr_t>(g.remote.data());
	for (uint32_t i = 0; i < 6; i++) {
		const fake::PostedWr &w = n.chains[0][i];
		assert_int_equal(w.opcode, IBV_WR_RDMA_WRITE_WITH_IMM);
		assert_int_equal(w.imm_host, i);
		assert_int_equal(w.wr_id, i);
		assert_int_equal(w.sge_len, i % 3 == 2 ? 8 : 16);
		assert_int_equal(w.remote_addr, base + (i / 3) * 40 + (i % 3) * 16);
	}
	assert_int_equal(g.r.qps[0].sent, 2);   // messages
	const uint32_t qpn = g.qps[0].qp_num;
	/* Chunks 0..3 and 5 arrived: message 0 is done, chunk 4 is a hole, resent alone. */
	rp::requester_on_ack(&g.r, 0, ack(qpn, 4, {5}), rte_rdtsc());
	assert_int_equal(g.r.qps[0].completed, 1);
	assert_int_equal(g.r.qps[0].acked, 4);
	assert_int_equal(rte_mempool_avail_count(g.pool), before - 1);
	assert_int_equal(n.chains.size(), 2);
	assert_int_equal(n.chains[1].size(), 1);
	const fake::PostedWr &w = n.chains[1][0];
	assert_int_equal(w.opcode, IBV_WR_SEND);
	assert_int_equal(w.num_sge, 2);
	rp::RetxHeader h;
	memcpy(&h, reinterpret_cast<const void *>(w.sge_addr), sizeof(h));
	assert_int_equal(h.target_offset, 40 + 16);
	assert_int_equal(ntohl(h.imm), 4);
	const rp::Requester::Retx &e = g.r.retx[0];
	assert_int_equal(e.sge[1].addr, reinterpret_cast<uintptr_t>(b1) + 16);
	assert_int_equal(e.sge[1].length, 16);
	/* An ACK past the chunks sent is refused; the last one retires message 1. */
	rp::requester_on_ack(&g.r, 0, ack(qpn, 7, {}), rte_rdtsc());
	assert_int_equal(g.r.c.acks_invalid, 1);
	rp::requester_on_ack(&g.r, 0, ack(qpn, 6, {}), rte_rdtsc());
	assert_int_equal(g.r.qps[0].completed, 2);
	assert_int_equal(rte_mempool_avail_count(g.pool), before);
}

/* A send queue that cannot hold one message's chunks is refused at setup. */
void reliable_chunks_need_room_in_the_send_queue(void **)
{
	rp::RequesterParams p = reliable_params(1000);
	p.chunk_bytes = 1;   // 40 chunks a message
	p.sq_depth = 32;
	p.batch = 8;
	p.signal_every = 8;
	rp::Requester r;
	r.p = p;
	std::string err;
	assert_int_equal(rp::requester_init(&r, 1, &err), -EINVAL);
	assert_non_null(strstr(err.c_str(), "40 chunks"));
}

void reliable_injected_loss_is_tracked(void **)
{
	rp::RequesterParams p = reliable_params(1000);
	p.inject_loss = 1u << 31;   // half
	Rig g(p);
	fake::nic().check_len = 0;
	assert_int_equal(rte_mempool_get_bulk(g.pool, g.r.bufs, 32), 0);
	assert_int_equal(g.r.post_chain(&g.r, 0, 32, rp::kChainMore), 0);
	const uint64_t posted = fake::nic().total_wrs();
	assert_int_equal(g.r.qps[0].sent, 32);   // all tracked as sent
	assert_int_equal(posted + g.r.c.injected_losses, 32);
	assert_true(g.r.c.injected_losses > 4 && g.r.c.injected_losses < 28);
	assert_int_equal(g.r.qps[0].wr_posted, posted);   // places only for what went
}
} // namespace

int main()
{
	if (!eal_for_tests("test_requester"))
		return 1;
	const CMUnitTest tests[] = {
		cmocka_unit_test(sends_all_in_chains),
		cmocka_unit_test(abort_names_its_reason),
		cmocka_unit_test(control_is_seen_within_a_look),
		cmocka_unit_test(deadline_is_checked_every_burst),
		cmocka_unit_test(spreads_over_qps),
		cmocka_unit_test(bound_buffers_are_kept_and_reused),
		cmocka_unit_test(short_pool_is_used_per_chain),
		cmocka_unit_test(injected_corruption_reaches_the_wire),
		cmocka_unit_test(read_results_are_checked),
		cmocka_unit_test(read_that_brings_nothing_is_caught),
		cmocka_unit_test(atomics_return_values_are_checked),
		cmocka_unit_test(completion_error_stops_only_its_qp),
		cmocka_unit_test(prebuilt_error_names_its_sequence),
		cmocka_unit_test(prebuilt_only_where_the_period_fits),
		cmocka_unit_test(flows_split_messages_and_errors),
		cmocka_unit_test(window_limits_what_is_in_flight),
		cmocka_unit_test(flow_window_bounds_all_qps_together),
		cmocka_unit_test(flow_credit_only_goes_forward),
		cmocka_unit_test(flow_window_goes_round_all_qps),
		cmocka_unit_test(flow_window_stall_names_it),
		cmocka_unit_test(failed_qp_leaves_the_flow_window),
		cmocka_unit_test(failed_qp_that_proves_nothing_stays_in_the_window),
		cmocka_unit_test(flow_window_and_qp_windows_both_bound),
		cmocka_unit_test(send_queue_limits_what_is_in_flight),
		cmocka_unit_test(plain_write_stamps_only_the_last_window),
		cmocka_unit_test(wr_budget_limits_all_qps_together),
		cmocka_unit_test(wr_budget_chains_end_signalled),
		cmocka_unit_test(shared_send_cq_dispatches_both_ways),
		cmocka_unit_test(lanes_share_qps_and_hand_completions_over),
		cmocka_unit_test(rate_limit_paces_each_flow),
		cmocka_unit_test(input_ring_buffers_go_as_they_are),
		cmocka_unit_test(rejects_unsafe_sizing),
		cmocka_unit_test(reliable_tracks_until_acknowledged),
		cmocka_unit_test(reliable_broken_qp_pauses_until_restarted),
		cmocka_unit_test(reliable_chunks_are_tracked_one_by_one),
		cmocka_unit_test(reliable_chunks_need_room_in_the_send_queue),
		cmocka_unit_test(reliable_injected_loss_is_tracked),
	};
	int rc = cmocka_run_group_tests_name("requester", tests, nullptr, nullptr);
	rte_eal_cleanup();
	return rc;
}
