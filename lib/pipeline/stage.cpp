#include "pipeline/stage.h"
#include "pipeline/stage_kind.h"

#include <cstdio>
#include <cstring>

namespace rp {

bool stage_flush_held(Stage *s)
{
	if (s->nheld == 0)
		return true;
	unsigned sent = rte_ring_enqueue_burst(s->out, s->held, s->nheld, nullptr);
	if (sent < s->nheld) {
		s->st.out_full++;
		memmove(s->held, s->held + sent, (s->nheld - sent) * sizeof(void *));
	}
	s->nheld -= sent;
	return s->nheld == 0;
}

void stage_pass_on(Stage *s, void **msgs, uint32_t n)
{
	unsigned sent = rte_ring_enqueue_burst(s->out, msgs, n, nullptr);
	if (sent < n) {
		s->st.out_full++;
		memcpy(s->held, msgs + sent, (n - sent) * sizeof(void *));
		s->nheld = n - sent;
	}
}

uint32_t stage_idle(Stage *s)
{
	if (s->nheld == 0 && s->nupstream && stage_upstream_done(s) && rte_ring_empty(s->in))
		s->done.store(true, std::memory_order_release);
	return 0;
}

void stage_init(Stage *s, const StageOps *ops, const char *name)
{
	s->ops = ops;
	snprintf(s->name, sizeof(s->name), "%s", name);
}

bool stage_feed(Stage *s, const Stage *from)
{
	if (s->nupstream == kMaxUpstreams)
		return false;
	s->upstream[s->nupstream++] = from;
	return true;
}

bool stage_upstream_done(const Stage *s)
{
	for (uint32_t i = 0; i < s->nupstream; i++)
		if (!s->upstream[i]->done.load(std::memory_order_acquire))
			return false;
	return true;
}

} // namespace rp
