#include "stages/stage_kind.h"
#include "pipeline/graph_internal.h"

namespace rp {

extern const StageKindOps kGenKind, kRdmaTxKind, kRdmaRxKind, kEchoKind, kVerifyKind, kSinkKind, kForwardKind, kCaptureKind;

namespace {

/* Row for row with kStageKinds (kinds.cpp). */
const StageKindOps *const kStageKindOps[kNumStageKinds] = {
	&kGenKind, &kRdmaTxKind, &kRdmaRxKind, &kEchoKind, &kVerifyKind, &kSinkKind, &kForwardKind, &kCaptureKind,
};

} // namespace

const StageKindOps &stage_kind_ops(StageKind k)
{
	return *kStageKindOps[static_cast<size_t>(k)];
}

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
	const StageKindOps &kind = stage_kind_ops(s.conf->kind);
	return kind.describe ? kind.describe(s) : stage_describe_output(s);
}

} // namespace rp
