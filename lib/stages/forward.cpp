/* forward: passes messages from its input ring to its output ring as they are. */
#include "pipeline/stage_kind.h"
#include "stages/stages.h"

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

namespace {

const StageKindOps kForwardOps = {.ops = &kForwardStage, .wire = stage_wire_input};

const StageKindInfo kForwardKind = {
	.name = "forward", .article = "a", .in = kOneRing, .out = kOneRing,
	.needs_flow = false, .needs_io = false, .end = FlowEnd::none, .source = BufferSource::upstream,
	.checks_payload = false, .writes_file = false,
	.what = "passes messages from its input ring to its output ring",
	.ops = &kForwardOps,
};

} // namespace

RP_STAGE_KIND_REGISTER(kForwardKind)

} // namespace rp
