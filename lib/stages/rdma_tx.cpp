/* rdma_tx: a flow's requester (its messages posted as chained WRs, their completions
 * reaped), fed by a ring or making its own; a ping-pong's pinging side when the flow has
 * an echo; one lane of several when the flow has several rdma_tx stages (seed 002). */
#include "pipeline/stage_kind.h"
#include "stages/role_stage.h"
#include "stages/stages.h"

namespace rp {

namespace {

/* One lane of a flow with several rdma_tx stages; lane 0's lcore stands for the flow
 * (for its far end too, unless an rdma_rx stage runs that). */
void place_lane(GraphStage *s)
{
	GraphFlow &f = *s->flow;
	f.lanes.push_back(std::make_unique<GraphLane>());
	GraphLane &lane = *f.lanes.back();
	lane.stage = s;
	lane.lcore = s->lcore;
	s->lcore->lanes.push_back(&lane);
	if (f.lanes.size() == 1) {
		f.tx_stage = &s->st;
		f.tx = s->lcore;
		if (f.rx_stage == nullptr)
			f.rx = s->lcore;
	}
}

/* Its flow's one requester, fed by a ring or making its own messages. */
int place_requester(Graph *, GraphStage *s, std::string *)
{
	GraphFlow &f = *s->flow;
	f.tx_stage = &s->st;
	f.tx = s->lcore;
	f.fed = !s->conf->inputs.empty();
	s->lcore->requesters.push_back(&f);
	return 0;
}

/* A ping-pong's pinging side: it makes its own pings. */
int place_pinger(Graph *g, GraphStage *s, std::string *err)
{
	GraphFlow &f = *s->flow;
	f.tx_stage = &s->st;
	f.tx = s->lcore;
	s->lcore->pingers.push_back(&f);
	s->st.ops = &kPingStage;
	if (!s->conf->inputs.empty()) {
		*err = stage_path(*g, *s) + "flow '" + f.conf->name + "' is a ping-pong (it has an echo stage): its "
							 "rdma_tx makes its own pings, it takes no input ring";
		return -1;
	}
	return 0;
}

int place_lane_stage(Graph *, GraphStage *s, std::string *)
{
	place_lane(s);
	return 0;
}

/* Fed by a ring: it sends what comes, so many messages (or until its input ends), of
 * the size that comes. Its flow's duration is kept by the flow's own gens when they
 * feed it, and is then no error. */
int rdma_tx_check(Graph *g, GraphStage *s, uint64_t in, std::string *err)
{
	GraphFlow &f = *s->flow;
	if (!f.fed)
		return 0;
	const PipelineConf &c = *g->conf;
	const std::string flow = "flows.[" + std::to_string(f.conf - c.flows.data()) + "]";
	if (!verb_info(f.params.verb).payload) {
		*err = stage_path(*g, *s) + "an rdma_tx stage fed by a ring sends the messages it gets: flow '" + f.conf->name +
		       "' uses " + verb_name(f.params.verb) + ", which sends none";
		return -1;
	}
	if (in == UINT64_MAX && f.conf->messages) {
		*err = at(c, f.conf->line, flow + ".messages") + "flow '" + f.conf->name +
		       "' sends what its ring brings, and what comes in runs for a duration: leave messages out (it sends until its input ends)";
		return -1;
	}
	if (in != UINT64_MAX && f.conf->messages && f.conf->messages != in) {
		*err = at(c, f.conf->line, flow + ".messages") + "flow '" + f.conf->name + "' sends what its ring brings: " +
		       std::to_string(in) + " messages (leave messages out, or make it that)";
		return -1;
	}
	const bool own_gens = f.has_gen && s->origins.size() == 1 && s->origins[0] == &f;
	if (f.conf->duration_s > 0 && !own_gens) {
		*err = at(c, f.conf->line, flow + ".duration") + "flow '" + f.conf->name + "' sends what its ring brings (" +
		       (in == UINT64_MAX ? std::string("until its input ends") : std::to_string(in) + " messages") +
		       "): it runs no duration of its own (only its own gen stages, feeding it, make messages for a duration)";
		return -1;
	}
	f.params.messages = in == UINT64_MAX ? 0 : in;
	f.params.tx_count_from_input = in == UINT64_MAX;
	f.params.duration_s = 0;
	return 0;
}

/* Once sizes are known everywhere: a fed flow's size is its input's. */
int rdma_tx_check_input(Graph *g, GraphStage *s, uint32_t bytes, std::string *err)
{
	GraphFlow &f = *s->flow;
	if (!f.fed || bytes == f.params.msg_bytes)
		return 0;
	const FlowConf &fc = *f.conf;
	*err = at(*g->conf, fc.line, "flows.[" + std::to_string(&fc - g->conf->flows.data()) + "].size") + "flow '" + fc.name +
	       "' sends what its ring brings: " + std::to_string(bytes) + " B messages (its size must be that, it is " +
	       std::to_string(f.params.msg_bytes) + ")";
	return -1;
}

/* Fed: its input's buffers are sent as they are (made or received on another device,
 * registered on this one too). */
int wire_fed(Graph *g, GraphStage *s, const StageInput &in, std::string *err)
{
	GraphFlow &f = *s->flow;
	const MrTable *mrs = in.mrs;
	if (in.dev != s->lcore->dev) {
		if (mr_register_mempool(*s->lcore->dev, in.pool, 0, &f.fed_mrs, err) != 0) {
			*err = stage_path(*g, *s) + "its input's pool on " + s->lcore->dev->name + ": " + *err;
			return -1;
		}
		mrs = &f.fed_mrs;
	}
	if (requester_set_input(&f.requester, s->st.in, in.pool, mrs, err) != 0)
		return -1;
	f.responder.self_describing = true;   // the payload was made upstream
	return 0;
}

int wire_requester(Graph *g, GraphStage *s, const StageInput &in, std::string *err)
{
	GraphFlow &f = *s->flow;
	s->st.ctx = &f.requester;
	return f.fed ? wire_fed(g, s, in, err) : 0;
}

int wire_pinger(Graph *, GraphStage *s, const StageInput &, std::string *)
{
	s->st.ctx = &s->flow->ping;
	return 0;
}

int wire_lane(Graph *, GraphStage *s, const StageInput &, std::string *)
{
	for (auto &lane : s->flow->lanes)
		if (lane->stage == s)
			s->st.ctx = &lane->requester;
	s->st.joined = true;   // the other lanes would stall without it
	return 0;
}

/* The variants, one per FlowSender, chosen by the flow's shape row. */
struct TxVariant {
	int (*place)(Graph *g, GraphStage *s, std::string *err);
	int (*wire)(Graph *g, GraphStage *s, const StageInput &in, std::string *err);
};
constexpr TxVariant kTxVariants[] = {   // in FlowSender's order
	{place_requester, wire_requester},     // requester
	{place_pinger, wire_pinger},           // pinger
	{place_lane_stage, wire_lane},         // lane
};
static_assert(std::size(kTxVariants) == static_cast<size_t>(FlowSender::lane) + 1, "a variant for each FlowSender");

const TxVariant &tx_variant(const GraphStage *s)
{
	return kTxVariants[static_cast<int>(s->flow->form->sender)];
}

int rdma_tx_place(Graph *g, GraphStage *s, std::string *err)
{
	return tx_variant(s).place(g, s, err);
}

int rdma_tx_wire(Graph *g, GraphStage *s, const StageInput &in, std::string *err)
{
	return tx_variant(s).wire(g, s, in, err);
}

} // namespace

const StageOps kRdmaTxStage = {"rdma_tx", role_burst<Requester, requester_burst, requester_finish>, true};
const StageOps kPingStage = {"rdma_tx", role_burst<PingPong, pingpong_burst, pingpong_finish>, true};

namespace {

const StageKindOps kRdmaTxOps = {.ops = &kRdmaTxStage, .place = rdma_tx_place, .check = rdma_tx_check,
	.check_input = rdma_tx_check_input, .wire = rdma_tx_wire,
};

const StageKindInfo kRdmaTxKind = {
	.name = "rdma_tx", .article = "a", .in = kOptionalRing, .out = kOptionalRing,
	.needs_flow = true, .needs_io = true, .end = FlowEnd::requester, .source = BufferSource::upstream,
	.checks_payload = false, .writes_file = false,
	.what = "posts a flow's messages as chained WRs (its own, or its input ring's) and reaps their completions",
	.ops = &kRdmaTxOps,
};

} // namespace

RP_STAGE_KIND_REGISTER(kRdmaTxKind)

} // namespace rp
