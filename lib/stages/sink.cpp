/* sink: counts the messages of its input ring and frees them. */
#include "pipeline/graph_internal.h"
#include "stages/stage_kind.h"

namespace rp {

namespace {

uint32_t sink_burst(Stage *s)
{
	void *msgs[kStageBurst];
	unsigned n = rte_ring_dequeue_burst(s->in, msgs, kStageBurst, nullptr);
	if (n == 0)
		return stage_idle(s);
	s->st.msgs += n;
	s->st.bursts++;
	rte_mempool_put_bulk(s->pool, msgs, n);
	return n;
}

} // namespace

const StageOps kSinkStage = {"sink", sink_burst};

extern const StageKindOps kSinkKind = {.kind = StageKind::sink, .ops = &kSinkStage, .wire = stage_wire_input};

} // namespace rp
