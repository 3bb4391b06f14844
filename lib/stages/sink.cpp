/* sink: counts the messages of its input ring and frees them. */
#include "pipeline/stage_kind.h"
#include "stages/stages.h"

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

namespace {

const StageKindOps kSinkOps = {.ops = &kSinkStage, .wire = stage_wire_input};

const StageKindInfo kSinkKind = {
	.name = "sink", .article = "a", .in = kOneRing, .out = kNoRing,
	.needs_flow = false, .needs_io = false, .end = FlowEnd::none, .source = BufferSource::upstream,
	.checks_payload = false, .writes_file = false,
	.what = "counts and frees",
	.ops = &kSinkOps,
};

} // namespace

RP_STAGE_KIND_REGISTER(kSinkKind)

} // namespace rp
