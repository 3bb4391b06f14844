/* verify: checks each message's pattern against its sequence number and, where one gen
 * feeds it straight, their order; then passes it on or frees it. */
#include "pipeline/stage_kind.h"
#include "stages/stages.h"

#include "engine/pattern.h"

namespace rp {

namespace {

uint32_t verify_burst(Stage *s)
{
	if (s->out && !stage_flush_held(s))
		return 0;
	void *msgs[kStageBurst];
	unsigned n = rte_ring_dequeue_burst(s->in, msgs, kStageBurst, nullptr);
	if (n == 0)
		return stage_idle(s);
	for (unsigned i = 0; i < n; i++) {
		uint64_t seq;
		if (self_describing_check(msgs[i], s->msg_bytes, &seq) >= 0)
			s->st.payload_errors++;
		/* Messages of several QPs interleave: then only each one's own content counts. */
		if (s->ordered && seq != s->seq)
			s->st.seq_errors++;
		s->seq = seq + 1;
	}
	s->st.msgs += n;
	s->st.bursts++;
	if (s->out)
		stage_pass_on(s, msgs, n);
	else
		rte_mempool_put_bulk(s->pool, msgs, n);
	return n;
}

std::string verify_describe(const GraphStage &s)
{
	const StageStats &st = s.st.st;
	return ", checked " + std::to_string(st.msgs) + (s.st.ordered ? " in order" : "") + " (payload errors " +
	       std::to_string(st.payload_errors) +
	       ", sequence errors " + std::to_string(st.seq_errors) + ")" + stage_describe_output(s);
}

} // namespace

const StageOps kVerifyStage = {"verify", verify_burst};

namespace {

const StageKindOps kVerifyOps = {.ops = &kVerifyStage, .wire = stage_wire_input,
					 .describe = verify_describe};

const StageKindInfo kVerifyKind = {
	.name = "verify", .article = "a", .in = kOneRing, .out = kOptionalRing,
	.needs_flow = false, .needs_io = false, .end = FlowEnd::none, .source = BufferSource::upstream,
	.checks_payload = true, .writes_file = false,
	.what = "checks each message's pattern and sequence, then passes it on or frees it",
	.ops = &kVerifyOps,
};

} // namespace

RP_STAGE_KIND_REGISTER(kVerifyKind)

} // namespace rp
