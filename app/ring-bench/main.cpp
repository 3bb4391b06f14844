/* rdmapipe-ring-bench: what the stage framework costs over bare rte_ring bursts.
 * Both sides move the same messages the same way (a producer lcore takes buffers from
 * an rte_mempool, writes each one's sequence and payload pattern, enqueues bursts of
 * 32 on a single-producer/single-consumer ring; the consumer dequeues them and puts the
 * buffers back, payload untouched): once as two bare loops, once as a source stage
 * and a sink stage run by the lcore loop. Rounds alternate which goes first; medians
 * and their ratio are printed. No RDMA device needed.
 *
 *   rdmapipe-ring-bench -l 0-1 --no-huge -m 256 --no-pci -- [-n MSGS] [-r ROUNDS] [-s BYTES] */
#include "engine/pattern.h"
#include "pipeline/lcore_loop.h"
#include "pipeline/stage.h"
#include "pipeline/stage_kind.h"
#include "stages/stages.h"

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include <getopt.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr unsigned kRingSize = 1024;
constexpr unsigned kPoolSize = 4096;

struct Bare {
	rte_ring *ring;
	rte_mempool *pool;
	uint64_t n;
	uint32_t bytes;
	std::atomic<bool> done{false};
	uint64_t got = 0;
};

int bare_producer(void *arg)
{
	auto *b = static_cast<Bare *>(arg);
	void *msgs[rp::kStageBurst];
	for (uint64_t seq = 0; seq < b->n;) {
		unsigned want = static_cast<unsigned>(std::min<uint64_t>(rp::kStageBurst, b->n - seq));
		if (rte_mempool_get_bulk(b->pool, msgs, want) != 0)
			continue;
		for (unsigned i = 0; i < want; i++) {
			uint64_t s = seq + i;
			memcpy(msgs[i], &s, sizeof(s));
			if (b->bytes > 8)
				rp::pattern_fill(static_cast<unsigned char *>(msgs[i]) + 8, b->bytes - 8, s);
		}
		/* Full ring: back off a little rather than hammer the consumer's cache line. */
		unsigned sent = rte_ring_sp_enqueue_burst(b->ring, msgs, want, nullptr);
		while (sent < want) {
			rte_pause();
			sent += rte_ring_sp_enqueue_burst(b->ring, msgs + sent, want - sent, nullptr);
		}
		seq += want;
	}
	b->done.store(true, std::memory_order_release);
	return 0;
}

void bare_consumer(Bare *b)
{
	/* Like the sink stage: count and free, the payload untouched. */
	void *msgs[rp::kStageBurst];
	while (b->got < b->n) {
		unsigned n = rte_ring_sc_dequeue_burst(b->ring, msgs, rp::kStageBurst, nullptr);
		if (n)
			rte_mempool_put_bulk(b->pool, msgs, n);
		else
			rte_pause();
		b->got += n;
	}
}

double run_bare(rte_ring *ring, rte_mempool *pool, unsigned worker, uint64_t n, uint32_t bytes)
{
	Bare b{ring, pool, n, bytes};
	uint64_t t0 = rte_rdtsc();
	rte_eal_remote_launch(bare_producer, &b, worker);
	bare_consumer(&b);
	uint64_t t1 = rte_rdtsc();
	rte_eal_wait_lcore(worker);
	if (b.got != n)
		fprintf(stderr, "ring-bench: the bare run lost messages\n");
	return static_cast<double>(n) / (static_cast<double>(t1 - t0) / static_cast<double>(rte_get_tsc_hz()));
}

double run_stages(rte_ring *ring, rte_mempool *pool, unsigned worker, uint64_t n, uint32_t bytes, bool *ok)
{
	rp::Stage src, snk;
	rp::stage_init(&src, &rp::kGenStage, "src");
	rp::stage_init(&snk, &rp::kSinkStage, "sink");
	src.out = ring;
	src.pool = pool;
	src.msg_bytes = bytes;
	src.limit = n;
	snk.in = ring;
	snk.pool = pool;
	rp::stage_feed(&snk, &src);
	rp::LcoreLoop a, c;
	a.stages[a.nstages++] = &src;
	c.stages[c.nstages++] = &snk;
	uint64_t t0 = rte_rdtsc();
	rte_eal_remote_launch(rp::lcore_loop_run, &a, worker);
	rp::lcore_loop_run(&c);
	uint64_t t1 = rte_rdtsc();
	rte_eal_wait_lcore(worker);
	*ok = snk.st.msgs == n && src.st.msgs == n;
	return static_cast<double>(n) / (static_cast<double>(t1 - t0) / static_cast<double>(rte_get_tsc_hz()));
}

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void usage()
{
	fprintf(stderr, "usage: rdmapipe-ring-bench [EAL options, 2 lcores] -- [-n MSGS (default 20000000)] "
			"[-r ROUNDS (default 5)] [-s BYTES (8..4096, default 64)]\n");
}

} // namespace

int main(int argc, char **argv)
{
	int ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "ring-bench: EAL initialisation failed: %s\n", rte_strerror(rte_errno));
		return 2;
	}
	argc -= ret;
	argv += ret;
	uint64_t n = 20000000;
	unsigned rounds = 5;
	uint32_t bytes = 64;
	int c;
	optind = 1;
	while ((c = getopt(argc, argv, "n:r:s:h")) != -1) {
		switch (c) {
		case 'n': n = strtoull(optarg, nullptr, 0); break;
		case 'r': rounds = static_cast<unsigned>(strtoul(optarg, nullptr, 0)); break;
		case 's': bytes = static_cast<uint32_t>(strtoul(optarg, nullptr, 0)); break;
		default: usage(); rte_eal_cleanup(); return c == 'h' ? 0 : 2;
		}
	}
	if (n == 0 || rounds == 0 || bytes < 8 || bytes > 4096) {
		usage();
		rte_eal_cleanup();
		return 2;
	}
	unsigned worker = rte_get_next_lcore(-1, 1, 0);
	if (worker >= RTE_MAX_LCORE) {
		fprintf(stderr, "ring-bench: needs 2 lcores (-l 0-1)\n");
		rte_eal_cleanup();
		return 2;
	}
	rte_ring *ring = rte_ring_create("rb_ring", kRingSize, static_cast<int>(rte_socket_id()),
					 RING_F_SP_ENQ | RING_F_SC_DEQ);
	rte_mempool *pool = rte_mempool_create("rb_pool", kPoolSize, bytes, 256, 0, nullptr, nullptr, nullptr, nullptr,
					       static_cast<int>(rte_socket_id()), 0);
	if (ring == nullptr || pool == nullptr) {
		fprintf(stderr, "ring-bench: ring or pool: %s\n", rte_strerror(rte_errno));
		rte_eal_cleanup();
		return 3;
	}
	printf("ring-bench: %" PRIu64 " messages of %u B per run, %u rounds, ring %u (SP/SC), bursts of %u, lcores %u -> %u\n",
	       n, bytes, rounds, kRingSize, rp::kStageBurst, worker, rte_get_main_lcore());
	std::vector<double> bare, staged;
	bool ok = true;
	for (unsigned r = 0; r < rounds; r++) {
		bool stage_ok = true;
		double b, s;
		if (r % 2 == 0) {
			b = run_bare(ring, pool, worker, n, bytes);
			s = run_stages(ring, pool, worker, n, bytes, &stage_ok);
		} else {
			s = run_stages(ring, pool, worker, n, bytes, &stage_ok);
			b = run_bare(ring, pool, worker, n, bytes);
		}
		ok &= stage_ok;
		bare.push_back(b);
		staged.push_back(s);
		printf("round %u: bare %.2f Mmsg/s, stages %.2f Mmsg/s (%.1f%% overhead)\n", r + 1, b / 1e6, s / 1e6,
		       (b / s - 1) * 100);
	}
	double mb = median(bare), ms = median(staged);
	printf("median: bare %.2f Mmsg/s, stages %.2f Mmsg/s\n", mb / 1e6, ms / 1e6);
	printf("overhead: %.1f%% (time per message through stages / bare - 1; target <= 20%%)\n", (mb / ms - 1) * 100);
	if (!ok)
		printf("error: the stage runs lost messages\n");
	rte_ring_free(ring);
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return ok ? 0 : 1;
}
