#include "pipeline/graph.h"
#include "conf/cli_pipeline.h"

#include "engine/verbs_ops.h"
#include "log/log.h"

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <time.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <thread>

namespace rp {

namespace {

std::string at(const PipelineConf &c, int line, const std::string &path)
{
	if (c.file == kCliPipeline)
		return "";   // the command line's pipeline: the message names the flow and its option
	return c.file + ":" + std::to_string(line) + ": " + path + ": ";
}

std::string stage_path(const Graph &g, const GraphStage &s)
{
	return at(*g.conf, s.conf->line, "stages.[" + std::to_string(s.conf - g.conf->stages.data()) + "]");
}

const IoContextConf *io_conf(const PipelineConf &c, unsigned lc)
{
	for (const IoContextConf &io : c.io_contexts)
		if (io.lcore == lc)
			return &io;
	return nullptr;
}

GraphLcore *lcore_of(Graph *g, unsigned lc)
{
	for (auto &l : g->lcores)
		if (l->lcore == lc)
			return l.get();
	g->lcores.push_back(std::make_unique<GraphLcore>());
	GraphLcore *l = g->lcores.back().get();
	l->lcore = lc;
	l->g = g;
	l->conf = io_conf(*g->conf, lc);
	return l;
}

GraphRing *ring_named(Graph *g, const std::string &name)
{
	for (auto &r : g->rings)
		if (r->conf->name == name)
			return r.get();
	return nullptr;
}

double thread_cpu_s()
{
	timespec t{};
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

const VerbsOps *cq_ops_for(CqApi api, const DeviceCaps &caps)
{
	if (api != CqApi::ex || !caps.cq_ex)
		return &kIbvOps;
	return caps.next_poll_ends_batch ? &kIbvCqExRxeOps : &kIbvCqExOps;
}

const GraphStage *tx_of(const Graph *g, const GraphFlow *f)
{
	for (const auto &s : g->stages)
		if (s->flow == f && s->conf->kind == StageKind::rdma_tx)
			return s.get();
	return nullptr;
}

/* The flows whose messages reach each stage's input, and how many: a gen makes its
 * share of its flow's messages, an rdma_rx passes on all of its flow's (UINT64_MAX: a
 * duration; a fed flow's: what its rdma_tx's ring brings), the others what their
 * producers pass on. The rings are acyclic
 * (find_cycle), so n passes reach every stage. */
void derive_origins(Graph *g, std::vector<uint64_t> *out_count)
{
	const size_t n = g->stages.size();
	out_count->assign(n, 0);
	std::map<const GraphStage *, size_t> index;
	for (size_t i = 0; i < n; i++)
		index[g->stages[i].get()] = i;
	for (size_t pass = 0; pass <= n; pass++)
		for (size_t i = 0; i < n; i++) {
			GraphStage &s = *g->stages[i];
			const StageKind k = s.conf->kind;
			if (k == StageKind::gen || k == StageKind::rdma_rx) {
				s.origins = {s.flow};
				(*out_count)[i] = k == StageKind::gen ? s.st.limit
						  : s.flow->fed ? (*out_count)[index[tx_of(g, s.flow)]]   // what its ring brings
						  : s.flow->o.duration_s > 0 ? UINT64_MAX : s.flow->o.messages;
				continue;
			}
			std::vector<GraphFlow *> o;
			uint64_t count = 0;
			for (const std::string &in : s.conf->inputs)
				for (GraphStage *p : ring_named(g, in)->producers) {
					for (GraphFlow *f : p->origins)
						if (std::find(o.begin(), o.end(), f) == o.end())
							o.push_back(f);
					const uint64_t c = (*out_count)[index[p]];
					count = c == UINT64_MAX || count == UINT64_MAX ? UINT64_MAX : count + c;
				}
			s.origins = o;
			(*out_count)[i] = count;
		}
}

/* A stage that its own output reaches again through rings would wait on itself for
 * ever: the first such stage, or nullptr. */
const GraphStage *find_cycle(Graph *g)
{
	std::map<const GraphStage *, int> state;   // 1: on the path, 2: done
	std::function<const GraphStage *(const GraphStage *)> visit = [&](const GraphStage *s) -> const GraphStage * {
		state[s] = 1;
		for (const std::string &out : s->conf->outputs)
			for (GraphStage *c : ring_named(g, out)->consumers) {
				if (state[c] == 1)
					return c;
				if (state[c] == 0)
					if (const GraphStage *x = visit(c))
						return x;
			}
		state[s] = 2;
		return nullptr;
	};
	for (auto &s : g->stages)
		if (state[s.get()] == 0)
			if (const GraphStage *x = visit(s.get()))
				return x;
	return nullptr;
}

/* Buffers that what follows stage s can hold at once: its rings, a burst held back by
 * each stage after it, the send queues of a flow it feeds. */
uint64_t downstream_hold(Graph *g, const GraphStage *s, std::set<const GraphStage *> *seen)
{
	if (!seen->insert(s).second)
		return 0;
	uint64_t n = 0;
	for (const std::string &out : s->conf->outputs) {
		GraphRing *r = ring_named(g, out);
		n += r->conf->size;
		for (GraphStage *c : r->consumers) {
			n += kStageBurst;
			if (c->conf->kind == StageKind::rdma_tx)
				n += static_cast<uint64_t>(c->flow->o.qps) * (c->flow->o.sq_depth + c->flow->o.batch);
			n += downstream_hold(g, c, seen);
		}
	}
	return n;
}

bool has_verify_downstream(Graph *g, const GraphStage *s, std::set<const GraphStage *> *seen)
{
	if (!seen->insert(s).second)
		return false;
	for (const std::string &out : s->conf->outputs)
		for (GraphStage *c : ring_named(g, out)->consumers)
			if (c->conf->kind == StageKind::verify || has_verify_downstream(g, c, seen))
				return true;
	return false;
}

/* The one source (a gen stage: its flow's send pool; an rdma_rx stage: its lcore's
 * receive pool) and message size of the buffers reaching s's input. */
int input_source(Graph *g, const GraphStage &s, const GraphStage **source, uint32_t *bytes, std::string *err)
{
	std::vector<const GraphStage *> sources;
	std::set<const GraphStage *> seen;
	std::vector<const GraphStage *> todo{&s};
	*bytes = 0;
	while (!todo.empty()) {
		const GraphStage *x = todo.back();
		todo.pop_back();
		if (!seen.insert(x).second)
			continue;
		for (const std::string &in : x->conf->inputs)
			for (GraphStage *p : ring_named(g, in)->producers) {
				if (p->conf->kind != StageKind::gen && p->conf->kind != StageKind::rdma_rx) {
					todo.push_back(p);
					continue;
				}
				uint32_t b = p->flow->o.msg_bytes;
				if (*bytes && b != *bytes) {
					*err = stage_path(*g, s) + "its input carries messages of " + std::to_string(*bytes) + " B and " +
					       std::to_string(b) + " B: a stage takes messages of one size";
					return -1;
				}
				*bytes = b;
				sources.push_back(p);
			}
	}
	if (sources.empty()) {
		*err = stage_path(*g, s) + "nothing makes its input's messages (no gen or rdma_rx stage before it)";
		return -1;
	}
	/* Buffers go back to the pool they came from: one pool per input. */
	auto same_pool = [](const GraphStage *a, const GraphStage *b) {
		return a->conf->kind == b->conf->kind &&
		       (a->conf->kind == StageKind::gen ? a->flow == b->flow : a->lcore == b->lcore);
	};
	for (const GraphStage *x : sources)
		if (!same_pool(x, sources[0])) {
			*err = stage_path(*g, s) + "its input carries buffers of two pools (stages '" + sources[0]->conf->name +
			       "' and '" + x->conf->name + "': gen stages of two flows, or flows received on two lcores): "
			       "give each its own ring";
			return -1;
		}
	*source = sources[0];
	return 0;
}

rte_mempool *source_pool(const GraphStage *src, const MrTable **mrs, Device **dev)
{
	if (src->conf->kind == StageKind::gen) {
		*mrs = &src->flow->objs->tx_mrs;
		*dev = src->flow->tx->dev;
		return src->flow->objs->tx_pool;
	}
	*mrs = &src->lcore->rx_mrs;
	*dev = src->lcore->dev;
	return src->lcore->rx_pool;
}

/* What each kind is made of: its ops and how it is wired from the file. */
struct KindSpec {
	StageKind kind;
	const StageOps *ops;
};
const KindSpec kKinds[] = {
	{StageKind::gen, &kSourceStage},     {StageKind::rdma_tx, &kRdmaTxStage}, {StageKind::rdma_rx, &kRdmaRxStage},
	{StageKind::verify, &kVerifyStage},  {StageKind::sink, &kSinkStage},      {StageKind::forward, &kForwardStage},
	{StageKind::echo, &kEchoStage},
};

const StageOps *ops_of(StageKind k)
{
	for (const KindSpec &s : kKinds)
		if (s.kind == k)
			return s.ops;
	return nullptr;
}

constexpr uint32_t kPingPongRefill = 16;

/* A flow with an echo stage is a ping-pong: one message in flight per QP, timed, for a
 * number of round trips (the flow's messages, else ib_send_lat's default). */
int plan_pingpong(const PipelineConf &c, GraphFlow *f, std::string *err)
{
	const FlowConf &fc = *f->conf;
	const std::string flow = "flows.[" + std::to_string(&fc - c.flows.data()) + "]";
	auto key = [&](const char *k) { return at(c, fc.line, flow + "." + k); };
	f->pingpong = true;
	if (fc.rate_pps > 0) {
		*err = key("rate") + "a ping-pong sends the next message when the echo of the last one is back: no rate applies";
		return -1;
	}
	if (f->o.duration_s > 0) {
		*err = (fc.duration_s > 0 ? key("duration") : at(c, fc.line, "run.duration")) +
		       "a ping-pong runs a number of round trips (messages), not a duration";
		return -1;
	}
	if (fc.messages == 0)
		f->o.messages = kDefaultPingPongIterations;
	if (f->o.messages < fc.qps) {
		*err = key("messages") + std::to_string(f->o.messages) + " round trips cannot keep " + std::to_string(fc.qps) +
		       " QPs busy (one at least on each)";
		return -1;
	}
	if (fc.sq_depth < 2 * fc.signal_every) {
		*err = key("sq_depth") + std::to_string(fc.sq_depth) + " must be at least 2 x signal_every (" +
		       std::to_string(fc.signal_every) + ")";
		return -1;
	}
	f->hist = std::make_unique<Histogram>();
	return 0;
}

/* A flow's lanes: one lcore each; their share of the messages (and of the rate); shared
 * QPs give each lane its share of every send queue, else each lane owns every T-th QP. */
int plan_lanes(const PipelineConf &c, GraphFlow *f, std::string *err)
{
	const FlowConf &fc = *f->conf;
	const std::string flow = "flows.[" + std::to_string(&fc - c.flows.data()) + "]";
	const uint32_t nl = static_cast<uint32_t>(f->lanes.size());
	for (uint32_t t = 0; t < nl; t++)
		for (uint32_t u = 0; u < t; u++)
			if (f->lanes[t]->lcore == f->lanes[u]->lcore) {
				*err = at(c, f->lanes[t]->stage->conf->line, "stages") + "two rdma_tx stages of flow '" + fc.name +
				       "' on lcore " + std::to_string(f->lanes[t]->lcore->lcore) + ": its lanes need an lcore each";
				return -1;
			}
	f->share_qps = fc.share_qps;
	if (!f->share_qps && fc.qps % nl != 0) {
		*err = at(c, fc.line, flow + ".qps") + std::to_string(fc.qps) + " QPs do not split evenly over " + std::to_string(nl) +
		       " lanes (or set share_qps = true)";
		return -1;
	}
	const uint32_t need = std::max(2 * fc.signal_every, fc.batch);
	if (f->share_qps && fc.sq_depth / nl < need) {
		*err = at(c, fc.line, flow + ".sq_depth") + "each of the " + std::to_string(nl) + " lanes gets sq_depth / " +
		       std::to_string(nl) + " = " + std::to_string(fc.sq_depth / nl) +
		       " of every shared send queue, below max(batch, 2 x signal_every) = " + std::to_string(need);
		return -1;
	}
	for (uint32_t t = 0; t < nl; t++) {
		RunOptions &o = f->lanes[t]->o;
		o = f->o;
		if (f->o.messages)
			o.messages = f->o.messages / nl + (t < f->o.messages % nl);
		o.rate_pps = f->o.rate_pps / nl;
		if (f->share_qps) {
			o.sq_depth = fc.sq_depth / nl;   // its share of every QP's send queue
		} else {
			o.qps = fc.qps / nl;
			o.flows = {o.qps};
		}
		if (t > 0) {   // the test hooks act on lane 0's QP 0
			o.corrupt_msg = UINT64_MAX;
			o.bad_rkey_qp = -1;
		}
	}
	return 0;
}

/* A flow's window shared by its QPs (RunOptions::flow_window): given, it must be one
 * the flow can keep; left out, it is kDefaultWindow where the flow's default per-QP
 * windows would add up to more (at 33 QPs and up), so that its receiver's SRQ holds
 * the same whatever the QP count. Sends then have no per-QP window but the flow's. */
int plan_flow_window(const PipelineConf &c, GraphFlow *f, std::string *err)
{
	RunOptions &o = f->o;
	const FlowConf &fc = *f->conf;
	const char *why = !verb_consumes_receive(o.verb) ? "its verb consumes no receive at the far end: there is no window to share"
			  : f->pingpong	       ? "a ping-pong keeps one message in flight per QP"
			  : f->reliable()      ? "UC made reliable in software returns credit per QP, in its ACKs"
			  : f->rx && f->rx->conf && f->rx->conf->rq_per_qp
				? "its receiving lcore gives each QP a receive queue of its own (recv_queue = \"qp\"), which must hold that QP's window"
				: nullptr;
	const std::string path = at(c, fc.line, "flows.[" + std::to_string(&fc - c.flows.data()) + "].flow_window") + "flow '" + fc.name + "': ";
	if (o.flow_window_given && o.flow_window) {
		if (why) {
			*err = path + why + " (leave flow_window out, or 0)";
			return -1;
		}
		if (o.slots_given && o.verb != Verb::write_imm) {
			*err = path + "a " + verb_name(o.verb) + " flow with a flow window has no window per QP (its receives are all in the "
				"SRQ, shared): give window or flow_window, not both";
			return -1;
		}
	}
	/* A client cannot see its server's receive queues: per-QP ones on its own lcore
	 * (as the command line sets both ends) say the server has them too. */
	const bool client_rq = f->remote && !f->rx && f->tx && f->tx->conf && f->tx->conf->rq_per_qp;
	if (!o.flow_window_given)
		o.flow_window = default_flow_window(why == nullptr && !client_rq, o.slots_given, o.qps, o.slots);
	if (o.flow_window == 0)
		return 0;
	if (o.verb != Verb::write_imm)
		o.slots = o.flow_window;   // a QP may take all of the flow's window: its SRQ receives are the flow's
	o.srq_refill = static_cast<uint32_t>(std::max<uint64_t>(o.batch, flow_inflight(o) / 8));
	return 0;
}

/* The receives a flow's windows take in its receiving lcore's SRQ: one per message,
 * or per chunk of a message cut into chunks. */
uint64_t flow_receives(const GraphFlow *f)
{
	return flow_inflight(f->o) * Chunking::of(f->o.msg_bytes, f->o.chunk_bytes).count;
}

/* Per-QP receive queues (recv_queue = "qp"): each QP keeps its window of receives (a
 * ping-pong's one message) and a refill of an eighth of it, at least one, as the SRQ
 * keeps its flows' windows and an eighth. Returns the receives over the flow's QPs. */
uint64_t size_rq(GraphFlow *f, bool pingpong)
{
	RunOptions &o = f->o;
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
		l->send_cq += f->o.wr_budget ? f->o.wr_budget : static_cast<uint64_t>(f->o.qps) * f->o.sq_depth;
	/* Ping-pong: both sides send and receive, one message in flight per QP; receives
	 * are reposted in batches of kPingPongRefill. */
	uint64_t echo_held = 0;   // echoes wait in their send queues in receive buffers
	uint64_t per_qp = 0;      // receives in the QPs' own queues (recv_queue = "qp")
	for (auto *side : {&l->pingers, &l->echoers})
		for (GraphFlow *f : *side) {
			l->send_cq += static_cast<uint64_t>(f->o.qps) * f->o.sq_depth;
			window += f->o.qps;
			per_qp += ic.rq_per_qp ? size_rq(f, true) : 0;
			batch = std::max(batch, kPingPongRefill);
			l->rx_bytes = std::max(l->rx_bytes, f->o.msg_bytes);
			if (side == &l->echoers)
				echo_held += static_cast<uint64_t>(f->o.qps) * f->o.sq_depth + kRxPollBurst;
		}
	for (GraphFlow *f : l->responders) {
		batch = std::max(batch, f->o.batch);
		if (!verb_consumes_receive(f->o.verb))
			continue;
		l->send_cq += static_cast<uint64_t>(f->o.qps) * kCreditRing;
		window += flow_receives(f);
		per_qp += ic.rq_per_qp ? size_rq(f, false) : 0;
		if (f->o.verb != Verb::write_imm)
			l->rx_bytes = std::max(l->rx_bytes, f->o.msg_bytes);
		else if (f->reliable())   // a retransmitted write arrives as a SEND: header and chunk
			l->rx_bytes = std::max<uint32_t>(l->rx_bytes, Chunking::of(f->o.msg_bytes, f->o.chunk_bytes).bytes + sizeof(RetxHeader));
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
	for (auto &s : g->stages)
		if (s->lcore == l && s->conf->kind == StageKind::rdma_rx && s->flow->handed_on) {
			std::set<const GraphStage *> seen;
			n += flow_inflight(s->flow->o) + kRxPollBurst + downstream_hold(g, s.get(), &seen);
		}
	l->rx_pool_n = static_cast<uint32_t>(std::min<uint64_t>(n, UINT32_MAX));
}

void size_graph(Graph *g);

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
		RunOptions &o = f.o;
		if (!f.reliable() || o.verb != Verb::write_imm)
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

/* Sizes: each lcore's io context and receive pool, each flow's send pool. Planned
 * without devices, sized again once the path MTU has set the chunks (fit_chunks). */
void size_graph(Graph *g)
{
	for (auto &l : g->lcores)
		if (l->conf && l->has_roles())
			size_lcore(g, l.get());
	for (auto &f : g->flows) {
		f->shape = role_shape(f->o);
		for (auto &s : g->stages)
			if (s->flow == f.get() && s->conf->kind == StageKind::gen) {
				std::set<const GraphStage *> seen;
				f->shape.tx_pool_n += static_cast<unsigned>(kStageBurst + downstream_hold(g, s.get(), &seen));
			}
	}
}

/* Whether the window that bounds a flow's receives was set by the file: the flow's
 * where its QPs share one, else each QP's. */
bool window_given(const RunOptions &o)
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
			*fixed += f->o.qps;
	for (const GraphFlow *f : l->responders)
		if (verb_consumes_receive(f->o.verb))
			*(window_given(f->o) ? fixed : adjustable) += flow_receives(f);
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
			if (f->o.rq_depth > max_wr) {
				*err = "flow '" + f->conf->name + "': a receive queue of " + std::to_string(f->o.rq_depth) + " per QP (its window and a refill) is above " +
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
	RunOptions &o = f->o;
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
		RunOptions &o = f->o;
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
			if (f->o.sq_depth > static_cast<uint32_t>(dev.dev_attr.max_qp_wr)) {
				*err = at(*g->conf, f->conf->line, "sq_depth") + "flow '" + f->conf->name + "': a send queue of " +
				       std::to_string(f->o.sq_depth) + " WRs is above " + dev.name + "'s max_qp_wr " +
				       std::to_string(dev.dev_attr.max_qp_wr);
				return -1;
			}
	if (l->send_cq <= max_cqe)
		return 0;
	uint64_t want = 0;
	for (const GraphFlow *f : l->requesters)
		want += static_cast<uint64_t>(f->o.qps) * f->o.sq_depth;
	const uint64_t fixed = l->send_cq - want;
	const uint64_t room = max_cqe > fixed ? max_cqe - fixed : 0;
	for (GraphFlow *f : l->requesters) {
		RunOptions &o = f->o;
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
	size_graph(g);
	for (size_t i = 0; i < g->lcores.size(); i++)
		if (!said[i].empty() && !(g->flows.size() && g->flows[0]->o.quiet))
			RP_LOG(INFO, PIPELINE, "rdmapipe: lcore %u fitted to %s: %s\n", g->lcores[i]->lcore, g->lcores[i]->dev->name.c_str(),
			       said[i].c_str());
	return 0;
}

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
				nqps += f->o.rq_depth ? f->o.qps : 0;
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

/* recv_queue = "qp": flow f's receiving QPs on lcore l (a responder's, either side of a
 * ping-pong) get their receives as soon as the flow is set up, not after every flow: a
 * server's client may send while this host still accepts the clients of its other
 * flows. Accept threads of flows on one lcore share its refill: hence the lock (setup
 * only). A starved lcore (--inject-rnr) posts nothing. */
int fill_flow_rqs(GraphLcore *l, GraphFlow &f, std::string *err)
{
	if (l == nullptr || !l->refill.per_qp() || !f.lanes.empty())
		return 0;
	std::lock_guard<std::mutex> lock(l->rq_mu);
	auto add = [&](auto &qps, uint32_t n) {
		for (uint32_t i = 0; i < n; i++)
			if (int ret = l->refill.add_qp(qps[i].qp, f.o.rq_depth, f.o.rq_refill); ret != 0) {
				*err = "flow '" + f.conf->name + "': QP " + std::to_string(qps[i].qp->qp_num) + "'s receive queue: " + strerror(-ret);
				return false;
			}
		return true;
	};
	if (l == f.tx && f.pingpong && !add(f.ping.qps, f.ping.nqps))
		return -1;
	if (l == f.rx && f.pingpong && !add(f.pong.qps, f.pong.nqps))
		return -1;
	if (l == f.rx && !f.pingpong && verb_consumes_receive(f.o.verb) && !add(f.v.qps, f.v.nqps))
		return -1;
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
		l->send_router.add(requester_on_send_wc, &f->q, qp_nums(f->q.qps, f->q.nqps));
	for (GraphFlow *f : l->responders) {
		l->send_router.add(responder_on_send_wc, &f->v, qp_nums(f->v.qps, f->v.nqps));
		l->recv_router.add(responder_on_recv_wc, &f->v, qp_nums(f->v.qps, f->v.nqps));
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
		f->q.send_peer = l->send_router.peer();
	for (GraphFlow *f : l->responders) {
		f->v.send_peer = l->send_router.peer();
		f->v.recv_peer = l->recv_router.peer();
	}
	return 0;
}

/* A reliable ping-pong times out as a reliable rate flow does, over the same wire verb. */
void pingpong_reliable(PingPongParams *p, const RequesterParams &r)
{
	p->reliable = true;
	p->verb = r.verb;
	p->rto_min_tsc = r.rto_min_tsc;
	p->rto_max_tsc = r.rto_max_tsc;
	p->rto_initial_tsc = r.rto_initial_tsc;
}

/* A ping-pong flow's objects (its ping buffers, its QP pairs) and its two roles on
 * its lcores' io contexts; their receive pools are set once the SRQs are filled. */
int pingpong_setup(GraphFlow &f, std::string *err)
{
	const RunOptions &o = f.o;
	LoopbackFlow &obj = *f.objs;
	const std::string name = "rp_" + f.conf->name + "_ping_pool", what = "flow '" + f.conf->name + "': ping buffer pool";
	if (f.tx && (obj.tx_pool = make_registered_pool(name.c_str(), what.c_str(), f.shape.tx_pool_n, o, *f.tx->dev, 0,
							&obj.tx_mrs, err)) == nullptr)
		return -1;
	/* Latency wants inline sends wherever they fit, as ib_send_lat does (the far end of
	 * a two-host flow inlines as its own device allows). */
	const bool inl = o.inline_send || ((!f.tx || o.msg_bytes <= f.tx->caps->max_inline) &&
					   (!f.rx || o.msg_bytes <= f.rx->caps->max_inline));
	QpOptions qo{o.sq_depth, inl ? o.msg_bytes : 0, false, o.rnr_retry, o.min_rnr_timer, o.uc, o.retry_cnt, std::max<uint32_t>(1, o.rq_depth)};
	int rc = f.serves() ? remote_accept(o, *f.rx->dev, f.rx->io, qo, f.remote.get(), &obj, {}, err)
		 : f.remote ? remote_connect(o, *f.tx->dev, f.tx->io, qo, 0, 0, f.remote.get(), &obj, err)
		 : qp_pairs_connect(o, o.qps, *f.tx->dev, *f.rx->dev, f.tx->io, f.rx->io, qo, qo, 0, 0, &obj.pairs, err);
	if (rc != 0)
		return -1;
	const uint64_t hz = rte_get_tsc_hz();
	for (PingPong *pp : {&f.ping, &f.pong}) {
		const bool echo = pp == &f.pong;
		if (!(echo ? f.rx : f.tx))
			continue;   // on the other host
		GraphLcore &l = echo ? *f.rx : *f.tx;
		pp->echo = echo;
		pp->ops = l.ops;
		pp->send_cq = l.io.send_cq;
		pp->recv_cq = l.io.recv_cq;
		pp->srq = l.io.srq;
		pp->refill = &l.refill;
		pp->tx_pool = echo ? nullptr : obj.tx_pool;
		pp->tx_mrs = echo ? &l.rx_mrs : &obj.tx_mrs;   // the echo goes back from its receive buffer
		pp->ctl = &f.ctl;
		pp->p = PingPongParams{o.verb, o.msg_bytes, o.messages, o.sq_depth, o.signal_every, inl, o.verify,
				       static_cast<uint64_t>(o.stall_timeout_s * static_cast<double>(hz)), hz,
				       echo ? UINT64_MAX : o.corrupt_msg};
		if (f.reliable())
			pingpong_reliable(&pp->p, requester_params(o, false, hz));
		pp->qps = std::make_unique<PingPongQp[]>(o.qps);
		pp->nqps = o.qps;
		for (uint32_t i = 0; i < o.qps; i++)
			pp->qps[i].qp = echo ? obj.pairs.b[i] : obj.pairs.a[i];
		pp->hist = f.hist.get();
		if (pingpong_init(pp, err) != 0)
			return -1;
	}
	return 0;
}

/* A flow's lanes (seed 002): their QPs to a passive far end (READs need no CPU there),
 * on send CQs of their own: one polled by all lanes when they share the QPs (each
 * hands the others' completions over through their rings), else one per lane. */
int lanes_setup(GraphFlow &f, std::string *err)
{
	const uint64_t hz = rte_get_tsc_hz();
	const bool use_wr = f.o.post_api == PostApi::wr;
	const uint32_t nl = static_cast<uint32_t>(f.lanes.size());
	if (!f.share_qps) {
		for (uint32_t t = 0; t < nl; t++) {
			GraphLane &ln = *f.lanes[t];
			Device &dev = *ln.lcore->dev;
			ln.objs = std::make_unique<LoopbackFlow>();
			ln.objs->shape = role_shape(ln.o);
			const std::string tag = f.conf->name + "_lane" + std::to_string(t);
			if (shared_io_context_create(dev, static_cast<uint32_t>(ln.objs->shape.req_send_cq), 1, 0, false,
						     ln.lcore->ops != &kIbvOps, &ln.io, err) != 0)
				return -1;
			ln.has_io = true;
			if (shared_io_context_create(dev, 1, 1, 0, false, false, &ln.passive_io, err) != 0)
				return -1;
			ln.has_passive_io = true;
			if (loopback_flow_setup(ln.o, tag.c_str(), dev, dev, ln.lcore->ops, use_wr, ln.io, ln.passive_io, &f.ctl,
						ln.objs.get(), &ln.q, &ln.passive, err) != 0)
				return -1;
			ln.q.idler.channel = nullptr;   // the lcore idles
		}
		return 0;
	}
	/* Shared: the flow's QPs once (a template requester on them), then a requester per
	 * lane on all of them, with its share of every send queue. */
	Device &dev = *f.tx->dev;
	for (auto &ln : f.lanes)
		if (ln->lcore->dev != &dev) {
			*err = "lanes sharing QPs post to one device's QPs: lcore " + std::to_string(ln->lcore->lcore) + " is on " +
			       ln->lcore->dev->name + ", lcore " + std::to_string(f.tx->lcore) + " on " + dev.name;
			return -1;
		}
	if (shared_io_context_create(dev, static_cast<uint32_t>(f.shape.req_send_cq), 1, 0, false, f.tx->ops != &kIbvOps,
				     &f.lane_io, err) != 0)
		return -1;
	f.has_lane_io = true;
	if (shared_io_context_create(dev, 1, 1, 0, false, false, &f.passive_io, err) != 0)
		return -1;
	f.has_passive_io = true;
	f.objs->shape = f.shape;
	if (loopback_flow_setup(f.o, f.conf->name.c_str(), dev, dev, f.tx->ops, use_wr, f.lane_io, f.passive_io, &f.ctl,
				f.objs.get(), &f.q, &f.v, err) != 0)
		return -1;
	const unsigned ring_size = rte_align32pow2(f.o.qps * f.o.sq_depth + 1);
	for (uint32_t t = 0; t < nl; t++) {
		std::string name = ("rp_" + f.conf->name + "_lane" + std::to_string(t)).substr(0, RTE_RING_NAMESIZE - 1);
		rte_ring *ring = rte_ring_create(name.c_str(), ring_size, static_cast<int>(rte_socket_id()), RING_F_SC_DEQ);
		if (ring == nullptr) {
			*err = "ring " + name + " (" + std::to_string(ring_size) + "): rte_ring_create: " + rte_strerror(rte_errno);
			return -1;
		}
		f.lane_rings.push_back(ring);
	}
	for (uint32_t t = 0; t < nl; t++) {
		Requester &q = f.lanes[t]->q;
		q.ops = f.tx->ops;
		q.send_cq = f.lane_io.send_cq;
		q.pool = f.q.pool;
		q.mrs = f.q.mrs;
		q.ctl = &f.ctl;
		q.p = requester_params(f.lanes[t]->o, use_wr, hz);
		if (requester_init(&q, f.o.qps, err) != 0)
			return -1;
		for (uint32_t i = 0; i < f.o.qps; i++) {
			q.qps[i].qp = f.q.qps[i].qp;
			q.qps[i].qpx = f.q.qps[i].qpx;
			q.qps[i].remote = f.q.qps[i].remote;
		}
		if (requester_add_qps(&q, err) != 0 || requester_set_lane(&q, t, f.lane_rings.data(), nl, err) != 0)
			return -1;
	}
	return 0;
}

} // namespace

RunOptions flow_run_options(const PipelineConf &c, const FlowConf &f, const RunOptions &cli)
{
	RunOptions r = cli;   // hooks, post API, fence, RNR, connect path, quiet, results files
	r.output_json = !cli.output_json.empty() ? cli.output_json : c.run.json;
	r.output_csv = !cli.output_csv.empty() ? cli.output_csv : c.run.csv;
	r.flow_names = {f.name};
	r.verb = f.verb;
	r.qps = f.qps;
	r.flows = {f.qps};
	r.msg_bytes = f.sizes[0];
	r.batch = f.batch;
	r.signal_every = f.signal_every;
	r.sq_depth = f.sq_depth;
	r.slots = f.window;
	r.srq_refill = std::max(f.batch, f.window * f.qps / 8);
	r.inline_send = f.inline_send;
	r.verify = f.verify;
	r.uc = f.transport == Transport::uc;
	r.reliability = r.uc ? f.reliability : Reliability::none;
	r.ack_every = f.ack_every;
	r.ack_us = f.ack_us;
	r.chunk = f.chunk;
	r.slots_given = f.window_given;
	r.flow_window = f.flow_window;
	r.flow_window_given = f.flow_window_given;
	r.batch_given = f.batch_given;
	r.signal_given = f.signal_given;
	r.inject_loss = cli.inject_loss > 0 ? cli.inject_loss : f.inject_loss;
	r.post_api = f.post_api;
	r.fence = f.fence;
	r.rnr_retry = f.rnr_retry;
	r.retry_cnt = f.retry_cnt;
	r.min_rnr_timer = f.min_rnr_timer;
	r.connect = c.run.connect;
	r.rate_pps = f.rate_pps;
	r.messages = 0;
	r.duration_s = 0;
	if (f.messages)
		r.messages = f.messages;
	else if (f.duration_s > 0)
		r.duration_s = f.duration_s;
	else if (c.run.duration_s > 0)
		r.duration_s = c.run.duration_s;
	else
		r.messages = kDefaultMessages;
	for (const PoolConf &pool : c.pools)
		if (pool.name == f.pool) {
			r.pool_count = pool.count;
			r.pool_cache = pool.cache;
		}
	r.warmup_s = c.run.warmup_s;
	r.stats_period_s = cli.stats_period_s > 0 ? cli.stats_period_s : c.run.stats_period_s;
	r.tx_gen_stage = false;
	return r;
}

std::string graph_step_name(const PipelineConf &c, const PipelineConf &step)
{
	std::string n;
	for (size_t i = 0; i < c.flows.size(); i++)
		if (c.flows[i].sizes.size() > 1)
			n += (n.empty() ? "" : "+") + std::to_string(step.flows[i].sizes[0]) + "B";
	return n;
}

int graph_sweep(const PipelineConf &c, std::vector<PipelineConf> *steps, std::string *err)
{
	size_t n = 1;
	const FlowConf *first = nullptr;
	for (const FlowConf &f : c.flows) {
		if (f.sizes.size() <= 1)
			continue;
		if (first && f.sizes.size() != n) {
			*err = at(c, f.line, "flows.[" + std::to_string(&f - c.flows.data()) + "].sizes") + std::to_string(f.sizes.size()) +
			       " sizes, flow '" + first->name + "' has " + std::to_string(n) +
			       ": the flows' size lists are swept in step (give lists of one length, or one size)";
			return -1;
		}
		n = f.sizes.size();
		first = &f;
	}
	steps->assign(n, c);
	for (size_t k = 0; k < n; k++)
		for (FlowConf &f : (*steps)[k].flows)
			if (f.sizes.size() > 1)
				f.sizes = {f.sizes[k]};
	return 0;
}

GraphLane::~GraphLane()
{
	objs.reset();   // its QPs before their CQs
	if (has_io)
		shared_io_context_destroy(&io);
	if (has_passive_io)
		shared_io_context_destroy(&passive_io);
}

GraphFlow::~GraphFlow()
{
	objs.reset();   // its QPs before the MRs they may use and the CQs they post to
	ctrl_dest_destroy(&ack_dest);
	ctrl_dest_destroy(&request_dest);
	if (hdr_mr)
		ibv_dereg_mr(hdr_mr);
	lanes.clear();
	if (has_lane_io)
		shared_io_context_destroy(&lane_io);
	if (has_passive_io)
		shared_io_context_destroy(&passive_io);
	for (rte_ring *r : lane_rings)
		rte_ring_free(r);
	mr_table_release(&fed_mrs);
}

namespace {

/* --inject-pool-squeeze N: the first flow's send pool keeps N buffers; the rest are
 * taken out before launch (and given back at teardown), so it runs dry under load. */
int squeeze_pool(Graph *g, uint32_t left, std::string *err)
{
	rte_mempool *mp = g->flows.empty() ? nullptr : g->flows[0]->objs->tx_pool;
	const std::string what = "--inject-pool-squeeze " + std::to_string(left);
	if (mp == nullptr) {
		*err = what + ": flow '" + g->conf->flows[0].name + "' has no send pool of its own";
		return -1;
	}
	const unsigned avail = rte_mempool_avail_count(mp);
	if (left >= avail) {
		*err = what + ": flow '" + g->conf->flows[0].name + "': its send pool has only " + std::to_string(avail) + " buffers";
		return -1;
	}
	/* Past this lcore's cache: buffers left there would be out of the lcores' reach. */
	g->squeezed.resize(avail - left);
	if (rte_mempool_generic_get(mp, g->squeezed.data(), static_cast<unsigned>(g->squeezed.size()), nullptr) != 0) {
		g->squeezed.clear();
		*err = what + ": could not take the buffers out";
		return -1;
	}
	g->squeezed_from = mp;
	return 0;
}

} // namespace

Graph::~Graph()
{
	if (squeezed_from)
		rte_mempool_generic_put(squeezed_from, squeezed.data(), static_cast<unsigned>(squeezed.size()), nullptr);
	remote_watch_finish(&watch, 0);   // a build that failed after starting it, or a caller that did not finish it
	for (auto &r : rings)
		rte_ring_free(r->ring);
	flows.clear();   // QPs first: no WR of theirs may outlive the CQs, SRQs and MRs
	for (auto &l : lcores) {
		if (l->has_ctrl)
			ctrl_qp_destroy(&l->ctrl);
		if (l->has_io)
			shared_io_context_destroy(&l->io);
		mr_table_release(&l->rx_mrs);
		rte_mempool_free(l->rx_pool);
	}
}

int graph_plan(const PipelineConf &c, const RunOptions &cli, Graph *g, std::string *err)
{
	g->conf = &c;

	/* Flows. */
	for (size_t i = 0; i < c.flows.size(); i++) {
		const FlowConf &fc = c.flows[i];
		const std::string path = at(c, fc.line, "flows.[" + std::to_string(i) + "]");
		if (fc.sizes.size() != 1) {   // graph_sweep makes one pipeline per size
			*err = path + "sizes: one step of a size sweep is planned at a time (graph_sweep)";
			return -1;
		}
		g->flows.push_back(std::make_unique<GraphFlow>());
		GraphFlow &f = *g->flows.back();
		f.conf = &fc;
		f.o = flow_run_options(c, fc, cli);
		f.ctl.run = &g->run;
		if (cli.bad_rkey_qp >= static_cast<int>(fc.qps) && i == 0) {
			*err = "--inject-bad-rkey " + std::to_string(cli.bad_rkey_qp) + ": flow '" + fc.name + "' has only " +
			       std::to_string(fc.qps) + " QP(s)";
			return -1;
		}
		if (fc.peer != "loopback") {   // two hosts: this host's end
			f.remote = std::make_unique<RemoteEnd>();
			if (remote_end_init(c, fc, f.remote.get(), err) != 0)
				return -1;
		}
		/* Test hooks act on the first flow only. */
		if (i > 0) {
			f.o.corrupt_msg = UINT64_MAX;
			f.o.bad_rkey_qp = -1;
		}
	}
	auto flow_named = [&](const std::string &n) -> GraphFlow * {
		for (auto &f : g->flows)
			if (f->conf->name == n)
				return f.get();
		return nullptr;
	};

	for (const StageConf &sc : c.stages)
		if (sc.kind == StageKind::echo)
			if (GraphFlow *f = flow_named(sc.flow); f && plan_pingpong(c, f, err) != 0)
				return -1;
	for (auto &f : g->flows)   // the client of a ping-pong whose echo is on another host
		if (f->conf->echoed && plan_pingpong(c, f.get(), err) != 0)
			return -1;
	std::map<GraphFlow *, unsigned> ntx;   // several rdma_tx stages: lanes
	for (const StageConf &sc : c.stages)
		if (sc.kind == StageKind::rdma_tx)
			ntx[flow_named(sc.flow)]++;

	/* Stages onto lcores, rings between them. */
	for (const RingConf &rc : c.rings) {
		g->rings.push_back(std::make_unique<GraphRing>());
		g->rings.back()->conf = &rc;
	}
	for (const StageConf &sc : c.stages) {
		g->stages.push_back(std::make_unique<GraphStage>());
		GraphStage &s = *g->stages.back();
		s.conf = &sc;
		s.lcore = lcore_of(g, sc.lcore);
		s.flow = sc.flow.empty() ? nullptr : flow_named(sc.flow);
		const StageOps *ops = sc.kind == StageKind::rdma_tx && s.flow->pingpong ? &kPingStage : ops_of(sc.kind);
		if (ops == nullptr) {
			*err = stage_path(*g, s) + "no stage kind " + stage_kind_name(sc.kind);
			return -1;
		}
		stage_init(&s.st, ops, sc.name.c_str());
		for (const std::string &o : sc.outputs)
			ring_named(g, o)->producers.push_back(&s);
		for (const std::string &in : sc.inputs)
			ring_named(g, in)->consumers.push_back(&s);
		if (sc.kind == StageKind::rdma_tx && ntx[s.flow] > 1) {
			s.flow->lanes.push_back(std::make_unique<GraphLane>());
			GraphLane &lane = *s.flow->lanes.back();
			lane.stage = &s;
			lane.lcore = s.lcore;
			s.lcore->lanes.push_back(&lane);
			if (s.flow->lanes.size() == 1) {   // lane 0's lcore stands for the flow
				s.flow->tx_stage = &s.st;
				s.flow->tx = s.flow->rx = s.lcore;
			}
		} else if (sc.kind == StageKind::rdma_tx) {
			s.flow->tx_stage = &s.st;
			s.flow->tx = s.lcore;
			s.flow->fed = !sc.inputs.empty();
			(s.flow->pingpong ? s.lcore->pingers : s.lcore->requesters).push_back(s.flow);
			if (s.flow->pingpong && s.flow->fed) {
				*err = stage_path(*g, s) + "flow '" + s.flow->conf->name + "' is a ping-pong (it has an echo stage): its "
							   "rdma_tx makes its own pings, it takes no input ring";
				return -1;
			}
		} else if (sc.kind == StageKind::echo) {
			s.flow->rx_stage = &s.st;
			s.flow->rx = s.lcore;
			s.lcore->echoers.push_back(s.flow);
		} else if (sc.kind == StageKind::rdma_rx) {
			s.flow->rx_stage = &s.st;
			s.flow->rx = s.lcore;
			s.flow->handed_on = !sc.outputs.empty();
			s.lcore->responders.push_back(s.flow);
		}
	}

	/* gen stages: a flow's messages split between its gens, and its rate; a flow with
	 * one keeps no rate of its own. */
	for (auto &f : g->flows) {
		std::vector<GraphStage *> gens;
		for (auto &s : g->stages)
			if (s->flow == f.get() && s->conf->kind == StageKind::gen)
				gens.push_back(s.get());
		for (size_t k = 0; k < gens.size(); k++) {
			if (f->o.duration_s > 0 || f->o.msg_bytes < 8) {
				*err = stage_path(*g, *gens[k]) + (f->o.msg_bytes < 8 ? "a gen stage writes each message's key into its first 8 bytes: flow '" +
					f->conf->name + "' sends " + std::to_string(f->o.msg_bytes) + " B"
					: "a gen stage makes a count of messages: give flow '" + f->conf->name + "' messages, not a duration");
				return -1;
			}
			if (f->o.verb == Verb::read || verb_is_atomic(f->o.verb)) {
				*err = stage_path(*g, *gens[k]) + "a gen stage makes payloads to send: flow '" + f->conf->name +
				       "' uses " + verb_name(f->o.verb) + ", which carries none";
				return -1;
			}
			Stage &st = gens[k]->st;
			st.limit = f->o.messages / gens.size() + (k < f->o.messages % gens.size());
			st.msg_bytes = f->o.msg_bytes;
		}
		f->has_gen = !gens.empty();
		/* The gens keep the flow's rate when they feed its rdma_tx; else the requester does. */
		if (!gens.empty() && f->fed)
			f->o.tx_gen_stage = true;
	}
	for (auto &f : g->flows)
		if (!f->lanes.empty() && plan_lanes(c, f.get(), err) != 0)
			return -1;
	if (const GraphStage *x = find_cycle(g)) {
		*err = stage_path(*g, *x) + "stage '" + x->conf->name + "' is reached again by its own output through rings: "
					    "the stages of such a cycle would wait on each other for ever";
		return -1;
	}
	std::vector<uint64_t> out_count;
	derive_origins(g, &out_count);

	/* What flows through rings must fit the roles at either end. */
	for (size_t i = 0; i < g->stages.size(); i++) {
		GraphStage &s = *g->stages[i];
		const StageKind k = s.conf->kind;
		if (k == StageKind::rdma_rx && s.flow->handed_on &&
		    !(s.flow->o.verb == Verb::send || s.flow->o.verb == Verb::send_imm)) {
			*err = stage_path(*g, s) + "an rdma_rx stage hands received buffers on: flow '" + s.flow->conf->name +
			       "' uses " + verb_name(s.flow->o.verb) + ", which fills no receive buffer (use send or send_imm)";
			return -1;
		}
		if (k == StageKind::rdma_rx && s.flow->handed_on && s.flow->o.msg_bytes < 8) {
			*err = stage_path(*g, s) + "received messages handed on carry their key in their first 8 bytes: flow '" +
			       s.flow->conf->name + "' sends " + std::to_string(s.flow->o.msg_bytes) + " B";
			return -1;
		}
		if (k == StageKind::rdma_tx && s.flow->fed) {
			GraphFlow &f = *s.flow;
			if (f.o.verb == Verb::read || verb_is_atomic(f.o.verb)) {
				*err = stage_path(*g, s) + "an rdma_tx stage fed by a ring sends the messages it gets: flow '" +
				       f.conf->name + "' uses " + verb_name(f.o.verb) + ", which sends none";
				return -1;
			}
			const uint64_t in = out_count[i];
			if (in == UINT64_MAX && f.conf->messages) {
				*err = at(c, f.conf->line, "flows.[" + std::to_string(f.conf - c.flows.data()) + "].messages") +
				       "flow '" + f.conf->name + "' sends what its ring brings, and what comes in runs for a "
								 "duration: leave messages out (it sends until its input ends)";
				return -1;
			}
			if (in != UINT64_MAX && f.conf->messages && f.conf->messages != in) {
				*err = at(c, f.conf->line, "flows.[" + std::to_string(f.conf - c.flows.data()) + "].messages") +
				       "flow '" + f.conf->name + "' sends what its ring brings: " + std::to_string(in) +
				       " messages (leave messages out, or make it that)";
				return -1;
			}
			if (f.conf->duration_s > 0) {
				*err = at(c, f.conf->line, "flows.[" + std::to_string(f.conf - c.flows.data()) + "].duration") +
				       "flow '" + f.conf->name + "' sends what its ring brings (" +
				       (in == UINT64_MAX ? std::string("until its input ends") : std::to_string(in) + " messages") +
				       "): it runs no duration of its own";
				return -1;
			}
			f.o.messages = in == UINT64_MAX ? 0 : in;
			f.o.tx_count_from_input = in == UINT64_MAX;
			f.o.duration_s = 0;
		}
	}

	/* A reliable ping-pong is stop-and-wait: each echo is the ACK of its ping. */
	for (auto &f : g->flows) {
		if (!f->pingpong)
			continue;
		const FlowConf &fc = *f->conf;
		const std::string path = "flows.[" + std::to_string(&fc - c.flows.data()) + "].";
		const bool acks = f->reliable() && (fc.ack_every != kDefaultAckEvery || fc.ack_us != kDefaultAckUs);
		if (acks) {
			*err = at(c, fc.line, path + (fc.ack_every != kDefaultAckEvery ? "ack_every" : "ack_us")) + "flow '" +
			       fc.name + "' is a ping-pong: each echo acknowledges its ping, no ACKs are sent";
			return -1;
		}
		if (f->o.inject_loss > 0) {
			*err = (fc.inject_loss > 0 ? at(c, fc.line, path + "inject_loss") : std::string("--inject-loss: ")) + "flow '" +
			       fc.name + "' is a ping-pong: no loss is injected into pings (netem loss on a wire is the way)";
			return -1;
		}
	}

	for (auto &f : g->flows)
		if (plan_flow_window(c, f.get(), err) != 0)
			return -1;

	/* Test hooks from the command line with a file: they need a flow to act on. */
	bool any_uc = false, any_rel_write = false;
	for (auto &f : g->flows) {
		any_uc |= f->o.uc;
		any_rel_write |= f->reliable() && f->o.verb == Verb::write_imm;
		if (cli.inject_loss > 0 && f->o.uc && !f->reliable() && f->o.post_api == PostApi::wr) {
			*err = "--inject-loss: flow '" + f->conf->name + "' is plain UC posting through ibv_qp_ex; the hook leaves WRs out of ibv_post_send chains";
			return -1;
		}
	}
	if (cli.inject_loss > 0 && !any_uc) {
		*err = "--inject-loss: no flow of " + c.file + " runs over UC (an RC QP cannot skip a message)";
		return -1;
	}
	if (cli.inject_bad_retx_header && !any_rel_write) {
		*err = "--inject-bad-retx-header: no flow of " + c.file + " is a write_imm over UC with software reliability";
		return -1;
	}

	/* Buffers go back where they came from; a stage takes one message size. */
	for (auto &s : g->stages) {
		const GraphStage *src = nullptr;
		uint32_t bytes = 0;
		if (!s->conf->inputs.empty() && input_source(g, *s, &src, &bytes, err) != 0)
			return -1;
		if (s->conf->kind == StageKind::rdma_tx && s->flow->fed && bytes != s->flow->o.msg_bytes) {
			const FlowConf &fc = *s->flow->conf;
			*err = at(c, fc.line, "flows.[" + std::to_string(&fc - c.flows.data()) + "].size") + "flow '" + fc.name +
			       "' sends what its ring brings: " + std::to_string(bytes) + " B messages (its size must be that, it is " +
			       std::to_string(s->flow->o.msg_bytes) + ")";
			return -1;
		}
	}
	for (auto &s : g->stages)
		if (++s->lcore->nplaced > kMaxStagesPerLcore) {
			*err = stage_path(*g, *s) + "lcore " + std::to_string(s->lcore->lcore) + " has more than " +
			       std::to_string(kMaxStagesPerLcore) + " stages";
			return -1;
		}
	for (auto &r : g->rings)
		if (r->producers.size() > kMaxUpstreams) {
			*err = at(c, r->conf->line, "rings.[" + std::to_string(r->conf - c.rings.data()) + "]") + "ring '" +
			       r->conf->name + "' has more than " + std::to_string(kMaxUpstreams) + " producer stages";
			return -1;
		}
	size_graph(g);
	if (cli.inject_rnr_lcore >= 0 && !lcore_has_srq(*g, static_cast<unsigned>(cli.inject_rnr_lcore))) {
		*err = "--inject-rnr " + std::to_string(cli.inject_rnr_lcore) +
		       ": no flow receives SENDs on that lcore (no SRQ there to leave empty)";
		return -1;
	}
	g->planned = true;
	return 0;
}

std::vector<const DeviceConf *> graph_devices(const Graph &g)
{
	std::vector<const DeviceConf *> v;
	for (const DeviceConf &d : g.conf->devices)
		for (const auto &l : g.lcores)
			if (l->conf && l->conf->device == d.name && l->has_roles()) {
				v.push_back(&d);
				break;
			}
	return v;
}

namespace {

/* Each lcore with RDMA stages gets its io context's device; what a flow's verb needs
 * of its devices is checked, and how many QPs each device holds. */
int assign_devices(const PipelineConf &c, const std::vector<GraphDevice> &devs, Graph *g, std::string *err)
{
	g->devs = devs;
	const std::vector<const DeviceConf *> names = graph_devices(*g);
	if (names.size() != devs.size()) {
		*err = "graph_build: " + std::to_string(devs.size()) + " device(s) given, the pipeline uses " + std::to_string(names.size());
		return -1;
	}
	std::vector<uint64_t> qps(devs.size(), 0);
	for (auto &l : g->lcores) {
		if (!l->conf || !l->has_roles())
			continue;
		for (size_t i = 0; i < names.size(); i++)
			if (names[i]->name == l->conf->device) {
				l->dev = devs[i].dev;
				l->caps = devs[i].caps;
				for (GraphFlow *f : l->requesters)
					qps[i] += f->o.qps;
				for (GraphFlow *f : l->responders)
					qps[i] += f->o.qps;
				for (GraphFlow *f : l->pingers)
					qps[i] += f->o.qps;
				for (GraphFlow *f : l->echoers)
					qps[i] += f->o.qps;
				for (GraphLane *ln : l->lanes)   // both ends; shared QPs once
					if (!ln->stage->flow->share_qps || ln == ln->stage->flow->lanes[0].get())
						qps[i] += 2ull * ln->o.qps;
			}
	}
	for (size_t i = 0; i < devs.size(); i++)
		if (qps[i] > static_cast<uint64_t>(devs[i].dev->dev_attr.max_qp)) {
			*err = devs[i].dev->name + ": " + std::to_string(qps[i]) + " QPs needed, the device allows " +
			       std::to_string(devs[i].dev->dev_attr.max_qp);
			return -1;
		}
	for (auto &f : g->flows) {
		if (f->o.post_api == PostApi::wr && f->tx && !f->tx->caps->qp_ex)
			f->o.post_api = PostApi::classic;   // said once by the caller
		g->use_wr |= f->o.post_api == PostApi::wr;
		const FlowConf &fc = *f->conf;
		for (GraphLcore *end : {f->tx, f->rx})
			if (end && verb_is_atomic(fc.verb) && end->caps->atomics == IBV_ATOMIC_NONE) {
				*err = at(c, fc.line, "flows.[" + std::to_string(&fc - c.flows.data()) + "]") + end->dev->name +
				       " has no atomics (atomic_cap NONE) for verb " + verb_name(fc.verb);
				return -1;
			}
	}
	return 0;
}

/* The lcore's control QP, made by the first reliable flow with an end there. */
int ensure_ctrl(GraphLcore *l, std::string *err)
{
	constexpr uint32_t kCtrlRecvSlots = 1024, kCtrlSendSlots = 256;
	if (l->has_ctrl)
		return 0;
	if (ctrl_qp_create(*l->dev, kCtrlRecvSlots, kCtrlSendSlots, &l->ctrl, err) != 0)
		return -1;
	l->has_ctrl = true;
	l->port.ctrl = &l->ctrl;
	return 0;
}

/* One flow's objects and roles: lanes, a ping-pong, a two-host flow's end here, or a
 * loopback flow's two ends. */
int flow_setup(Graph *g, GraphFlow &f, std::string *err)
{
	LoopbackFlow &o = *f.objs;
	o.shape = f.shape;
	o.srq_by_lcore = true;
	o.fed = f.fed && !f.has_gen;   // gen stages make the flow's messages in its send pool
	const char *name = f.conf->name.c_str();
	int rc;
	if (f.serves() && g->note)
		g->note("flow '" + f.conf->name + "': server on " + f.remote->addr.str + " (" + f.rx->dev->name + "), waiting for " +
			std::to_string(f.o.qps) + " connection" + (f.o.qps > 1 ? "s" : "") + " (" + verb_opcode_name(f.o.verb) +
			", " + std::to_string(f.o.msg_bytes) + " B" + (f.pingpong ? ", echoed" : "") + ")");
	if (!f.lanes.empty()) {
		rc = lanes_setup(f, err);
	} else if (f.pingpong) {
		rc = pingpong_setup(f, err);
	} else if (f.serves()) {
		/* The handshake names the control QP the client's restart requests come to. */
		if (f.reliable() && ensure_ctrl(f.rx, err) != 0)
			return -1;
		f.remote->ctrl_qpn = f.reliable() ? f.rx->ctrl.qpn() : 0;
		rc = remote_server_setup(f.o, name, *f.rx->dev, f.rx->ops, f.rx->io, f.handed_on, &f.ctl, f.remote.get(), &o, &f.v, err);
	} else if (f.remote) {
		if (g->note)
			g->note("flow '" + f.conf->name + "': client of " + f.remote->addr.str + " on " + f.tx->dev->name + ", " +
				std::to_string(f.o.qps) + " QP" + (f.o.qps > 1 ? "s" : "") + ", " + verb_opcode_name(f.o.verb) + ", " +
				std::to_string(f.o.msg_bytes) + " B, " + std::to_string(f.o.messages) + " messages");
		/* The handshake names the control QP the client's ACKs come to. */
		if (f.reliable() && ensure_ctrl(f.tx, err) != 0)
			return -1;
		f.remote->ctrl_qpn = f.reliable() ? f.tx->ctrl.qpn() : 0;
		rc = remote_client_setup(f.o, name, *f.tx->dev, f.tx->ops, f.o.post_api == PostApi::wr, f.tx->io, f.fed, &f.ctl,
					 f.remote.get(), &o, &f.q, err);
	} else {
		rc = loopback_flow_setup(f.o, name, *f.tx->dev, *f.rx->dev, f.tx->ops, f.o.post_api == PostApi::wr, f.tx->io,
					 f.rx->io, &f.ctl, &o, &f.q, &f.v, err);
	}
	if (rc != 0) {
		*err = "flow '" + f.conf->name + "': " + *err;
		return -1;
	}
	if (fill_flow_rqs(f.tx, f, err) != 0 || (f.rx != f.tx && fill_flow_rqs(f.rx, f, err) != 0))
		return -1;
	if (!f.lanes.empty() || f.pingpong)
		return 0;
	/* The lcore idles, not a role; the lcore's SRQ is refilled once for all its flows. */
	if (f.tx) {
		f.q.ops = f.tx->ops;
		f.q.idler.channel = nullptr;
	}
	if (f.rx) {
		f.v.ops = f.rx->ops;
		f.v.idler.channel = nullptr;
		f.v.shared_refill = &f.rx->refill;
	}
	return 0;
}

/* The sending end: its retransmission headers registered, its ACKs routed to it, its
 * restart requests addressed to the receiver's control QP (ctrl_qpn at gid; 0: the
 * receiver named none) for the receiver's QPs (peer_qpns, in QP order). */
int reliability_tx(GraphFlow &f, const ibv_gid &gid, uint32_t ctrl_qpn, const uint32_t *peer_qpns, std::string *err)
{
	const std::string who = "flow '" + f.conf->name + "': ";
	if (ensure_ctrl(f.tx, err) != 0)
		return -1;
	f.hdr_mr = ibv_reg_mr(f.tx->dev->pd, f.q.hdrs.get(), f.q.hdrs_bytes, IBV_ACCESS_LOCAL_WRITE);
	if (f.hdr_mr == nullptr) {
		*err = who + "registering its retransmission headers on " + f.tx->dev->name + ": " + strerror(errno);
		return -1;
	}
	f.q.hdr_lkey = f.hdr_mr->lkey;
	CtrlPort &port = f.tx->port;
	if (port.nsenders == kMaxFlows) {
		*err = who + "more than " + std::to_string(kMaxFlows) + " reliable flows send from lcore " + std::to_string(f.tx->lcore);
		return -1;
	}
	port.senders[port.nsenders++] = &f.q;
	f.q.port = &port;
	if (ctrl_qpn == 0)
		return 0;
	/* What goes on the wire in more than one packet (a retransmitted write carries its
	 * header too) can break so that nothing tells the receiver. */
	const uint32_t mtu = 128u << f.tx->dev->port_attr.active_mtu;
	f.q.p.restart_on_timeouts = f.q.ck.bytes + (f.o.verb == Verb::write_imm ? sizeof(RetxHeader) : 0) > mtu;
	if (ctrl_dest_create(*f.tx->dev, gid, ctrl_qpn, &f.request_dest, err) != 0) {
		*err = who + *err;
		return -1;
	}
	for (uint32_t i = 0; i < f.q.nqps; i++) {
		f.q.qps[i].peer_ctrl = &f.request_dest;
		f.q.qps[i].peer_qpn = peer_qpns[i];
	}
	return 0;
}

/* The receiving end: its ACKs addressed to the sender's control QP (ctrl_qpn, at gid),
 * each naming the sender's data QP (peer_qpns, in QP order). */
int reliability_rx(GraphFlow &f, const ibv_gid &gid, uint32_t ctrl_qpn, const uint32_t *peer_qpns, std::string *err)
{
	if (ensure_ctrl(f.rx, err) != 0)
		return -1;
	if (ctrl_dest_create(*f.rx->dev, gid, ctrl_qpn, &f.ack_dest, err) != 0) {
		*err = "flow '" + f.conf->name + "': " + *err;
		return -1;
	}
	f.v.ctrl = &f.rx->ctrl;
	CtrlPort &port = f.rx->port;
	if (port.nreceivers == kMaxFlows) {
		*err = "flow '" + f.conf->name + "': more than " + std::to_string(kMaxFlows) + " reliable flows receive on lcore " +
		       std::to_string(f.rx->lcore);
		return -1;
	}
	port.receivers[port.nreceivers++] = &f.v;
	f.v.port = &port;
	for (uint32_t i = 0; i < f.v.nqps; i++) {
		f.v.qps[i].ack_to = f.ack_dest;
		f.v.qps[i].peer_qpn = peer_qpns[i];
	}
	return 0;
}

/* The qp_num of each QP of a requester or responder, in QP order. */
template <typename Role>
std::vector<uint32_t> qp_nums(const Role &r)
{
	std::vector<uint32_t> n;
	for (uint32_t i = 0; i < r.nqps; i++)
		n.push_back(r.qps[i].qp->qp_num);
	return n;
}

/* Reliable UC flows: a control QP on each lcore with an end of one; the ends here set
 * up (a two-host flow's server addresses its ACKs as the client's handshake said). */
int reliability_setup(Graph *g, std::string *err)
{
	for (auto &fp : g->flows) {
		GraphFlow &f = *fp;
		if (!f.reliable() || f.pingpong || !f.lanes.empty())
			continue;
		if (f.rx && ensure_ctrl(f.rx, err) != 0)
			return -1;
		if (f.tx && f.remote) {   // a two-host client: the server's reply named its QPs
			const RemoteEnd &e = *f.remote;
			if (reliability_tx(f, e.peer_gid, e.peer_ctrl_qpn.empty() ? 0 : e.peer_ctrl_qpn[0], e.peer_uc_qpn.data(), err) != 0)
				return -1;
		} else if (f.tx && reliability_tx(f, f.rx->dev->gid, f.rx->ctrl.qpn(), qp_nums(f.v).data(), err) != 0) {
			return -1;
		}
		if (!f.rx)
			continue;
		if (f.serves()) {
			const RemoteEnd &e = *f.remote;
			for (uint32_t q : e.peer_ctrl_qpn)
				if (q == 0 || q != e.peer_ctrl_qpn[0]) {
					*err = "flow '" + f.conf->name + "': the client named no control QP, or not one for all QPs";
					return -1;
				}
			if (reliability_rx(f, e.peer_gid, e.peer_ctrl_qpn[0], e.peer_uc_qpn.data(), err) != 0)
				return -1;
			continue;
		}
		if (reliability_rx(f, f.tx->dev->gid, f.tx->ctrl.qpn(), qp_nums(f.q).data(), err) != 0)
			return -1;
	}
	return 0;
}

} // namespace

namespace {

/* Each lcore's loop as built: its stages in the order it calls them. */
void log_lcores(const Graph &g)
{
	for (const auto &l : g.lcores) {
		std::string stages;
		for (const auto &s : g.stages)
			if (s->lcore == l.get())
				stages += (stages.empty() ? "" : ", ") + s->conf->name + " (" + stage_kind_name(s->conf->kind) + ")";
		RP_LOG(DEBUG, PIPELINE, "rdmapipe: lcore %u runs %s%s\n", l->lcore, stages.c_str(),
		       l->has_io ? ", sharing one io context" : "");
	}
}

} // namespace

int graph_build(const PipelineConf &c, const RunOptions &cli, const std::vector<GraphDevice> &devs, Graph *g,
		std::string *err)
{
	if (!g->planned && graph_plan(c, cli, g, err) != 0)
		return -1;
	if (assign_devices(c, devs, g, err) != 0 || fit_chunks(g, err) != 0 || fit_device(g, err) != 0)
		return -1;
	for (auto &s : g->stages)
		if (s->conf->kind == StageKind::gen && s->flow->o.rate_pps > 0) {
			uint32_t gens = 0;
			for (auto &t : g->stages)
				gens += t->conf->kind == StageKind::gen && t->flow == s->flow;
			s->st.tsc_per_msg = static_cast<uint64_t>(static_cast<double>(rte_get_tsc_hz()) * gens / s->flow->o.rate_pps);
		}

	/* Per lcore with RDMA stages: one io context sized by all of them, its SRQ filled
	 * before any QP connects (a client on another host posts once its connections are up). */
	for (auto &l : g->lcores)
		if (l->conf && l->has_roles() && make_lcore_io(l.get(), err) != 0)
			return -1;
	for (auto &l : g->lcores) {
		l->starved = static_cast<int>(l->lcore) == cli.inject_rnr_lcore;
		if (l->has_io && fill_lcore_srq(l.get(), l->starved, err) != 0)
			return -1;
	}

	/* Each flow's objects and roles on its lcores' io contexts. Servers of two-host
	 * flows listen first (that never blocks), then accept on threads of their own while
	 * this host's other flows connect: two hosts that each serve the other a flow would
	 * otherwise each wait in its connect for the other's accept. */
	for (auto &f : g->flows)
		if (f->serves() && remote_listen(f->remote.get(), f->o.qps, *f->rx->dev, f->objs.get(), err) != 0) {
			*err = "flow '" + f->conf->name + "': " + *err;
			return -1;
		}
	if (g->listening && g->listening(err) != 0)
		return -1;
	/* Each lcore's control QP before the threads: two ends of reliable flows on one lcore
	 * (a server accepting beside a client connecting) would otherwise both make it. */
	for (auto &f : g->flows)
		if (f->reliable() && f->remote && !f->pingpong && ensure_ctrl(f->end_here(), err) != 0)
			return -1;
	const size_t nflows = g->flows.size();
	std::vector<std::thread> accepting;
	std::vector<int> accept_rc(nflows, 0);
	std::vector<std::string> accept_err(nflows);
	for (size_t i = 0; i < nflows; i++)
		if (GraphFlow &f = *g->flows[i]; f.serves())
			accepting.emplace_back([g, &f, &accept_rc, &accept_err, i] { accept_rc[i] = flow_setup(g, f, &accept_err[i]); });
	int rc = 0;
	for (auto &f : g->flows)
		if (rc == 0 && !f->serves())
			rc = flow_setup(g, *f, err);
	for (std::thread &t : accepting)
		t.join();
	for (size_t i = 0; rc == 0 && i < nflows; i++)
		if (accept_rc[i] != 0) {
			*err = accept_err[i];
			rc = -1;
		}
	if (rc != 0 || reliability_setup(g, err) != 0)
		return -1;
	for (auto &l : g->lcores)
		if (l->has_io && check_lcore_rqs(l.get(), err) != 0)
			return -1;
	for (auto &f : g->flows)
		if (f->serves())
			g->watch.ends.push_back({f->remote.get(), f->objs->pairs.cm_server.get(), &f->ctl});
		else if (f->remote)   // a client: its requester's final counts go to the server (duration runs)
			g->watch.ends.push_back({f->remote.get(), f->objs->pairs.cm_client.get(), &f->ctl,
						 f->pingpong ? nullptr : &f->q, f->tx->io.send_cq});
	for (auto &f : g->flows) {
		if (!f->lanes.empty())
			continue;   // passive far ends
		if (f->rx)
			f->v.rx_pool = f->rx->rx_pool;
		if (f->pingpong && f->tx)
			f->ping.rx_pool = f->tx->rx_pool;
		if (f->pingpong && f->rx)
			f->pong.rx_pool = f->rx->rx_pool;
	}

	/* Rings with the file's flags. */
	for (auto &r : g->rings) {
		const RingConf &rc = *r->conf;
		unsigned flags = (rc.multi_producer ? 0 : RING_F_SP_ENQ) | (rc.multi_consumer ? 0 : RING_F_SC_DEQ);
		std::string name = ("rp_" + rc.name).substr(0, RTE_RING_NAMESIZE - 1);
		if ((r->ring = rte_ring_create(name.c_str(), rc.size, static_cast<int>(rte_socket_id()), flags)) == nullptr) {
			*err = at(c, rc.line, "rings.[" + std::to_string(&rc - c.rings.data()) + "]") + "ring '" + rc.name +
			       "' (" + std::to_string(rc.size) + "): rte_ring_create: " + rte_strerror(rte_errno);
			return -1;
		}
	}

	/* Stages wired to their rings, pools and roles. */
	for (auto &sp : g->stages) {
		GraphStage &s = *sp;
		Stage &st = s.st;
		const StageConf &sc = *s.conf;
		if (!sc.inputs.empty()) {
			GraphRing *in = ring_named(g, sc.inputs[0]);
			st.in = in->ring;
			for (GraphStage *p : in->producers)
				stage_feed(&st, &p->st);   // at most kMaxUpstreams (graph_plan)
		}
		if (!sc.outputs.empty())
			st.out = ring_named(g, sc.outputs[0])->ring;
		rte_mempool *pool = nullptr;
		const MrTable *mrs = nullptr;
		const GraphStage *src = nullptr;
		Device *pool_dev = nullptr;
		uint32_t bytes = 0;
		if (!sc.inputs.empty()) {
			if (input_source(g, s, &src, &bytes, err) != 0)
				return -1;
			pool = source_pool(src, &mrs, &pool_dev);
		}
		switch (sc.kind) {
		case StageKind::gen:
			st.pool = s.flow->objs->tx_pool;
			st.ctl = &s.flow->ctl;
			break;
		case StageKind::echo:
			st.ctx = &s.flow->pong;
			break;
		case StageKind::rdma_tx:
			if (!s.flow->lanes.empty()) {
				for (auto &lane : s.flow->lanes)
					if (lane->stage == &s)
						st.ctx = &lane->q;
				st.joined = true;   // the other lanes would stall without it
				break;
			}
			if (s.flow->pingpong) {
				st.ctx = &s.flow->ping;
				break;
			}
			st.ctx = &s.flow->q;
			if (s.flow->fed) {
				/* Buffers made or received on another device are sent from this one too. */
				if (pool_dev != s.lcore->dev) {
					if (mr_register_mempool(*s.lcore->dev, pool, 0, &s.flow->fed_mrs, err) != 0) {
						*err = stage_path(*g, s) + "its input's pool on " + s.lcore->dev->name + ": " + *err;
						return -1;
					}
					mrs = &s.flow->fed_mrs;
				}
				if (requester_set_input(&s.flow->q, st.in, pool, mrs, err) != 0)
					return -1;
				s.flow->v.self_describing = true;   // the payload was made upstream
			}
			break;
		case StageKind::rdma_rx: {
			GraphFlow &f = *s.flow;
			st.ctx = &f.v;
			if (f.handed_on) {
				std::set<const GraphStage *> seen;
				f.v.out = st.out;
				f.v.payload_downstream = has_verify_downstream(g, &s, &seen);
				f.q.p.self_describing = true;   // a stage downstream reads each message alone
				f.v.self_describing = true;
			}
			break;
		}
		case StageKind::verify:
		case StageKind::sink:
		case StageKind::forward:
			st.pool = pool;
			st.msg_bytes = bytes;
			/* In order only from one gen straight before it: QPs and producers interleave. */
			st.ordered = st.nupstream == 1 && st.upstream[0]->ops == &kSourceStage;
			break;
		default:
			break;
		}
	}

	/* Each lcore: its roles share its CQs; its stages in file order; it idles as one. */
	for (auto &l : g->lcores) {
		if (l->has_io && route_lcore(l.get(), err) != 0)
			return -1;
		l->loop.abort = &g->run.abort;
		l->loop.count_cycles = c.run.stage_cycles || cli.stage_cycles;
		if (l->has_io && l->io.channel) {
			l->loop.idler.channel = l->io.channel;
			l->loop.idler.cqs[0] = l->io.send_cq;
			l->loop.idler.cqs[1] = l->io.recv_cq;
		}
	}
	for (auto &s : g->stages) {
		LcoreLoop &loop = s->lcore->loop;
		loop.stages[loop.nstages++] = &s->st;
	}
	if (log_enabled(RTE_LOG_DEBUG, rp_logtype_pipeline))
		log_lcores(*g);
	return cli.inject_pool_left ? squeeze_pool(g, cli.inject_pool_left, err) : 0;
}

int graph_lcore_run(void *arg)
{
	auto *l = static_cast<GraphLcore *>(arg);
	double cpu0 = thread_cpu_s();
	for (GraphFlow *f : l->requesters)
		requester_start(&f->q);
	for (GraphFlow *f : l->responders)
		responder_start(&f->v);
	for (GraphFlow *f : l->pingers)
		pingpong_start(&f->ping);
	for (GraphFlow *f : l->echoers)
		pingpong_start(&f->pong);
	for (GraphLane *ln : l->lanes)
		requester_start(&ln->q);
	int rc = lcore_loop_run(&l->loop);   // the RDMA stages finish their roles
	for (uint32_t i = 0; i < l->loop.nstages; i++)
		if (l->loop.stages[i]->rc != 0)
			rc = -1;
	l->rc = rc;
	l->cpu_s = thread_cpu_s() - cpu0;
	l->done.store(true, std::memory_order_release);
	return rc;
}

uint64_t graph_buffers_out(const Graph &g)
{
	uint64_t out = 0;
	for (const auto &f : g.flows) {
		if (f->objs->tx_pool)
			out += rte_mempool_in_use_count(f->objs->tx_pool) -
			       (f->objs->tx_pool == g.squeezed_from ? g.squeezed.size() : 0);
		for (const auto &lane : f->lanes)
			if (lane->objs && lane->objs->tx_pool)
				out += rte_mempool_in_use_count(lane->objs->tx_pool);
	}
	for (const auto &l : g.lcores)
		if (l->rx_pool) {
			uint64_t used = rte_mempool_in_use_count(l->rx_pool), posted = l->refill.posted();
			out += used > posted ? used - posted : 0;
		}
	return out;
}

unsigned graph_stop_flows_on(const Graph &g, const Device *dev, uint8_t port, const char *why)
{
	auto on = [&](const GraphLcore *l) { return l && l->dev == dev && (port == 0 || dev->port == port); };
	unsigned n = 0;
	for (const auto &f : g.flows) {
		bool uses = on(f->tx) || on(f->rx);
		for (const auto &lane : f->lanes)
			uses |= on(lane->lcore);
		if (uses) {
			f->ctl.abort_with(why);
			n++;
		}
	}
	return n;
}

} // namespace rp
