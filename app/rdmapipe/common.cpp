#include "common.h"

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include <time.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <vector>

namespace rp {

namespace {
std::atomic<RunControl *> g_running{nullptr};
} // namespace

void set_running(RunControl *ctl)
{
	g_running.store(ctl);
}

void request_stop()
{
	if (RunControl *c = g_running.load())
		c->abort.store(true);
}

int open_device(const RunOptions &o, Device *dev, DeviceCaps *caps)
{
	std::string names, why, err;
	if (count_devices(&names, &why) == 0) {
		fprintf(stderr, "rdmapipe: no RDMA device: %s.\n"
				"  No RDMA hardware? Run on soft-RoCE: tools/softroce -- rdmapipe ... "
				"(boots a VM with rdma_rxe where the kernel has none; see README.md)\n",
			why.c_str());
		return kExitSetup;
	}
	if (device_open(dev, o.device, o.port, o.gid_index, &err) != 0)
		return setup_error(err);
	std::vector<std::string> notes;
	if (probe_caps(*dev, caps, &notes, &err) != 0)
		return setup_error(err);
	if (!o.quiet) {
		printf("rdmapipe: %s capabilities: %s\n", dev->name.c_str(), caps_str(*caps).c_str());
		for (const std::string &n : notes)
			printf("rdmapipe: %s: %s\n", dev->name.c_str(), n.c_str());
	}
	return kExitOk;
}

const VerbsOps *pick_cq_ops(const RunOptions &o, const Device &dev, const DeviceCaps &caps)
{
	if (o.cq_api != CqApi::ex)
		return &kIbvOps;
	if (!caps.cq_ex) {
		printf("rdmapipe: %s has no extended CQs: --cq-api ex falls back to ibv_poll_cq\n", dev.name.c_str());
		return &kIbvOps;
	}
	return caps.next_poll_ends_batch ? &kIbvCqExRxeOps : &kIbvCqExOps;
}

const char *cq_ops_str(const VerbsOps *ops)
{
	return ops == &kIbvOps ? "ibv_poll_cq bursts" : "extended CQs (ibv_start_poll .. ibv_end_poll)";
}

rte_mempool *make_pool(const char *name, unsigned n, uint32_t elt_bytes, uint32_t burst)
{
	unsigned cache = burst * 2 > RTE_MEMPOOL_CACHE_MAX_SIZE ? RTE_MEMPOOL_CACHE_MAX_SIZE : burst * 2;
	if (cache * 3 / 2 > n)
		cache = 0;   // a cache would strand most of a small pool on one lcore
	return rte_mempool_create(name, n, elt_bytes, cache, 0, nullptr, nullptr, nullptr, nullptr,
				  static_cast<int>(rte_socket_id()), 0);
}

int setup_error(const std::string &err)
{
	fprintf(stderr, "rdmapipe: %s\n", err.c_str());
	return kExitSetup;
}

double thread_cpu_s()
{
	timespec t{};
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

double tsc_to_s(uint64_t t)
{
	return static_cast<double>(t) / static_cast<double>(rte_get_tsc_hz());
}

void print_wc_errors(const char *who, const WcErrorCounts &e)
{
	if (e.total == 0)
		return;
	for (unsigned s = 0; s < kWcStatusCount; s++)
		if (e.by_status[s])
			printf("  %s completion errors: %" PRIu64 " x %s\n", who, e.by_status[s],
			       ibv_wc_status_str(static_cast<ibv_wc_status>(s)));
	printf("  %s first error:  %s (opcode %u, wr_id %" PRIu64 ")\n", who,
	       ibv_wc_status_str(static_cast<ibv_wc_status>(e.first_status)), e.first_opcode, e.first_wr_id);
}

void print_async_events(const AsyncEventWatch &w)
{
	uint64_t nevents = 0;
	for (unsigned t = 0; t < kAsyncEventTypes; t++)
		nevents += w.counts[t].load();
	printf("  async events:        %" PRIu64 "\n", nevents);
	for (uint32_t i = 0; i < w.kept.load(std::memory_order_acquire); i++)
		printf("  async event:         %s\n", w.lines[i]);
}

} // namespace rp
