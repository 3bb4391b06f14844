/* What the builder offers every kind: the wiring of one that takes its input's buffers
 * and the summary line's common part. */
#include "pipeline/stage_kind.h"

namespace rp {

int stage_wire_input(Graph *, GraphStage *s, const StageInput &in, std::string *)
{
	Stage &st = s->st;
	st.pool = in.pool;
	st.msg_bytes = in.bytes;
	st.ordered = st.nupstream == 1 && st.upstream[0]->ops->in_order;
	return 0;
}

std::string stage_describe_output(const GraphStage &s)
{
	if (s.conf->outputs.empty())
		return "";
	return ", " + std::to_string(s.st.st.out_full) + " bursts held back by a full ring";
}

std::string stage_describe(const GraphStage &s)
{
	const StageKindOps &kind = kind_ops(s.conf->kind);
	return kind.describe ? kind.describe(s) : stage_describe_output(s);
}

} // namespace rp
