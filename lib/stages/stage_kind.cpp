#include "stages/stage_kind.h"
#include "pipeline/graph_internal.h"

namespace rp {

extern const StageKindOps kGenKind, kRdmaTxKind, kRdmaRxKind, kEchoKind, kVerifyKind, kSinkKind, kForwardKind;

namespace {

/* Row for row with kStageKinds (kinds.cpp). */
const StageKindOps *const kStageKindOps[kNumStageKinds] = {
	&kGenKind, &kRdmaTxKind, &kRdmaRxKind, &kEchoKind, &kVerifyKind, &kSinkKind, &kForwardKind,
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
	st.ordered = st.nupstream == 1 && st.upstream[0]->ops == &kGenStage;
	return 0;
}

} // namespace rp
