/* The sending role against the faked NIC, on a real rte_mempool (EAL without hugepages):
 * chains, selective signalling, buffer recycling, flow control and completion errors. */
#include "engine/writer.h"
#include "fake_verbs.h"

#include <rte_eal.h>
#include <rte_mempool.h>

#include "cmocka_cpp.h"

namespace {

constexpr uint32_t kMsg = 40;
constexpr unsigned kPoolSize = 300;

struct Rig {
	rte_mempool *pool;
	rp::MrTable mrs;
	volatile uint64_t credit = 0;
	rp::RunControl ctl;
	rp::Writer w;

	explicit Rig(rp::WriterParams p)
	{
		fake::reset();
		static int id;
		/* A unique name: a failed test longjmps past the destructor and leaks its pool. */
		std::string name = "ut_tx" + std::to_string(id++);
		pool = rte_mempool_create(name.c_str(), kPoolSize, kMsg, 0, 0, nullptr, nullptr, nullptr, nullptr, 0, 0);
		assert_non_null(pool);
		rte_mempool_mem_iter(pool, [](rte_mempool *, void *arg, rte_mempool_memhdr *m, unsigned) {
			auto *t = static_cast<rp::MrTable *>(arg);
			auto b = reinterpret_cast<uintptr_t>(m->addr);
			t->chunks[t->n] = {b, b + m->len, 0x40 + t->n};
			t->n++;
		}, &mrs);
		w.ops = &fake::kOps;
		w.send_cq = fake::nic().send_cq_handle;
		w.pool = pool;
		w.mrs = &mrs;
		w.credit_word = &credit;
		w.ctl = &ctl;
		w.p = p;
		std::string err;
		assert_int_equal(rp::writer_init(&w, 0x9000, 77, &err), 0);
		fake::nic().credit_word = &credit;   // a receiver that consumes at once
		fake::nic().check_len = kMsg;
	}
	~Rig() { rte_mempool_free(pool); }
};

rp::WriterParams params(uint64_t messages)
{
	/* msg, batch, signal_every, sq_depth, window, messages, duration, stall, corrupt */
	return rp::WriterParams{kMsg, 32, 32, 128, 256, messages, 0, 2000000000ull, UINT64_MAX};
}

void sends_all_in_chains(void **)
{
	Rig g(params(1000));
	assert_int_equal(rp::writer_run(&g.w), 0);
	const fake::Nic &n = fake::nic();
	assert_int_equal(g.w.c.sent, 1000);
	assert_int_equal(g.w.c.completed, 1000);
	assert_int_equal(n.total_wrs(), 1000);
	assert_int_equal(g.w.c.post_calls, n.chains.size());
	assert_int_equal(n.chains.size(), 32);   // 31 full chains of 32 + one of 8
	uint64_t seq = 0, signalled = 0;
	for (auto &chain : n.chains) {
		assert_true(chain.size() <= 32);
		for (auto &wr : chain) {
			assert_int_equal(wr.wr_id, seq);
			assert_int_equal(wr.remote_addr, 0x9000 + (seq % 256) * kMsg);
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
	assert_true(g.ctl.writer_done.load());
	assert_int_equal(g.ctl.writer_sent.load(), 1000);
}

void injected_corruption_reaches_the_wire(void **)
{
	rp::WriterParams p = params(100);
	p.corrupt_msg = 42;
	Rig g(p);
	assert_int_equal(rp::writer_run(&g.w), 0);
	assert_int_equal(fake::nic().pattern_mismatches, 1);
	assert_int_equal(fake::nic().first_mismatch, 42);
}

void completion_error_stops_the_writer(void **)
{
	Rig g(params(1000));
	fake::nic().error_at_wr_id = 63;
	assert_int_equal(rp::writer_run(&g.w), -1);
	assert_string_equal(g.w.c.fail_reason, "send completion error");
	assert_int_equal(g.w.c.wc_errors.by_status[IBV_WC_REM_ACCESS_ERR], 1);
	assert_int_equal(g.w.c.wc_errors.first_wr_id, 63);
	assert_true(g.w.c.sent < 1000);
	assert_true(g.ctl.writer_done.load());
}

void window_limits_what_is_in_flight(void **)
{
	Rig g(params(1000));
	fake::nic().credit_word = nullptr;   // the receiver never gives credit back
	g.w.p.stall_tsc = 100000;
	assert_int_equal(rp::writer_run(&g.w), -1);
	assert_int_equal(g.w.c.sent, 256);   // exactly the window
	assert_string_equal(g.w.c.fail_reason, "stalled: no credit or completion from the receiver");
}

void send_queue_limits_what_is_in_flight(void **)
{
	Rig g(params(1000));
	fake::nic().complete_signalled = false;   // the NIC never completes anything
	g.w.p.stall_tsc = 100000;
	assert_int_equal(rp::writer_run(&g.w), -1);
	assert_int_equal(g.w.c.sent, 128);   // exactly the send queue depth
	assert_int_equal(g.w.c.completed, 0);
}

void rejects_unsafe_sizing(void **)
{
	rp::Writer w;
	std::string err;
	w.p = params(10);
	w.p.signal_every = 100;   // sq 128 < 2 x 100
	assert_int_equal(rp::writer_init(&w, 0, 0, &err), -EINVAL);
	assert_string_equal(err.c_str(), "writer: send queue depth 128 must be >= 2 x signal-every and >= batch");
}

} // namespace

int main()
{
	char a0[] = "test_writer", a1[] = "--no-huge", a2[] = "--no-pci", a3[] = "--no-shconf", a4[] = "-m",
	     a5[] = "64", a6[] = "-l", a7[] = "0", a8[] = "--log-level=lib.eal:error";
	char *eal[] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, nullptr};
	if (rte_eal_init(9, eal) < 0) {
		fprintf(stderr, "test_writer: rte_eal_init failed\n");
		return 1;
	}
	const CMUnitTest tests[] = {
		cmocka_unit_test(sends_all_in_chains),
		cmocka_unit_test(injected_corruption_reaches_the_wire),
		cmocka_unit_test(completion_error_stops_the_writer),
		cmocka_unit_test(window_limits_what_is_in_flight),
		cmocka_unit_test(send_queue_limits_what_is_in_flight),
		cmocka_unit_test(rejects_unsafe_sizing),
	};
	int rc = cmocka_run_group_tests_name("writer", tests, nullptr, nullptr);
	rte_eal_cleanup();
	return rc;
}
