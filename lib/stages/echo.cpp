/* echo: a ping-pong's far end: sends back each message of its flow as it arrives, from
 * the buffer it arrived in. Its flow's rdma_tx is the pinging side. */
#include "pipeline/graph_internal.h"
#include "stages/role_stage.h"
#include "stages/stage_kind.h"

namespace rp {

namespace {

int echo_place(Graph *, GraphStage *s, unsigned, std::string *)
{
	GraphFlow &f = *s->flow;
	f.rx_stage = &s->st;
	f.rx = s->lcore;
	s->lcore->echoers.push_back(&f);
	return 0;
}

int echo_wire(Graph *, GraphStage *s, const StageInput &, std::string *)
{
	s->st.ctx = &s->flow->pong;
	return 0;
}

} // namespace

const StageOps kEchoStage = {"echo", role_burst<PingPong, pingpong_burst, pingpong_finish>, true};

extern const StageKindOps kEchoKind = {.kind = StageKind::echo, .ops = &kEchoStage, .place = echo_place, .wire = echo_wire};

} // namespace rp
