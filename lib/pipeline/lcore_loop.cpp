#include "pipeline/lcore_loop.h"

namespace rp {

int lcore_loop_run(void *arg)
{
	auto *l = static_cast<LcoreLoop *>(arg);
	int rc = 0;
	for (uint64_t it = 1;; it++) {
		uint32_t work = 0;
		for (uint32_t i = 0; i < l->nstages; i++) {
			Stage *s = l->stages[i];
			if (!s->done.load(std::memory_order_relaxed))
				work += s->ops->burst(s);
		}
		l->busy_iterations += work != 0;
		l->idler.idle(work != 0);
		if ((it & (kControlEvery - 1)) == 0 || work == 0) {
			if (l->stop.load(std::memory_order_acquire)) {
				rc = -1;
				l->iterations = it;
				break;
			}
			const bool aborted = l->abort && l->abort->load(std::memory_order_relaxed);
			bool all = true;
			for (uint32_t i = 0; i < l->nstages; i++)
				all &= l->stages[i]->done.load(std::memory_order_relaxed) || (aborted && !l->stages[i]->ops->role);
			if (all && aborted)
				rc = -1;
			if (all) {
				l->iterations = it;
				break;
			}
		}
	}
	l->finished.store(true, std::memory_order_release);
	return rc;
}

} // namespace rp
