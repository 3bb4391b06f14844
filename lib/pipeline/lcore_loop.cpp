#include "pipeline/lcore_loop.h"

#include <rte_cycles.h>

namespace rp {

namespace {

/* What the control plane may read of each stage (one writer: this lcore). */
void publish(const LcoreLoop *l)
{
	for (uint32_t i = 0; i < l->nstages; i++) {
		Stage *s = l->stages[i];
		s->live.calls.store(s->st.calls, std::memory_order_relaxed);
		s->live.msgs.store(s->st.msgs, std::memory_order_relaxed);
		s->live.cycles.store(s->st.cycles, std::memory_order_relaxed);
	}
}

/* At launch: every stage is passive (none has work per message), so the lcore may
 * sleep. Their passivity is set up before launch and does not change while they run. */
bool all_passive(const LcoreLoop *l)
{
	for (uint32_t i = 0; i < l->nstages; i++) {
		const Stage *s = l->stages[i];
		if (!(s->ops->passive && s->ops->passive(s)))
			return false;
	}
	return l->nstages != 0;
}

/* Called after an iteration with no work that did not end the loop, on a passive
 * lcore. The first such call reads the bell and asks for one more look at the stages;
 * the second, with nothing changed, sleeps until the bell rings after that read (none
 * is lost). */
inline void rest(LcoreLoop *l, uint32_t *seen, bool *armed)
{
	if (!*armed) {
		*seen = l->bell->read();
		*armed = true;
		return;
	}
	l->bell->wait(*seen, kPassiveSleepMs);
	l->passive_sleeps++;
	*armed = false;
}

/* Counting cycles costs a TSC read per call: a variant chosen once, at launch. */
template <bool Cycles>
int run(LcoreLoop *l)
{
	int rc = 0;
	uint32_t seen = 0;
	bool armed = false;   // the bell read, one more look taken before sleeping
	const bool passive = l->bell && all_passive(l);
	bool fresh = false;   // no work since the last publish: an idle loop publishes only every kControlEvery
	for (uint64_t it = 1;; it++) {
		uint32_t work = 0;
		for (uint32_t i = 0; i < l->nstages; i++) {
			Stage *s = l->stages[i];
			if (s->done.load(std::memory_order_relaxed))
				continue;
			s->st.calls++;
			if constexpr (Cycles) {
				const uint64_t t0 = rte_rdtsc();
				const uint32_t n = s->ops->burst(s);
				if (n)
					s->st.cycles += rte_rdtsc() - t0;
				work += n;
			} else {
				work += s->ops->burst(s);
			}
		}
		l->busy_iterations += work != 0;
		fresh &= work == 0;
		l->idler.idle(work != 0);
		if ((it & (kControlEvery - 1)) == 0 || work == 0) {
			if (!fresh || (it & (kControlEvery - 1)) == 0) {
				publish(l);
				fresh = true;
			}
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
			if (work == 0 && passive)
				rest(l, &seen, &armed);
			else
				armed = false;
		}
	}
	publish(l);
	l->finished.store(true, std::memory_order_release);
	return rc;
}

} // namespace

int lcore_loop_run(void *arg)
{
	auto *l = static_cast<LcoreLoop *>(arg);
	return l->count_cycles ? run<true>(l) : run<false>(l);
}

} // namespace rp
