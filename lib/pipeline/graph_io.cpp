/* Each lcore's io context: its CQs and SRQ made, the SRQ (or the QPs' own receive queues)
 * filled, and the completion routers that let all of its roles share them. */
#include "pipeline/graph_internal.h"

namespace rp {

namespace {

const VerbsOps *cq_ops_for(CqApi api, const DeviceCaps &caps)
{
	if (api != CqApi::ex || !caps.cq_ex)
		return &kIbvOps;
	return caps.next_poll_ends_batch ? &kIbvCqExRxeOps : &kIbvCqExOps;
}

} // namespace

int make_lcore_io(GraphLcore *l, std::string *err)
{
	const IoContextConf &ic = *l->conf;
	Device &dev = *l->dev;
	const std::string who = "lcore " + std::to_string(l->lcore) + "'s io context";
	const uint64_t max_cqe = static_cast<uint64_t>(dev.dev_attr.max_cqe);
	if (std::max(l->send_cq, l->recv_cq) > max_cqe) {
		*err = who + ": a " + (l->send_cq > l->recv_cq ? "send" : "receive") + " CQ of " +
		       std::to_string(std::max(l->send_cq, l->recv_cq)) + " entries would be needed for its flows, " + dev.name +
		       " allows " + std::to_string(max_cqe) + " (fewer QPs, smaller send queues or windows on this lcore)";
		return -1;
	}
	if (!ic.rq_per_qp && l->srq > static_cast<uint64_t>(dev.dev_attr.max_srq_wr)) {
		*err = who + ": an SRQ of " + std::to_string(l->srq) + " receives would be needed, " + dev.name + " allows " +
		       std::to_string(dev.dev_attr.max_srq_wr);
		return -1;
	}
	l->ops = cq_ops_for(ic.cq_api, *l->caps);
	if (shared_io_context_create(dev, static_cast<uint32_t>(l->send_cq), static_cast<uint32_t>(l->recv_cq),
				     ic.rq_per_qp ? 0 : static_cast<uint32_t>(l->srq), ic.adaptive_poll, l->ops != &kIbvOps, &l->io, err) != 0) {
		*err = who + ": " + *err;
		return -1;
	}
	l->has_io = true;
	return 0;
}

/* Lcore `lcore` has an SRQ (some flow receives SENDs there; planned sizes). */
bool lcore_has_srq(const Graph &g, unsigned lcore)
{
	for (const auto &l : g.lcores)
		if (l->lcore == lcore && l->conf && l->has_roles() && l->srq)
			return true;
	return false;
}

/* The SRQ's receive pool (SEND receives carry a buffer; WRITE_WITH_IMM ones none),
 * registered, and the SRQ filled (or, starved, left empty for --inject-rnr). */
int fill_lcore_srq(GraphLcore *l, bool starve, std::string *err)
{
	if (l->srq == 0)
		return 0;
	const std::string who = "lcore " + std::to_string(l->lcore) + "'s receive pool";
	const std::string name = "rp_rx" + std::to_string(l->lcore);
	if (l->rx_bytes && (l->rx_pool = make_registered_pool(name.c_str(), who.c_str(), l->rx_pool_n, l->rx_bytes, kRxPollBurst,
							      UINT32_MAX, *l->dev, IBV_ACCESS_LOCAL_WRITE, &l->rx_mrs, err)) == nullptr)
		return -1;
	if (l->conf->rq_per_qp) {
		uint32_t nqps = 0;
		for (auto *side : {&l->responders, &l->pingers, &l->echoers})
			for (const GraphFlow *f : *side)
				nqps += f->params.rq_depth ? f->params.qps : 0;
		RP_LOG(DEBUG, PIPELINE, "rdmapipe: lcore %u: %u QPs with receive queues of their own (%" PRIu64 " receives), receive pool %u buffers of %u B\n",
		       l->lcore, nqps, l->srq, l->rx_pool ? l->rx_pool_n : 0, l->rx_bytes);
		if (l->refill.init_qps(nqps, kRxPollBurst, l->rx_pool, l->rx_bytes, l->rx_pool ? &l->rx_mrs : nullptr) != 0) {
			*err = "lcore " + std::to_string(l->lcore) + "'s receive refill: bad sizes (" + std::to_string(nqps) + " QPs)";
			return -1;
		}
		return 0;   // filled once the QPs exist (fill_flow_rqs)
	}
	if (l->refill.init(l->io.srq, static_cast<uint32_t>(l->srq), static_cast<uint32_t>(l->srq_threshold), kRxPollBurst, l->rx_pool,
			   l->rx_bytes, l->rx_pool ? &l->rx_mrs : nullptr) != 0) {
		*err = "lcore " + std::to_string(l->lcore) + "'s SRQ refill: bad sizes (depth " + std::to_string(l->srq) +
		       ", threshold " + std::to_string(l->srq_threshold) + ")";
		return -1;
	}
	RP_LOG(DEBUG, PIPELINE, "rdmapipe: lcore %u: SRQ of %" PRIu64 " receives (refilled %" PRIu64 " at a time), receive pool %u buffers of %u B\n",
	       l->lcore, l->srq, l->srq_threshold, l->rx_pool ? l->rx_pool_n : 0, l->rx_bytes);
	if (starve) {
		l->refill.starve();
		return 0;
	}
	int ret = l->refill.fill(*l->ops);
	if (ret < 0 || static_cast<uint64_t>(ret) != l->srq) {
		*err = "lcore " + std::to_string(l->lcore) + ": filling the SRQ with " + std::to_string(l->srq) + " receives: " +
		       (ret < 0 ? strerror(-ret) : "too few buffers");
		return -1;
	}
	return 0;
}

/* The shapes' rq_qps hooks: a ping-pong's QPs on either of its sides that is l (both,
 * one lcore doing both), of sends; a responder's, when its verb consumes receives. */
std::vector<ibv_qp *> pingpong_rq_qps(const GraphFlow &f, const GraphLcore *l)
{
	std::vector<ibv_qp *> qps;
	if (!verb_consumes_receive(f.params.verb))
		return qps;   // writes land in slots
	if (l == f.tx)
		for (uint32_t i = 0; i < f.ping.nqps; i++)
			qps.push_back(f.ping.qps[i].qp);
	if (l == f.rx)
		for (uint32_t i = 0; i < f.pong.nqps; i++)
			qps.push_back(f.pong.qps[i].qp);
	return qps;
}

std::vector<ibv_qp *> responder_rq_qps(const GraphFlow &f, const GraphLcore *l)
{
	std::vector<ibv_qp *> qps;
	if (l == f.rx && verb_consumes_receive(f.params.verb))
		for (uint32_t i = 0; i < f.responder.nqps; i++)
			qps.push_back(f.responder.qps[i].qp);
	return qps;
}

/* recv_queue = "qp": flow f's receiving QPs on lcore l (a responder's, either side of a
 * ping-pong) get their receives as soon as the flow is set up, not after every flow: a
 * server's client may send while this host still accepts the clients of its other
 * flows. Accept threads of flows on one lcore share its refill: hence the lock (setup
 * only). A starved lcore (--inject-rnr) posts nothing. */
int fill_flow_rqs(GraphLcore *l, GraphFlow &f, std::string *err)
{
	if (l == nullptr || !l->refill.per_qp() || f.form->rq_qps == nullptr)
		return 0;
	std::lock_guard<std::mutex> lock(l->rq_mu);
	for (ibv_qp *qp : f.form->rq_qps(f, l))
		if (int ret = l->refill.add_qp(qp, f.params.rq_depth, f.params.rq_refill); ret != 0) {
			*err = "flow '" + f.conf->name + "': QP " + std::to_string(qp->qp_num) + "'s receive queue: " + strerror(-ret);
			return -1;
		}
	if (l->starved)
		return 0;
	const int ret = l->refill.fill(*l->ops);
	if (ret < 0 || l->refill.missing() != 0) {
		*err = "flow '" + f.conf->name + "': filling its QPs' receive queues on lcore " + std::to_string(l->lcore) + ": " +
		       (ret < 0 ? strerror(-ret) : "too few buffers");
		return -1;
	}
	return 0;
}

/* Once every flow is set up: each QP of the lcore has its receive queue filled (or, for
 * --inject-rnr, none ever will be). */
int check_lcore_rqs(GraphLcore *l, std::string *err)
{
	if (!l->refill.per_qp())
		return 0;
	if (l->starved) {
		l->refill.starve();
		return 0;
	}
	if (l->refill.posted() != l->srq) {
		*err = "lcore " + std::to_string(l->lcore) + ": " + std::to_string(l->refill.posted()) + " receives posted to its QPs' queues, " +
		       std::to_string(l->srq) + " planned (a receiving QP left out)";
		return -1;
	}
	return 0;
}

/* Every role of an lcore shares its CQs: completions of another role's QP go there. */
int route_lcore(GraphLcore *l, std::string *err)
{
	auto qp_nums = [](auto &qps, uint32_t n) {
		std::vector<uint32_t> v;
		for (uint32_t i = 0; i < n; i++)
			v.push_back(qps[i].qp->qp_num);
		return v;
	};
	for (GraphFlow *f : l->requesters)
		l->send_router.add(requester_on_send_wc, &f->requester, qp_nums(f->requester.qps, f->requester.nqps));
	for (GraphFlow *f : l->responders) {
		l->send_router.add(responder_on_send_wc, &f->responder, qp_nums(f->responder.qps, f->responder.nqps));
		l->recv_router.add(responder_on_recv_wc, &f->responder, qp_nums(f->responder.qps, f->responder.nqps));
	}
	std::vector<PingPong *> pps;
	for (GraphFlow *f : l->pingers)
		pps.push_back(&f->ping);
	for (GraphFlow *f : l->echoers)
		pps.push_back(&f->pong);
	for (PingPong *pp : pps) {
		l->send_router.add(pingpong_on_send_wc, pp, qp_nums(pp->qps, pp->nqps));
		l->recv_router.add(pingpong_on_recv_wc, pp, qp_nums(pp->qps, pp->nqps));
	}
	if (l->send_router.build(err) != 0 || l->recv_router.build(err) != 0) {
		*err = "lcore " + std::to_string(l->lcore) + ": " + *err;
		return -1;
	}
	if (l->requesters.size() + l->responders.size() + pps.size() < 2)
		return 0;   // one role: a foreign completion is counted as such
	for (PingPong *pp : pps) {
		pp->send_peer = l->send_router.peer();
		pp->recv_peer = l->recv_router.peer();
	}
	for (GraphFlow *f : l->requesters)
		f->requester.send_peer = l->send_router.peer();
	for (GraphFlow *f : l->responders) {
		f->responder.send_peer = l->send_router.peer();
		f->responder.recv_peer = l->recv_router.peer();
	}
	return 0;
}

} // namespace rp
