/* forward: passes messages from its input ring to its output ring as they are. */
#include "pipeline/graph_internal.h"
#include "stages/stage_kind.h"

namespace rp {

namespace {

uint32_t forward_burst(Stage *s)
{
	if (!stage_flush_held(s))
		return 0;
	void *msgs[kStageBurst];
	unsigned n = rte_ring_dequeue_burst(s->in, msgs, kStageBurst, nullptr);
	if (n == 0)
		return stage_idle(s);
	s->st.msgs += n;
	s->st.bursts++;
	stage_pass_on(s, msgs, n);
	return n;
}

} // namespace

const StageOps kForwardStage = {"forward", forward_burst};

extern const StageKindOps kForwardKind = {.kind = StageKind::forward, .ops = &kForwardStage, .wire = stage_wire_input};

} // namespace rp
