/* echo: a ping-pong's far end: sends back each message of its flow as it arrives, from
 * the buffer it arrived in. Its flow's rdma_tx is the pinging side. */
#include "pipeline/stage_kind.h"
#include "stages/role_stage.h"
#include "stages/stages.h"

namespace rp {

namespace {

int echo_place(Graph *, GraphStage *s, std::string *)
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

namespace {

const StageKindOps kEchoOps = {.ops = &kEchoStage, .place = echo_place, .wire = echo_wire};

const StageKindInfo kEchoKind = {
	.name = "echo", .article = "an", .in = kNoRing, .out = kNoRing,
	.needs_flow = true, .needs_io = true, .end = FlowEnd::echo, .source = BufferSource::upstream,
	.checks_payload = false, .writes_file = false,
	.what = "sends back each message of a flow as it arrives (a ping-pong's far end)",
	.ops = &kEchoOps,
};

} // namespace

RP_STAGE_KIND_REGISTER(kEchoKind)

} // namespace rp
