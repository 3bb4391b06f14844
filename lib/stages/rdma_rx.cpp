/* rdma_rx: a flow's responder: polls the lcore's shared receive CQ, refills its SRQ in
 * batches, returns credit, and hands received buffers on to its output ring (sends). */
#include "pipeline/stage_kind.h"
#include "stages/role_stage.h"
#include "stages/stages.h"

namespace rp {

namespace {

int rdma_rx_place(Graph *, GraphStage *s, std::string *)
{
	GraphFlow &f = *s->flow;
	f.rx_stage = &s->st;
	f.rx = s->lcore;
	f.handed_on = !s->conf->outputs.empty();
	s->lcore->responders.push_back(&f);
	return 0;
}

/* All of its flow's messages: what its rdma_tx's ring brings, a duration's, or a count. */
uint64_t rdma_rx_made(const Graph &g, const GraphStage &s, const CountOf &count_of)
{
	const GraphFlow &f = *s.flow;
	if (f.fed)
		return count_of(tx_of(&g, &f));
	return f.params.duration_s > 0 ? UINT64_MAX : f.params.messages;
}

/* Handed on, a received buffer is a message: one that a send filled, with its key. */
int rdma_rx_check(Graph *g, GraphStage *s, uint64_t, std::string *err)
{
	const GraphFlow &f = *s->flow;
	if (!f.handed_on)
		return 0;
	if (!verb_info(f.params.verb).fills_receive) {
		*err = stage_path(*g, *s) + "an rdma_rx stage hands received buffers on: flow '" + f.conf->name + "' uses " +
		       verb_name(f.params.verb) + ", which fills no receive buffer (use send or send_imm)";
		return -1;
	}
	if (f.params.msg_bytes < 8) {
		*err = stage_path(*g, *s) + "received messages handed on carry their key in their first 8 bytes: flow '" +
		       f.conf->name + "' sends " + std::to_string(f.params.msg_bytes) + " B";
		return -1;
	}
	return 0;
}

/* Handed on: its window, a poll burst and what downstream holds, beyond the SRQ's. */
uint64_t rdma_rx_pool_need(Graph *g, const GraphStage &s)
{
	if (!s.flow->handed_on)
		return 0;
	std::set<const GraphStage *> seen;
	return flow_inflight(s.flow->params) + kRxPollBurst + downstream_hold(g, &s, &seen);
}

rte_mempool *rdma_rx_pool(const GraphStage &s, const MrTable **mrs, Device **dev)
{
	*mrs = &s.lcore->rx_mrs;
	*dev = s.lcore->dev;
	return s.lcore->rx_pool;
}

int rdma_rx_wire(Graph *g, GraphStage *s, const StageInput &, std::string *)
{
	GraphFlow &f = *s->flow;
	s->st.ctx = &f.responder;
	if (f.handed_on) {
		std::set<const GraphStage *> seen;
		f.responder.out = s->st.out;
		f.responder.payload_downstream = has_verify_downstream(g, s, &seen);
		f.requester.p.self_describing = true;   // a stage downstream reads each message alone
		f.responder.self_describing = true;
	}
	return 0;
}

/* Its responder hands buffers on: the ring's back-pressure is its. */
std::string rdma_rx_describe(const GraphStage &s)
{
	return ", " + std::to_string(s.flow->responder.out_full) + " bursts held back by a full ring";
}

bool rdma_rx_passive(const Stage *s)
{
	return responder_passive(static_cast<const Responder *>(s->ctx));
}

} // namespace

const StageOps kRdmaRxStage = {"rdma_rx", role_burst<Responder, responder_burst, responder_finish>, true,
			       rdma_rx_passive};

namespace {

const StageKindOps kRdmaRxOps = {.ops = &kRdmaRxStage, .place = rdma_rx_place, .made = rdma_rx_made,
	.check = rdma_rx_check, .pool_need = rdma_rx_pool_need, .pool = rdma_rx_pool, .wire = rdma_rx_wire,
	.describe = rdma_rx_describe,
};

const StageKindInfo kRdmaRxKind = {
	.name = "rdma_rx", .article = "a", .in = kNoRing, .out = kOptionalRing,
	.needs_flow = true, .needs_io = true, .end = FlowEnd::responder, .source = BufferSource::lcore_pool,
	.checks_payload = false, .writes_file = false,
	.what = "receives a flow: polls the shared receive CQ, refills the SRQ, returns credit, hands received buffers on",
	.ops = &kRdmaRxOps,
};

} // namespace

RP_STAGE_KIND_REGISTER(kRdmaRxKind)

} // namespace rp
