/* Stages and the lcore loop on one thread: source -> ring -> verify -> ring -> sink
 * delivers every message in order with its payload, under back-pressure from tiny
 * rings; a corrupted or reordered message is counted by verify; done propagates
 * downstream only once rings are drained; the loop obeys stop; an lcore whose stages
 * are all passive sleeps, and wakes at once when the run's bell rings. */
#include "engine/pattern.h"
#include "pipeline/lcore_loop.h"
#include "pipeline/stage.h"
#include "pipeline/stage_kind.h"
#include "stages/stages.h"
#include "eal_for_tests.h"

#include <rte_mempool.h>
#include <rte_ring.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "cmocka_cpp.h"

namespace {

struct Chain {
	rte_mempool *pool;
	rte_ring *a, *b;
	rp::Stage src, ver, snk;
	rp::LcoreLoop loop;

	Chain(uint64_t n, unsigned ring_size, unsigned pool_size, uint32_t bytes)
	{
		static int id;
		std::string k = std::to_string(id++);
		pool = rte_mempool_create(("st_pool" + k).c_str(), pool_size, bytes, 0, 0, nullptr, nullptr, nullptr, nullptr, 0, 0);
		a = rte_ring_create(("st_a" + k).c_str(), ring_size, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
		b = rte_ring_create(("st_b" + k).c_str(), ring_size, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
		assert_non_null(pool);
		assert_non_null(a);
		assert_non_null(b);
		rp::stage_init(&src, &rp::kGenStage, "src");
		rp::stage_init(&ver, &rp::kVerifyStage, "verify");
		rp::stage_init(&snk, &rp::kSinkStage, "sink");
		src.pool = ver.pool = snk.pool = pool;
		src.msg_bytes = ver.msg_bytes = bytes;
		src.limit = n;
		src.out = a;
		ver.in = a;
		ver.out = b;
		rp::stage_feed(&ver, &src);
		snk.in = b;
		rp::stage_feed(&snk, &ver);
		/* Downstream first: the loop must not depend on the order of its stages. */
		loop.stages[loop.nstages++] = &snk;
		loop.stages[loop.nstages++] = &ver;
		loop.stages[loop.nstages++] = &src;
	}
	~Chain()
	{
		rte_ring_free(a);
		rte_ring_free(b);
		rte_mempool_free(pool);
	}
};

void delivers_everything_in_order(void **)
{
	/* Rings of 4 and a pool of 40: every burst meets back-pressure. */
	Chain c(10000, 4, 40, 64);
	assert_int_equal(rp::lcore_loop_run(&c.loop), 0);
	assert_true(c.loop.finished.load());
	assert_int_equal(c.src.st.msgs, 10000);
	assert_int_equal(c.ver.st.msgs, 10000);
	assert_int_equal(c.snk.st.msgs, 10000);
	assert_int_equal(c.ver.st.seq_errors, 0);
	assert_int_equal(c.ver.st.payload_errors, 0);
	assert_true(c.src.st.out_full > 0 || c.src.st.pool_empty > 0);   // back-pressure happened
	assert_true(c.src.done.load() && c.ver.done.load() && c.snk.done.load());
	assert_int_equal(rte_mempool_avail_count(c.pool), 40);   // every buffer back
}

void verify_counts_corruption_and_reordering(void **)
{
	Chain c(0, 64, 64, 64);
	void *m[3];
	assert_int_equal(rte_mempool_get_bulk(c.pool, m, 3), 0);
	for (uint64_t i = 0; i < 3; i++) {
		uint64_t seq = i == 1 ? 2 : i == 2 ? 1 : 0;   // 0, 2, 1: out of order
		memcpy(m[i], &seq, 8);
		rp::pattern_fill(static_cast<unsigned char *>(m[i]) + 8, 56, seq);
	}
	static_cast<unsigned char *>(m[0])[20] ^= 1;   // and message 0 corrupted
	assert_int_equal(rte_ring_enqueue_bulk(c.a, m, 3, nullptr), 3);
	c.src.done.store(true);   // nothing more will come
	assert_int_equal(rp::lcore_loop_run(&c.loop), 0);
	assert_int_equal(c.ver.st.msgs, 3);
	assert_int_equal(c.ver.st.payload_errors, 1);
	assert_int_equal(c.ver.st.seq_errors, 2);   // 2 where 1 was due, then 1 where 3 was
	assert_int_equal(c.snk.st.msgs, 3);
}

void done_waits_for_the_ring_to_drain(void **)
{
	Chain c(100, 128, 256, 16);
	/* Run only the source: it finishes with everything still in the ring. */
	rp::LcoreLoop only_src;
	only_src.stages[only_src.nstages++] = &c.src;
	assert_int_equal(rp::lcore_loop_run(&only_src), 0);
	assert_true(c.src.done.load());
	assert_int_equal(rte_ring_count(c.a), 100);
	/* Verify drains it before it calls itself done; then sink does the same. */
	assert_int_equal(rp::lcore_loop_run(&c.loop), 0);
	assert_int_equal(c.snk.st.msgs, 100);
	assert_true(rte_ring_empty(c.a) && rte_ring_empty(c.b));
}

void stage_stats_published(void **)
{
	/* The loop counts each stage's calls (and with count_cycles its busy TSC cycles) and
	 * publishes them for the control plane; without count_cycles no cycle is counted. */
	for (bool cycles : {false, true}) {
		Chain c(5000, 16, 64, 64);
		c.loop.count_cycles = cycles;
		assert_int_equal(rp::lcore_loop_run(&c.loop), 0);
		for (rp::Stage *s : {&c.src, &c.ver, &c.snk}) {
			assert_true(s->st.calls >= s->st.bursts && s->st.bursts > 0);
			assert_int_equal(s->live.calls.load(), s->st.calls);
			assert_int_equal(s->live.msgs.load(), 5000);
			assert_int_equal(s->live.cycles.load(), s->st.cycles);
			if (cycles)
				assert_true(s->st.cycles > 0);
			else
				assert_int_equal(s->st.cycles, 0);
		}
	}
}

void stop_ends_the_loop(void **)
{
	Chain c(1000, 64, 128, 64);
	c.src.limit = UINT64_MAX;   // would never end by itself
	c.loop.stop.store(true);
	assert_int_equal(rp::lcore_loop_run(&c.loop), -1);
	assert_true(c.loop.finished.load());
	assert_true(c.loop.iterations <= rp::kControlEvery);
}

/* A stage like a one-sided flow's responder: nothing to do until its run says the
 * requester is done, ended or aborted; then it finishes. */
struct Waiter {
	rp::RunControl *ctl;
	std::atomic<uint64_t> calls{0};
};

uint32_t waiter_burst(rp::Stage *s)
{
	auto *w = static_cast<Waiter *>(s->ctx);
	w->calls.fetch_add(1, std::memory_order_relaxed);
	if (w->ctl->requester_done.load() || w->ctl->aborted() || w->ctl->ending())
		s->done.store(true, std::memory_order_release);
	return 0;
}

bool waiter_passive(const rp::Stage *)
{
	return true;
}

const rp::StageOps kWaiterStage = {"waiter", waiter_burst, true, waiter_passive};
const rp::StageOps kBusyWaiterStage = {"waiter", waiter_burst, true, nullptr};

using Clock = std::chrono::steady_clock;

/* Waits (bounded) until f() holds. */
template <typename F>
bool within(double secs, F f)
{
	const auto until = Clock::now() + std::chrono::duration<double>(secs);
	while (!f()) {
		if (Clock::now() > until)
			return false;
		std::this_thread::yield();
	}
	return true;
}

/* The loop on a thread of its own, one waiter stage, the run's bell; `how` ends it. */
void passive_run(const rp::StageOps *ops, void (*how)(rp::RunControl *), bool expect_sleep)
{
	rp::RunControl run;
	Waiter w{&run};
	rp::Stage s;
	rp::stage_init(&s, ops, "rx");
	s.ctx = &w;
	rp::LcoreLoop loop;
	loop.stages[loop.nstages++] = &s;
	loop.bell = &run.bell;
	std::thread t([&] { rp::lcore_loop_run(&loop); });
	assert_true(within(10, [&] { return w.calls.load() >= 3; }));
	/* Asleep, it is called only when woken (its bound is a second); polling, it would
	 * be called at least once per loop iteration. */
	const uint64_t before = w.calls.load();
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	const uint64_t during = w.calls.load() - before;
	const auto t0 = Clock::now();
	how(&run);
	/* Woken by the bell, not its one-second bound. */
	const bool ended = within(expect_sleep ? 0.8 : 10, [&] { return loop.finished.load(); });
	const double took = std::chrono::duration<double>(Clock::now() - t0).count();
	t.join();
	if (expect_sleep) {
		assert_true(during <= 2);
		assert_true(ended);
		assert_true(took < 0.8);
		assert_true(loop.passive_sleeps >= 1);
	} else {
		assert_true(during > 100);
		assert_true(ended);
		assert_int_equal(loop.passive_sleeps, 0);
	}
}

void passive_lcore_sleeps_until_requester_done(void **)
{
	passive_run(&kWaiterStage, [](rp::RunControl *c) { c->finish_requesting(); }, true);
}

void passive_lcore_wakes_on_abort_and_end(void **)
{
	passive_run(&kWaiterStage, [](rp::RunControl *c) { c->abort_with("test"); }, true);
	passive_run(&kWaiterStage, [](rp::RunControl *c) { c->end(); }, true);
}

/* A stage that is not passive keeps its lcore polling. */
void active_lcore_polls(void **)
{
	passive_run(&kBusyWaiterStage, [](rp::RunControl *c) { c->finish_requesting(); }, false);
}

/* A timed gen makes messages until its duration from its first burst is over (at most
 * its rate's worth when paced), then hands on whatever its full ring held back: the
 * sink gets every message it made, in order and intact, and every buffer is back. */
void timed_gen_stops_and_hands_on_all(void **)
{
	const uint64_t hz = rte_get_tsc_hz();
	for (bool paced : {false, true}) {
		Chain c(0, 4, 40, 64);   // rings of 4: it holds messages back when its time is up
		c.src.ops = &rp::kTimedGenStage;
		c.src.limit = UINT64_MAX;
		c.src.duration_tsc = hz / 20;   // 50 ms
		if (paced)
			c.src.tsc_per_msg = hz / 20000;   // 1000 messages in 50 ms
		assert_int_equal(rp::lcore_loop_run(&c.loop), 0);
		assert_true(c.src.done.load() && c.ver.done.load() && c.snk.done.load());
		assert_true(c.src.st.msgs > 0);
		assert_true(c.src.end_tsc - c.src.start_tsc >= c.src.duration_tsc);   // not before its time
		if (paced)   // one at its first burst, then one per tsc_per_msg from then
			assert_true(c.src.st.msgs <= 1000 + 1);
		assert_int_equal(c.ver.st.msgs, c.src.st.msgs);
		assert_int_equal(c.snk.st.msgs, c.src.st.msgs);
		assert_int_equal(c.ver.st.seq_errors, 0);
		assert_int_equal(c.ver.st.payload_errors, 0);
		assert_int_equal(rte_mempool_avail_count(c.pool), 40);
	}
}

/* The run ended (the console's quit): a gen, timed or counting, makes nothing more and
 * hands on what it made, so that what follows it counts the same. */
void ended_gen_hands_on_what_it_made(void **)
{
	for (const rp::StageOps *ops : {&rp::kGenStage, &rp::kTimedGenStage}) {
		rp::RunControl run;
		Chain c(0, 4, 40, 64);
		c.src.ops = ops;
		c.src.limit = UINT64_MAX;
		c.src.duration_tsc = UINT64_MAX / 2;   // would not end by itself
		c.src.ctl = &run;
		std::thread t([&] { rp::lcore_loop_run(&c.loop); });
		const bool made = within(10, [&] { return c.src.live.msgs.load() > 100; });
		run.end();
		const bool ended = within(10, [&] { return c.loop.finished.load(); });
		if (!ended)
			c.loop.stop.store(true);
		t.join();
		assert_true(made && ended);
		assert_true(c.src.st.msgs > 100);
		assert_int_equal(c.snk.st.msgs, c.src.st.msgs);
		assert_int_equal(c.ver.st.seq_errors, 0);
		assert_int_equal(rte_mempool_avail_count(c.pool), 40);
	}
}

} // namespace

/* Every registered kind is whole: named once, with its hooks and a burst that says its
 * kind, and the hooks a source needs when it makes buffers. The kinds of lib/stages/
 * all registered themselves, in their meson.build order (the .conf reader's choices
 * list them so: tests/conf/bad/stage-kind-typo.conf). */
void registered_kinds_are_whole(void **)
{
	std::string names;
	for (const rp::StageKindInfo *info : rp::stage_kinds()) {
		names += std::string(names.empty() ? "" : ", ") + info->name;
		assert_ptr_equal(rp::stage_kind_named(info->name), info);
		const rp::StageKindOps &ops = rp::kind_ops(info);
		assert_non_null(ops.ops);
		assert_string_equal(ops.ops->kind, info->name);
		assert_int_equal(ops.ops->role, info->needs_io);   // RDMA roles end by themselves on abort
		/* A kind that makes buffers says how many, from which pool, and what it needs of it. */
		const bool source = info->source != rp::BufferSource::upstream;
		assert_int_equal(ops.made != nullptr, source);
		assert_int_equal(ops.pool != nullptr, source);
		assert_int_equal(ops.pool_need != nullptr, source);
	}
	assert_string_equal(names.c_str(), "gen, rdma_tx, rdma_rx, echo, verify, sink, forward, capture");
	assert_null(rp::stage_kind_named("rdma_recv"));
	assert_ptr_equal(rp::stage_kind_of_end(rp::FlowEnd::echo), rp::stage_kind_named("echo"));
}

int main()
{
	if (!eal_for_tests("test_stages"))
		return 1;
	const CMUnitTest tests[] = {
		cmocka_unit_test(delivers_everything_in_order),
		cmocka_unit_test(verify_counts_corruption_and_reordering),
		cmocka_unit_test(done_waits_for_the_ring_to_drain),
		cmocka_unit_test(stage_stats_published),
		cmocka_unit_test(stop_ends_the_loop),
		cmocka_unit_test(timed_gen_stops_and_hands_on_all),
		cmocka_unit_test(ended_gen_hands_on_what_it_made),
		cmocka_unit_test(passive_lcore_sleeps_until_requester_done),
		cmocka_unit_test(passive_lcore_wakes_on_abort_and_end),
		cmocka_unit_test(active_lcore_polls),
		cmocka_unit_test(registered_kinds_are_whole),
	};
	int rc = cmocka_run_group_tests_name("stages", tests, nullptr, nullptr);
	rte_eal_cleanup();
	return rc;
}
