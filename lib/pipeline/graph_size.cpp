/* Sizing and fitting: each lcore's io context, SRQ and receive pool and each flow's pools
 * from its roles, then fitted to the devices' limits (max_cqe, max_srq_wr, max_qp_wr). */
#include "pipeline/graph_internal.h"
#include "pipeline/stage_kind.h"

namespace rp {

namespace {

/* Per-QP receive queues (recv_queue = "qp"): each QP keeps its window of receives (a
 * ping-pong's one message) and a refill of an eighth of it, at least one, as the SRQ
 * keeps its flows' windows and an eighth. Returns the receives over the flow's QPs. */
uint64_t size_rq(GraphFlow *f, bool pingpong)
{
	FlowParams &o = f->params;
	const uint64_t w = pingpong ? 1 : flow_receives(f) / o.qps;
	o.rq_refill = static_cast<uint32_t>(std::max<uint64_t>(1, w / 8));
	o.rq_depth = static_cast<uint32_t>(w + o.rq_refill);
	return static_cast<uint64_t>(o.qps) * o.rq_depth;
}

/* An lcore's io context sizes, from its roles: the send CQ holds every WR of its
 * requesters' QPs (a failed QP flushes them all) and every credit write of its
 * responders'; the SRQ every window received here and a refill batch; the receive CQ
 * the SRQ. The file's larger values win. Its receive pool holds the SRQ, a poll burst,
 * and what the flows it hands on can hold downstream. */
void size_lcore(Graph *g, GraphLcore *l)
{
	const IoContextConf &ic = *l->conf;
	uint64_t window = 0;
	uint32_t batch = 1;
	l->send_cq = l->srq = l->srq_threshold = l->recv_cq = 0;   // sized afresh (size_graph runs again once chunks are known)
	l->rx_bytes = l->rx_pool_n = 0;
	for (GraphFlow *f : l->requesters)
		l->send_cq += f->params.wr_budget ? f->params.wr_budget : static_cast<uint64_t>(f->params.qps) * f->params.sq_depth;
	/* Ping-pong: both sides send and receive, one message in flight per QP; receives
	 * are reposted in batches of kPingPongRefill (writes: none, they land in slots). */
	uint64_t echo_held = 0;   // echoes wait in their send queues in receive buffers
	uint64_t per_qp = 0;      // receives in the QPs' own queues (recv_queue = "qp")
	for (auto *side : {&l->pingers, &l->echoers})
		for (GraphFlow *f : *side) {
			l->send_cq += static_cast<uint64_t>(f->params.qps) * f->params.sq_depth;
			if (!verb_consumes_receive(f->params.verb))
				continue;
			window += f->params.qps;
			per_qp += ic.rq_per_qp ? size_rq(f, true) : 0;
			batch = std::max(batch, kPingPongRefill);
			l->rx_bytes = std::max(l->rx_bytes, f->params.msg_bytes);
			if (side == &l->echoers)
				echo_held += static_cast<uint64_t>(f->params.qps) * f->params.sq_depth + kRxPollBurst;
		}
	for (GraphFlow *f : l->responders) {
		batch = std::max(batch, f->params.batch);
		if (!verb_consumes_receive(f->params.verb))
			continue;
		l->send_cq += static_cast<uint64_t>(f->params.qps) * kCreditRing;
		window += flow_receives(f);
		per_qp += ic.rq_per_qp ? size_rq(f, false) : 0;
		if (verb_info(f->params.verb).fills_receive)
			l->rx_bytes = std::max(l->rx_bytes, f->params.msg_bytes);
		else if (f->reliable())   // a retransmitted write arrives as a SEND: header and chunk
			l->rx_bytes = std::max<uint32_t>(l->rx_bytes, Chunking::of(f->params.msg_bytes, f->params.chunk_bytes).bytes + sizeof(RetxHeader));
	}
	l->send_cq = std::max<uint64_t>({l->send_cq, ic.send_cq, 1});
	if (window && ic.rq_per_qp) {
		l->srq = per_qp;
	} else if (window) {
		l->srq_threshold = ic.srq_refill ? ic.srq_refill : std::max<uint64_t>(batch, window / 8);
		l->srq = std::max<uint64_t>(window + l->srq_threshold, ic.srq);
	}
	l->recv_cq = std::max<uint64_t>({l->srq, ic.recv_cq, 1});
	if (l->srq == 0 || l->rx_bytes == 0)
		return;
	uint64_t n = l->srq + 2 * kRxPollBurst + 1 + echo_held;
	for (auto &s : g->stages)   // received buffers handed on
		if (s->lcore == l && s->conf->kind->source == BufferSource::lcore_pool)
			n += kind_ops(s->conf->kind).pool_need(g, *s);
	l->rx_pool_n = static_cast<uint32_t>(std::min<uint64_t>(n, UINT32_MAX));
}

/* Whether the window that bounds a flow's receives was set by the file: the flow's
 * where its QPs share one, else each QP's. */
bool window_given(const FlowParams &o)
{
	return o.flow_window ? o.flow_window_given : o.slots_given;
}

/* Receives an lcore's SRQ holds for windows the file set (fixed) and for those left to
 * their defaults (adjustable), counted in receives (a chunk each). */
void window_receives(const GraphLcore *l, uint64_t *fixed, uint64_t *adjustable)
{
	*fixed = *adjustable = 0;
	for (auto *side : {&l->pingers, &l->echoers})
		for (const GraphFlow *f : *side)
			*fixed += verb_consumes_receive(f->params.verb) ? f->params.qps : 0;
	for (const GraphFlow *f : l->responders)
		if (verb_consumes_receive(f->params.verb))
			*(window_given(f->params) ? fixed : adjustable) += flow_receives(f);
}

/* Per-QP receive queues: each within the device's max_qp_wr (a window the file set
 * may ask for more). */
int fit_rq_depths(const GraphLcore *l, std::string *err)
{
	if (!l->conf->rq_per_qp)
		return 0;
	const uint64_t max_wr = static_cast<uint64_t>(l->dev->dev_attr.max_qp_wr);
	for (auto *side : {&l->responders, &l->pingers, &l->echoers})
		for (const GraphFlow *f : *side)
			if (f->params.rq_depth > max_wr) {
				*err = "flow '" + f->conf->name + "': a receive queue of " + std::to_string(f->params.rq_depth) + " per QP (its window and a refill) is above " +
				       l->dev->name + "'s max_qp_wr " + std::to_string(max_wr) + " (a smaller window, or recv_queue = \"srq\")";
				return -1;
			}
	return 0;
}

/* A flow window left to its default, scaled down to fit the receiving lcore's device
 * (its QPs' own windows with it where they were as large: sends), and a default batch
 * with it, so that a chain still fits. */
int fit_flow_window(const Graph *g, GraphFlow *f, double scale, const std::string &limit, std::string *said, std::string *err)
{
	FlowParams &o = f->params;
	const uint32_t fw = std::max<uint32_t>(1, static_cast<uint32_t>(o.flow_window * scale));
	if (fw < o.batch && o.batch_given) {
		*err = at(*g->conf, f->conf->line, "batch") + "flow '" + f->conf->name + "': its flow window, fitted to " + limit + ", is " +
		       std::to_string(fw) + " messages, below its batch of " + std::to_string(o.batch) + " (a smaller batch)";
		return -1;
	}
	*said += std::string(said->empty() ? "" : "; ") + "flow '" + f->conf->name + "': window " + std::to_string(fw) +
		 " messages over its " + std::to_string(o.qps) + " QPs (default " + std::to_string(o.flow_window) + ")";
	if (o.slots >= o.flow_window)
		o.slots = fw;
	o.flow_window = fw;
	if (o.batch > fw) {
		o.batch = fw;
		*said += ", batch " + std::to_string(fw);
		if (!o.signal_given)
			o.signal_every = fw;
	}
	return 0;
}

/* The windows of lcore l's receiving flows, fitted so that its SRQ (every window and a
 * refill) and the receive CQ that holds it fit the device: the defaults shrink in
 * proportion, and a batch left to its default with them (a chain fits its window).
 * Windows the file set stay: if they alone cannot fit, that is the error. */
int fit_windows(Graph *g, GraphLcore *l, std::string *said, std::string *err)
{
	const Device &dev = *l->dev;
	const IoContextConf &ic = *l->conf;
	/* Per-QP receive queues have no SRQ to fit: only the receive CQ that holds them. */
	const uint64_t limit = ic.rq_per_qp ? static_cast<uint64_t>(dev.dev_attr.max_cqe)
					    : std::min<uint64_t>(dev.dev_attr.max_srq_wr, dev.dev_attr.max_cqe);
	const char *queue = ic.rq_per_qp ? "its QPs' receive queues" : "an SRQ";
	const std::string who = "lcore " + std::to_string(l->lcore) + "'s io context";
	if (ic.srq > limit || ic.recv_cq > static_cast<uint64_t>(dev.dev_attr.max_cqe) || ic.srq_refill >= limit) {
		const char *what = ic.srq > limit ? "srq" : ic.recv_cq > static_cast<uint64_t>(dev.dev_attr.max_cqe) ? "recv_cq" : "srq_refill";
		const uint64_t v = ic.srq > limit ? ic.srq : ic.recv_cq > static_cast<uint64_t>(dev.dev_attr.max_cqe) ? ic.recv_cq : ic.srq_refill;
		*err = at(*g->conf, ic.line, "io_contexts") + who + ": " + what + " " + std::to_string(v) + " does not fit " + dev.name +
		       " (max_srq_wr " + std::to_string(dev.dev_attr.max_srq_wr) + ", max_cqe " + std::to_string(dev.dev_attr.max_cqe) +
		       "; the receive CQ holds the SRQ)";
		return -1;
	}
	if (std::max(l->srq, l->recv_cq) <= limit)
		return fit_rq_depths(l, err);
	uint64_t fixed, adjustable;
	window_receives(l, &fixed, &adjustable);
	/* The SRQ holds the windows and a refill threshold of an eighth of them, at least
	 * the largest batch (kMaxBatch at most). */
	const uint64_t room = ic.srq_refill ? limit - ic.srq_refill : std::min<uint64_t>(limit * 8 / 9, limit - std::min<uint64_t>(limit, kMaxBatch));
	if (adjustable == 0 || fixed >= room) {
		*err = who + ": its flows' receive windows need " + queue + " of " + std::to_string(l->srq) + " receives and a receive CQ as large; " +
		       dev.name + " allows " + std::to_string(limit) + " (max_srq_wr " + std::to_string(dev.dev_attr.max_srq_wr) +
		       ", max_cqe " + std::to_string(dev.dev_attr.max_cqe) + "): smaller windows or fewer QPs on this lcore";
		return -1;
	}
	const double scale = static_cast<double>(room - fixed) / static_cast<double>(adjustable);
	for (GraphFlow *f : l->responders) {
		FlowParams &o = f->params;
		if (!verb_consumes_receive(o.verb) || window_given(o))
			continue;
		if (o.flow_window) {
			if (fit_flow_window(g, f, scale, dev.name + "'s SRQ and CQ limit of " + std::to_string(limit) + " receives", said, err) != 0)
				return -1;
			continue;
		}
		const uint32_t slots = std::max<uint32_t>(1, static_cast<uint32_t>(o.slots * scale));
		if (slots < o.batch && o.batch_given) {
			*err = at(*g->conf, f->conf->line, "batch") + "flow '" + f->conf->name + "': its window, fitted to " + dev.name +
			       "'s " + (ic.rq_per_qp ? "CQ" : "SRQ and CQ") + " limit of " + std::to_string(limit) + " receives, is " + std::to_string(slots) +
			       " messages per QP, below its batch of " + std::to_string(o.batch) + " (a smaller batch, or fewer QPs)";
			return -1;
		}
		*said += std::string(said->empty() ? "" : "; ") + "flow '" + f->conf->name + "': window " + std::to_string(slots) +
			 " messages per QP (default " + std::to_string(o.slots) + ")";
		o.slots = slots;
		if (o.batch > slots) {
			o.batch = slots;
			*said += ", batch " + std::to_string(slots);
			if (!o.signal_given)
				o.signal_every = slots;
		}
		o.srq_refill = std::max(o.batch, o.slots * o.qps / 8);
	}
	size_lcore(g, l);
	*said += std::string(" (") + (ic.rq_per_qp ? "receive queues " : "SRQ ") + std::to_string(l->srq) + " receives, " + dev.name +
		 " allows " + std::to_string(limit) + ")";
	if (l->srq > limit) {   // per-QP refills rounded up
		*err = who + ": its flows' receive windows, fitted, still need " + std::string(queue) + " of " + std::to_string(l->srq) +
		       " receives; " + dev.name + " allows " + std::to_string(limit) + ": smaller windows or fewer QPs on this lcore";
		return -1;
	}
	return fit_rq_depths(l, err);
}

/* Lcore l's send CQ: every WR its requesters' QPs may hold (a failed QP flushes them
 * all into it), unless that overflows the device's largest CQ: then each requester of
 * a flow gets a budget of outstanding WRs over all its QPs, its share of what the CQ
 * holds beside the fixed parts (ping-pongs, the responders' credit writes). */
int fit_send_cq(Graph *g, GraphLcore *l, std::string *said, std::string *err)
{
	const Device &dev = *l->dev;
	const IoContextConf &ic = *l->conf;
	const uint64_t max_cqe = static_cast<uint64_t>(dev.dev_attr.max_cqe);
	const std::string who = "lcore " + std::to_string(l->lcore) + "'s io context";
	if (ic.send_cq > max_cqe) {
		*err = at(*g->conf, ic.line, "io_contexts") + who + ": send_cq " + std::to_string(ic.send_cq) + " is above " + dev.name +
		       "'s max_cqe " + std::to_string(max_cqe);
		return -1;
	}
	for (auto *side : {&l->requesters, &l->pingers})
		for (GraphFlow *f : *side)
			if (f->params.sq_depth > static_cast<uint32_t>(dev.dev_attr.max_qp_wr)) {
				*err = at(*g->conf, f->conf->line, "sq_depth") + "flow '" + f->conf->name + "': a send queue of " +
				       std::to_string(f->params.sq_depth) + " WRs is above " + dev.name + "'s max_qp_wr " +
				       std::to_string(dev.dev_attr.max_qp_wr);
				return -1;
			}
	if (l->send_cq <= max_cqe)
		return 0;
	uint64_t want = 0;
	for (const GraphFlow *f : l->requesters)
		want += static_cast<uint64_t>(f->params.qps) * f->params.sq_depth;
	const uint64_t fixed = l->send_cq - want;
	const uint64_t room = max_cqe > fixed ? max_cqe - fixed : 0;
	for (GraphFlow *f : l->requesters) {
		FlowParams &o = f->params;
		const uint64_t mine = static_cast<uint64_t>(o.qps) * o.sq_depth;
		const uint32_t budget = static_cast<uint32_t>(room * mine / want);
		const uint32_t least = o.batch * Chunking::of(o.msg_bytes, o.chunk_bytes).count;
		if (budget < least) {
			*err = who + ": its flows' send queues need a send CQ of " + std::to_string(l->send_cq) + " entries, " + dev.name +
			       " allows " + std::to_string(max_cqe) + ", and flow '" + f->conf->name + "''s share (" +
			       std::to_string(budget) + " WRs) would not hold one chain of " + std::to_string(least) + " (fewer QPs or flows on this lcore)";
			return -1;
		}
		o.wr_budget = budget;
		*said += std::string(said->empty() ? "" : "; ") + "flow '" + f->conf->name + "': at most " + std::to_string(budget) +
			 " WRs outstanding over its " + std::to_string(o.qps) + " QPs (their send queues of " + std::to_string(o.sq_depth) +
			 " would need " + std::to_string(mine) + " CQ entries)";
	}
	size_lcore(g, l);
	*said += " (send CQ " + std::to_string(l->send_cq) + " entries, " + dev.name + " allows " + std::to_string(max_cqe) + ")";
	return 0;
}

} // namespace

/* A flow's lanes post on send CQs of their own (shared QPs: one for every lane; else
 * one per lane), each holding every WR of the QPs posting on it. A send queue left to
 * its default is cut to the device's max_qp_wr (one the file gave is the error); where
 * the CQ would pass max_cqe, each lane gets a budget of outstanding WRs instead (as
 * fit_send_cq gives a flow), unless that would not hold one chain. */
int fit_lanes(Graph *g, GraphFlow *f, std::string *said, std::string *err)
{
	FlowParams &o = f->params;
	const Device &dev = *f->tx->dev;
	const uint32_t nl = static_cast<uint32_t>(f->lanes.size());
	const uint32_t share = f->share_qps ? nl : 1;   // lanes posting to each QP
	const uint64_t max_wr = static_cast<uint64_t>(dev.dev_attr.max_qp_wr), max_cqe = static_cast<uint64_t>(dev.dev_attr.max_cqe);
	const std::string flow = "flows.[" + std::to_string(f->conf - g->conf->flows.data()) + "].";
	auto path = [&](const char *key) { return at(*g->conf, f->conf->line, flow + key); };
	const uint32_t need = std::max(2 * o.signal_every, o.batch);
	if (o.sq_depth > max_wr) {
		const uint32_t lane_depth = static_cast<uint32_t>(max_wr / share);
		if (f->conf->sq_depth_given || lane_depth < need) {
			*err = path("sq_depth") + "flow '" + f->conf->name + "': a send queue of " + std::to_string(o.sq_depth) + " WRs is above " +
			       dev.name + "'s max_qp_wr " + std::to_string(max_wr);
			return -1;
		}
		o.sq_depth = lane_depth * share;
		for (auto &ln : f->lanes)
			ln->params.sq_depth = f->share_qps ? lane_depth : o.sq_depth;
		*said += std::string(said->empty() ? "" : "; ") + "flow '" + f->conf->name + "': send queues of " + std::to_string(o.sq_depth) + " WRs";
	}
	const uint64_t cq_qps = f->share_qps ? o.qps : o.qps / nl;
	if (cq_qps * o.sq_depth <= max_cqe)
		return 0;
	const uint32_t budget = static_cast<uint32_t>(std::min<uint64_t>(max_cqe / share, UINT32_MAX));
	if (budget < o.batch) {
		*err = path("qps") + "flow '" + f->conf->name + "': its lanes' send CQ" + (f->share_qps ? "" : "s") + " would hold " +
		       std::to_string(cq_qps * o.sq_depth) + " WRs, " + dev.name + " allows " + std::to_string(max_cqe) +
		       ", and each lane's share (" + std::to_string(budget) + " WRs) would not hold one chain of " + std::to_string(o.batch) +
		       " (fewer QPs or lanes)";
		return -1;
	}
	for (auto &ln : f->lanes)
		ln->params.wr_budget = budget;
	*said += std::string(said->empty() ? "" : "; ") + "flow '" + f->conf->name + "': each lane at most " + std::to_string(budget) +
		 " WRs outstanding (its QPs' send queues of " + std::to_string(o.sq_depth) + " would need " + std::to_string(cq_qps * o.sq_depth) +
		 " CQ entries, " + dev.name + " allows " + std::to_string(max_cqe) + ")";
	return 0;
}

/* The receives a flow's windows take in its receiving lcore's SRQ: one per message,
 * or per chunk of a message cut into chunks. */
uint64_t flow_receives(const GraphFlow *f)
{
	return flow_inflight(f->params) * Chunking::of(f->params.msg_bytes, f->params.chunk_bytes).count;
}

/* Sizes: each lcore's io context and receive pool, each flow's send pool. Planned
 * without devices, sized again once the path MTU has set the chunks (fit_chunks). */
void size_graph(Graph *g)
{
	for (auto &l : g->lcores)
		if (l->conf && l->has_roles())
			size_lcore(g, l.get());
	for (auto &f : g->flows) {
		f->shape = role_shape(f->params);
		for (auto &s : g->stages)   // gens' buffers
			if (s->flow == f.get() && s->conf->kind->source == BufferSource::flow_pool)
				f->shape.tx_pool_n += static_cast<unsigned>(kind_ops(s->conf->kind).pool_need(g, *s));
	}
}

/* Reliable write_imm flows: the chunk size in force, from the path MTU of this host's
 * ends (a chunk and its retransmission header fit one packet), said in one line when
 * messages are cut. A window the file left to its default then counts chunks:
 * kDefaultWindow of them over the flow, at least a batch of messages per QP, so that
 * the receives it needs (one per chunk) fit the device as a window of messages does. */
int fit_chunks(Graph *g, std::string *err)
{
	bool resize = false;
	for (auto &fp : g->flows) {
		GraphFlow &f = *fp;
		FlowParams &o = f.params;
		if (!f.reliable() || !verb_info(o.verb).chunkable)
			continue;
		uint32_t mtu = UINT32_MAX;
		for (const GraphLcore *l : {f.tx, f.rx})
			if (l)
				mtu = std::min(mtu, 128u << l->dev->port_attr.active_mtu);
		const uint32_t fit = mtu - static_cast<uint32_t>(sizeof(RetxHeader));
		if (o.chunk != kChunkAuto && o.chunk > fit) {
			*err = at(*g->conf, f.conf->line, "chunk") + "flow '" + f.conf->name + "': chunk " + std::to_string(o.chunk) +
			       " B and its 12-byte retransmission header do not fit one packet of the path MTU (" + std::to_string(mtu) +
			       " B)";
			return -1;
		}
		o.chunk_bytes = o.chunk != kChunkAuto ? o.chunk : o.msg_bytes > fit ? fit : 0;
		const Chunking ck = Chunking::of(o.msg_bytes, o.chunk_bytes);
		if (ck.count == 1)
			continue;
		resize = true;
		if (!o.slots_given)
			o.slots = std::max(o.batch, kDefaultWindow / (o.qps * ck.count));
		if (static_cast<uint64_t>(o.slots) * ck.count > kMaxSlots) {   // sequences must stay far inside the immediate's 31 bits
			*err = at(*g->conf, f.conf->line, "window") + "flow '" + f.conf->name + "': a window of " + std::to_string(o.slots) +
			       " messages in " + std::to_string(ck.count) + " chunks each is more than " + std::to_string(kMaxSlots) +
			       " chunks per QP (a smaller window, or larger chunks)";
			return -1;
		}
		if (!o.quiet)
			RP_LOG(INFO, PIPELINE, "flow '%s': each %u B message goes as %u chunks of %u B (path MTU %u B), window %u messages per QP\n",
			       f.conf->name.c_str(), o.msg_bytes, ck.count, ck.bytes, mtu, o.slots);
	}
	if (resize)
		size_graph(g);
	return 0;
}

/* Sizes that fit each lcore's device (max_cqe, max_srq_wr, max_qp_wr) instead of a
 * refusal, said in one line per lcore; what the file set explicitly and cannot fit is
 * the error. Windows first: they size the flows' senders too. */
int fit_device(Graph *g, std::string *err)
{
	std::vector<std::string> said(g->lcores.size());
	for (size_t i = 0; i < g->lcores.size(); i++) {
		GraphLcore *l = g->lcores[i].get();
		if (l->conf && l->has_roles() && fit_windows(g, l, &said[i], err) != 0)
			return -1;
	}
	size_graph(g);
	for (size_t i = 0; i < g->lcores.size(); i++) {
		GraphLcore *l = g->lcores[i].get();
		if (l->conf && l->has_roles() && fit_send_cq(g, l, &said[i], err) != 0)
			return -1;
	}
	for (auto &f : g->flows)   // said with the lcore of its end here (lanes: lane 0's)
		if (f->form->fit) {
			const size_t i = static_cast<size_t>(std::find_if(g->lcores.begin(), g->lcores.end(), [&](const auto &l) { return l.get() == f->tx; }) -
							     g->lcores.begin());
			if (f->form->fit(g, f.get(), &said[i], err) != 0)
				return -1;
		}
	size_graph(g);
	for (size_t i = 0; i < g->lcores.size(); i++)
		if (!said[i].empty() && !(g->flows.size() && g->flows[0]->params.quiet))
			RP_LOG(INFO, PIPELINE, "rdmapipe: lcore %u fitted to %s: %s\n", g->lcores[i]->lcore, g->lcores[i]->dev->name.c_str(),
			       said[i].c_str());
	return 0;
}

} // namespace rp
