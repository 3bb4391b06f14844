#include "control/report.h"

#include <infiniband/verbs.h>
#include <rte_cycles.h>

#include <cinttypes>
#include <cstdio>

namespace rp {

const char *cq_ops_str(const VerbsOps *ops)
{
	return ops == &kIbvOps ? "ibv_poll_cq bursts" : "extended CQs (ibv_start_poll .. ibv_end_poll)";
}

double tsc_to_s(uint64_t t)
{
	return static_cast<double>(t) / static_cast<double>(rte_get_tsc_hz());
}

void print_wc_errors(Report &out, const char *who, const WcErrorCounts &e)
{
	if (e.total == 0)
		return;
	for (unsigned s = 0; s < kWcStatusCount; s++)
		if (e.by_status[s])
			out.put("  %s completion errors: %" PRIu64 " x %s\n", who, e.by_status[s],
			        ibv_wc_status_str(static_cast<ibv_wc_status>(s)));
	out.put("  %s first error:  %s (opcode %u, wr_id %" PRIu64 ")\n", who,
	        ibv_wc_status_str(static_cast<ibv_wc_status>(e.first_status)), e.first_opcode, e.first_wr_id);
}

void print_async_events(Report &out, const AsyncEventWatch &w)
{
	print_async_events(out, std::vector<const AsyncEventWatch *>{&w});
}

void print_async_events(Report &out, const std::vector<const AsyncEventWatch *> &ws)
{
	uint64_t nevents = 0;
	for (const AsyncEventWatch *w : ws)
		for (unsigned t = 0; t < kAsyncEventTypes; t++)
			nevents += w->counts[t].load();
	out.put("  async events:        %" PRIu64 "\n", nevents);
	for (const AsyncEventWatch *w : ws)
		for (uint32_t i = 0; i < w->kept.load(std::memory_order_acquire); i++)
			out.put("  async event:         %s\n", w->lines[i]);
}

} // namespace rp
