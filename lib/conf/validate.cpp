/* The checks across keys and objects of a PipelineConf: what no single key says alone
 * (a flow's batch against its window, a stage's flow among the flows, a pool's count
 * against its flows' queues). The reader (config.cpp) has checked each key's type and
 * range; each object's `keys` holds the line of every key the file set, so a refusal
 * names the key as the reader would: "FILE:LINE: flows.[0].window: ...". Each check
 * has its place in the order of a file's checks (check_order.h), and they run in it. */
#include "conf/validate_internal.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace rp {

namespace {

using namespace check;

/* Names are unique within their list: element i's is not one an earlier element has. */
template <typename T>
bool check_name(Errors &e, int section, const char *list, const std::vector<T> &v, size_t i)
{
	if (!e.reach(section, static_cast<int>(i), kStepUnique))
		return false;
	for (size_t k = 0; k < i; k++)
		if (v[k].name == v[i].name)
			return e.fail(where(section, list, i, v[i]), "name", "'" + v[i].name + "' is already used by another element of this list");
	return true;
}

bool check_devices(Errors &e, const PipelineConf &c)
{
	for (size_t i = 0; i < c.devices.size(); i++)
		if (!check_name(e, kSecDevices, "devices", c.devices, i))
			return false;
	return true;
}

bool check_pools(Errors &e, const PipelineConf &c)
{
	for (size_t i = 0; i < c.pools.size(); i++) {
		const PoolConf &p = c.pools[i];
		if (!check_name(e, kSecPools, "pools", c.pools, i) || !e.reach(kSecPools, static_cast<int>(i), kStepChecks))
			return false;
		if (p.cache && p.cache * 3ull / 2 > p.count)
			return e.fail(where(kSecPools, "pools", i, p), "cache", "a cache of " + std::to_string(p.cache) +
				      " would strand most of the " + std::to_string(p.count) +
				      " buffers on one lcore (at most count x 2/3)");
	}
	return true;
}

bool check_io_context(Errors &e, const PipelineConf &c, size_t i)
{
	const IoContextConf &io = c.io_contexts[i];
	const Where w = where(kSecIoContexts, "io_contexts", i, io);
	if (!e.reach(w, kStepChecks))
		return false;
	for (size_t k = 0; k < i; k++)
		if (c.io_contexts[k].lcore == io.lcore)
			return e.fail(w, "lcore", "lcore " + std::to_string(io.lcore) + " already has an io context (one per lcore)");
	const std::vector<std::string> devs = names_of(c.devices);
	if (!known(devs, io.device)) {
		std::string hint = closest_name(io.device, devs);
		return e.fail(w, "device", "no device named '" + io.device + "' in devices" +
			      (hint.empty() ? "" : "; did you mean '" + hint + "'?"));
	}
	for (const char *k : {"srq", "srq_refill"})
		if (io.rq_per_qp && io.keys.has(k))
			return e.fail(w, k, "set, but recv_queue = \"qp\" gives each QP its own receive queue and the lcore no SRQ");
	/* srq = 0 given: no SRQ; not given, the builder sizes it (and takes the refill). */
	if (io.srq == 0 && io.srq_given && io.keys.has("srq_refill"))
		return e.fail(w, "srq_refill", "set without an SRQ (srq = 0)");
	if (io.srq_refill > io.srq && io.srq)
		return e.fail(w, "srq_refill", std::to_string(io.srq_refill) + " exceeds the SRQ depth " + std::to_string(io.srq));
	return true;
}

/* Where a flow's two ends are, and what each end's settings act on. */
bool check_flow_ends(Errors &e, const FlowConf &f, const Where &w)
{
	if (!e.reach(w, kFlowListenAndPeer))
		return false;
	if (f.keys.has("listen") && f.keys.has("peer"))
		return e.fail(w, "listen", "give peer (this host is the client) or listen (it is the server), not both");
	if (!e.reach(w, kFlowEnds))
		return false;
	if (!f.local.empty() && (f.peer.empty() || f.peer == "loopback"))
		return e.fail(w, "local", "the client's own address goes with peer = \"HOST:PORT\"");
	if (f.transport == Transport::uc && !verb_info(f.verb).uc)
		return e.fail(w, "transport", std::string("UC has no ") + verb_name(f.verb) + " (RC only)");
	return true;
}

bool check_flow_sizes(Errors &e, const FlowConf &f, const Where &w)
{
	if (f.keys.has("size") && f.keys.has("sizes"))   // still kFlowEnds: before the sizes are read
		return e.fail(w, "sizes", "give size or sizes, not both");
	if (!e.reach(w, kFlowFixedSize))
		return false;
	if (const uint32_t fixed = verb_info(f.verb).fixed_bytes; fixed && (f.sizes.size() != 1 || f.sizes[0] != fixed))
		return e.fail(w, f.keys.has("size") ? "size" : "sizes", std::string(verb_name(f.verb)) + " works on " +
			      std::to_string(fixed) + "-byte words only");
	if (!e.reach(w, kFlowCounts))
		return false;
	if (f.keys.has("messages") && f.keys.has("duration"))
		return e.fail(w, "duration", "give messages or duration, not both");
	if (f.inline_send && !verb_info(f.verb).inlinable)
		return e.fail(w, "inline", std::string(verb_name(f.verb)) + " carries no payload to inline");
	return true;
}

/* A UC flow's software reliability and its settings; RC is reliable in the NIC. */
bool check_flow_reliability(Errors &e, const FlowConf &f, const Where &w)
{
	const bool uc = f.transport == Transport::uc, soft = f.reliability == Reliability::software;
	if (!e.reach(w, kFlowReliability))
		return false;
	if (f.keys.has("reliability") && !uc)
		return e.fail(w, "reliability", "reliability is for transport = \"uc\" (RC is reliable in the NIC)");
	if (soft && !verb_consumes_receive(f.verb))
		return e.fail(w, f.keys.has("reliability") ? "reliability" : "transport",
			      "software reliability needs a completion at the receiver: use write_imm, send or send_imm, or "
			      "reliability = \"none\" for plain UC writes");
	for (const char *k : {"ack_every", "ack_us"})
		if (f.keys.has(k) && !soft)
			return e.fail(w, k, std::string(k) + " is for reliability = \"software\" (transport = \"uc\")");
	if (!e.reach(w, kFlowChunk))
		return false;
	if (f.keys.has("chunk") && (!soft || !verb_info(f.verb).chunkable))
		return e.fail(w, "chunk", "chunk cuts write_imm messages of software reliability (transport = \"uc\"): this flow "
			      "sends none");
	if (!e.reach(w, kFlowLoss))
		return false;
	if (!uc && f.inject_loss > 0)
		return e.fail(w, "inject_loss", "inject_loss needs transport = \"uc\" (an RC QP cannot skip a message)");
	if (f.post_api == PostApi::wr && !soft && f.inject_loss > 0)
		return e.fail(w, "inject_loss", "inject_loss on plain UC leaves WRs out of ibv_post_send chains (post_api = \"classic\", or software reliability)");
	return true;
}

/* The send queue, the windows and the receiver's memory against batch and sizes. */
bool check_flow_queues(Errors &e, const FlowConf &f, const Where &w)
{
	if (!e.reach(w, kFlowQueues))
		return false;
	/* A signalled WR every N frees the queue in steps of N: below 2N the sender waits on
	 * a completion it has not asked for. Every WR signalled (N = 1): any depth, down to
	 * one operation in flight (a latency test's). */
	if (f.signal_every > 1 && f.sq_depth < 2ull * f.signal_every)
		return e.fail(w, "sq_depth", "send queue depth " + std::to_string(f.sq_depth) + " is below 2 x signal_every (" +
			      std::to_string(2ull * f.signal_every) + ")");
	if (f.sq_depth < f.batch)
		return e.fail(w, "sq_depth", "send queue depth " + std::to_string(f.sq_depth) + " cannot hold one chain of batch " +
			      std::to_string(f.batch));
	if (f.flow_window && f.flow_window < f.batch)
		return e.fail(w, "flow_window", std::to_string(f.flow_window) + " is below batch " + std::to_string(f.batch) +
			      ": a chain would not fit the flow's window");
	if (f.window < f.batch)
		return e.fail(w, "window", std::to_string(f.window) + " is below batch " + std::to_string(f.batch) +
			      ": a chain would not fit the receive window");
	uint64_t window_bytes = static_cast<uint64_t>(f.window) * f.max_size() * f.qps;
	if (window_bytes > (1ull << 31))
		return e.fail(w, "window x size x qps is " + std::to_string(window_bytes) +
			      " bytes; the receiver's memory for a flow is limited to 2 GiB");
	return true;
}

bool check_flows(Errors &e, const PipelineConf &c)
{
	for (size_t i = 0; i < c.flows.size(); i++) {
		const FlowConf &f = c.flows[i];
		const Where w = where(kSecFlows, "flows", i, f);
		if (!check_name(e, kSecFlows, "flows", c.flows, i) || !check_flow_ends(e, f, w) || !check_flow_sizes(e, f, w) ||
		    !check_flow_reliability(e, f, w) || !check_flow_queues(e, f, w))
			return false;
	}
	uint64_t total = 0;
	for (const FlowConf &f : c.flows)
		total += f.qps;
	const Where list{"flows", c.keys.line("flows")};
	if (!e.reach(kSecFlows, kListEnd, 0))
		return false;
	if (c.flows.size() > kMaxFlows)
		return e.fail(list, std::to_string(c.flows.size()) + " flows; at most " + std::to_string(kMaxFlows));
	if (total > kMaxQps)
		return e.fail(list, std::to_string(total) + " QPs in all flows; at most " + std::to_string(kMaxQps));
	return true;
}

bool check_rings(Errors &e, const PipelineConf &c)
{
	for (size_t i = 0; i < c.rings.size(); i++)
		if (!check_name(e, kSecRings, "rings", c.rings, i))
			return false;
	return true;
}

/* A stage's rings and flow exist, and its kind takes them. */
bool check_stage(Errors &e, const PipelineConf &c, size_t i)
{
	const StageConf &st = c.stages[i];
	const Where w = where(kSecStages, "stages", i, st);
	if (!e.reach(w, kStepChecks))
		return false;
	const std::vector<std::string> rings = names_of(c.rings);
	for (auto *v : {&st.inputs, &st.outputs})
		for (const std::string &n : *v)
			if (!known(rings, n))
				return unknown_ref(e, w, v == &st.inputs ? "input" : "output", "ring", n, rings);
	if (st.kind == nullptr)   // a pipeline made in code that named none
		return e.fail(w, "kind", "the stage has no kind");
	const StageKindInfo &kind_info = *st.kind;
	if (kind_info.needs_flow && st.flow.empty())
		return e.fail(w, a_stage(st.kind) + " needs a flow");
	if (!kind_info.needs_flow && !st.flow.empty())
		return e.fail(w, "flow", a_stage(st.kind) + " takes no flow");
	if (!st.flow.empty() && !known(names_of(c.flows), st.flow))
		return unknown_ref(e, w, "flow", "flow", st.flow, names_of(c.flows));
	if (kind_info.writes_file && st.file.empty())
		return e.fail(w, a_stage(st.kind) + " needs a file (the capture file it writes)");
	for (const char *key : {"file", "snaplen"})
		if (!kind_info.writes_file && st.keys.has(key))
			return e.fail(w, key, a_stage(st.kind) + " takes no " + key + " (a capture stage writes a file)");
	if (!kind_info.in.fits(st.inputs.size()))
		return e.fail(w, "input", a_stage(st.kind) + " takes " + ring_count_text(kind_info.in, true));
	if (!kind_info.out.fits(st.outputs.size()))
		return e.fail(w, "output", a_stage(st.kind) + " takes " + ring_count_text(kind_info.out, false));
	return true;
}

bool check_stages(Errors &e, const PipelineConf &c)
{
	for (size_t i = 0; i < c.stages.size(); i++)
		if (!check_name(e, kSecStages, "stages", c.stages, i) || !check_stage(e, c, i))
			return false;
	return true;
}

bool check_run(Errors &e, const RunConf &run)
{
	if (!e.reach(kSecRun, 0, 1))   // after the reader's checks of run's keys
		return false;
	if (run.warmup_s > 0 && run.duration_s > 0 && run.warmup_s >= run.duration_s)
		return e.fail(Where{"run", run.line, &run.keys}, "warmup", "the warm-up must be shorter than the run's duration");
	if (run.metrics_qp && run.metrics.empty() && run.push.empty())
		return e.fail(Where{"run", run.line, &run.keys}, "metrics_qp",
			      "per-QP counters go to the metrics, and neither run.metrics nor run.push is set");
	return true;
}

/* A pattern's keys against its kind, its flows among the file's (none named: all). */
bool check_pattern_keys(Errors &e, PipelineConf *c)
{
	PatternConf &p = c->pattern;
	if (!p.on())
		return true;
	const Where w{"pattern", p.line, &p.keys, kSecPattern, 0};
	if (!e.reach(w, kPatternKind))
		return false;
	if (p.keys.has("root") && p.kind != PatternKind::incast)
		return e.fail(w, "root", std::string("root is incast's receiver; this pattern is ") + pattern_kind_name(p.kind));
	if (p.keys.has("pairs") != (p.kind == PatternKind::list))
		return p.keys.has("pairs") ? e.fail(w, "pairs", "pairs go with kind = \"list\"") : e.fail(w, "missing setting 'pairs'");
	if (!e.reach(w, kPatternFlows))
		return false;
	const std::vector<std::string> flows = names_of(c->flows);
	for (const std::string &f : p.flows)
		if (!known(flows, f))
			return unknown_ref(e, w, "flows", "flow", f, flows);
	if (p.flows.empty())
		p.flows = flows;
	return true;
}

/* Rings: one producer and one consumer stage, unless declared multi. */
bool check_ring_ends(Errors &e, const PipelineConf &c, size_t i)
{
	const RingConf &ring = c.rings[i];
	const Where w = where(kSecAcross, "rings", i, ring);
	std::vector<std::string> prod, cons;
	for (const StageConf &st : c.stages) {
		for (const std::string &n : st.outputs)
			if (n == ring.name)
				prod.push_back(st.name);
		for (const std::string &n : st.inputs)
			if (n == ring.name)
				cons.push_back(st.name);
	}
	if (prod.empty() || cons.empty())
		return e.fail(w, std::string("ring '") + ring.name + "' has no " + (prod.empty() ? "producer" : "consumer") + " stage");
	if (prod.size() > 1 && !ring.multi_producer)
		return e.fail(w, "ring '" + ring.name + "' has " + std::to_string(prod.size()) + " producer stages (" + joined(prod) +
			      "): declare multi_producer = true, or give each its own ring");
	if (cons.size() > 1 && !ring.multi_consumer)
		return e.fail(w, "ring '" + ring.name + "' has " + std::to_string(cons.size()) + " consumer stages (" + joined(cons) +
			      "): declare multi_consumer = true, or give each its own ring");
	return true;
}

bool has_io(const PipelineConf &c, uint32_t lcore)
{
	for (const IoContextConf &io : c.io_contexts)
		if (io.lcore == lcore)
			return true;
	return false;
}

/* An lcore with RDMA stages and no io context gets one on the file's one device, sized
 * by the builder; with several devices the file must say which. */
bool check_stage_io(Errors &e, PipelineConf *c)
{
	for (const StageConf &st : c->stages) {
		if (!st.kind->needs_io || has_io(*c, st.lcore) || c->devices.size() != 1)
			continue;
		IoContextConf io;
		io.lcore = st.lcore;
		io.device = c->devices[0].name;
		io.line = st.line;
		io.derived = true;
		c->io_contexts.push_back(io);
	}
	for (size_t i = 0; i < c->stages.size(); i++) {
		const StageConf &st = c->stages[i];
		if (st.kind->needs_io && !has_io(*c, st.lcore))
			return e.fail(where(kSecAcross, "stages", i, st), "lcore", a_stage(st.kind) + " needs an io context on lcore " +
				      std::to_string(st.lcore) + " (io_contexts): the file has " + std::to_string(c->devices.size()) +
				      " devices, say which one this lcore uses");
	}
	return true;
}

/* Several rdma_tx stages (lanes) post one-sided verbs to a passive far end of the flow
 * (loopback): reads check their own results; what writes and atomics leave there is
 * checked at the end by its rdma_rx stage. Two-sided verbs and write_imm are refused:
 * their receiver takes each QP's messages as one sequence, which lanes sharing a QP
 * would interleave, and the lanes' far end posts no receives. */
bool check_flow_lanes(Errors &e, const FlowConf &f, const FlowEnds &n, const Where &w)
{
	const std::string lanes = "flow '" + f.name + "' has " + std::to_string(n.tx) + " rdma_tx stages (lanes)";
	if (!f.listen.empty() || f.peer != "loopback")
		return e.fail(w, lanes + ": that takes a loopback flow (both ends on this host)");
	if (verb_consumes_receive(f.verb))
		return e.fail(w, "verb", lanes + ": lanes post one-sided verbs (read, write, fetch_add, cmp_swap) to a "
			      "passive far end; " + verb_name(f.verb) + " consumes a receive there, whose receiver takes each "
			      "QP's messages as one sequence (lanes sharing a QP would interleave theirs)");
	if (n.echo != 0 || n.rx > 1 || (f.verb != Verb::read && n.rx != 1))
		return e.fail(w, lanes + " of " + verb_name(f.verb) + ": " +
			      (f.verb == Verb::read ? std::string("reads check their own results; at most one rdma_rx stage")
						    : std::string("one rdma_rx stage (on an lcore of its own) checks what they left in "
								  "the far end's memory at the end")) +
			      ", it has " + std::to_string(n.rx + n.echo));
	return true;
}

/* A two-host flow's end here sends (one rdma_tx stage) or receives (one rdma_rx or echo
 * stage), whichever end listens; what each end's settings act on. */
bool check_two_host_end(Errors &e, const FlowConf &f, const FlowEnds &n, const Where &w)
{
	const char *end = f.listen.empty() ? "dials (peer)" : "listens (listen)";
	if (n.tx < 2 && !((n.tx == 1 && n.rx + n.echo == 0) || (n.tx == 0 && n.rx + n.echo == 1)))   // lanes: said below
		return e.fail(w, "flow '" + f.name + "' goes between two hosts and this host " + end + ": its end here is one rdma_tx "
			      "stage (it sends) or one rdma_rx or echo stage (it receives), it has " + std::to_string(n.tx) +
			      " rdma_tx and " + std::to_string(n.rx + n.echo) + " rdma_rx or echo");
	if (f.keys.has("inject_loss") && n.tx == 0)
		return e.fail(w, "inject_loss", "inject_loss acts where the flow sends: this host receives it, set it on the other");
	if (f.inject_loss > 0 && n.tx == 0)   // --inject-loss, on every UC flow of the run
		return e.fail(w, "--inject-loss acts where a flow sends: flow '" + f.name + "' is received on this host, give it to the other");
	for (const char *k : {"ack_every", "ack_us"})
		if (f.keys.has(k) && n.tx != 0)
			return e.fail(w, k, std::string(k) + " is the receiver's: the other host sends the ACKs, set it there");
	return true;
}

/* Who posts and who receives: a loopback flow both here, a two-host flow one end here. */
bool check_flow_roles(Errors &e, const FlowConf &f, const FlowEnds &n, const Where &w)
{
	const bool loopback = f.peer == "loopback";   // (listen leaves peer empty)
	if (!loopback && !check_two_host_end(e, f, n, w))
		return false;
	if (f.echoed && loopback)
		return e.fail(w, "echoed", "echoed says a flow is echoed on another host; here an echo stage says it");
	if (f.echoed && n.tx != 1)
		return e.fail(w, "echoed", "an echoed flow (a ping-pong) has one rdma_tx stage, flow '" + f.name + "' has " +
			      std::to_string(n.tx));
	if (loopback && n.tx == 0)
		return e.fail(w, "flow '" + f.name + "' has no rdma_tx stage; it needs one (or one per lcore that shares it)");
	if (f.share_qps && n.tx < 2)
		return e.fail(w, "share_qps", "sharing QPs needs two or more rdma_tx stages of flow '" + f.name +
			      "' (on the lcores that share them), it has " + std::to_string(n.tx));
	return n.tx < 2 || check_flow_lanes(e, f, n, w);
}

/* Where a flow is received, and that its two ends here run on lcores of their own. */
bool check_flow_receivers(Errors &e, const PipelineConf &c, const FlowConf &f, const FlowEnds &n, const Where &w)
{
	const bool loopback = f.peer == "loopback";   // (listen leaves peer empty)
	if (loopback && !c.pattern.has(f.name))   // a pattern's two ends are two ranks
		for (const StageConf &a : c.stages)
			for (const StageConf &b : c.stages)
				if (a.flow == f.name && b.flow == f.name && a.kind->end == FlowEnd::requester &&
				    b.kind->end >= FlowEnd::responder && a.lcore == b.lcore)
					return e.fail(w, "flow '" + f.name + "' has both ends on lcore " + std::to_string(a.lcore) +
						      ": its rdma_tx and " + b.kind->name + " stages need lcores of their own");
	if (loopback && n.tx == 1 && n.rx + n.echo != 1)
		return e.fail(w, "loopback flow '" + f.name + "' needs exactly one rdma_rx or echo stage, it has " +
			      std::to_string(n.rx + n.echo));
	if ((n.echo || f.echoed) && verb_info(f.verb).ping_wait == PingWait::none)
		return e.fail(w, "verb", "a ping-pong (an echo stage) echoes " + verb_echoed_list() + " (writes polled in memory, as "
			      "ib_write_lat does): flow '" + f.name + "' uses " + verb_name(f.verb));
	return true;
}

bool check_flow_pool(Errors &e, const PipelineConf &c, const FlowConf &f, const Where &w)
{
	if (f.pool.empty())   // none named: a pool of its own, sized by the builder
		return true;
	for (const PoolConf &p : c.pools)
		if (p.name == f.pool) {
			if (p.elt_size < f.max_size())
				return e.fail(w, "pool", "pool '" + p.name + "' has " + std::to_string(p.elt_size) +
					      " B buffers, the flow sends up to " + std::to_string(f.max_size()) + " B");
			return true;
		}
	return unknown_ref(e, w, "pool", "pool", f.pool, names_of(c.pools));
}

/* Every flow is posted by exactly one rdma_tx (or echo) stage and received by one rdma_rx. */
bool check_flow_stages(Errors &e, PipelineConf *c)
{
	for (size_t i = 0; i < c->flows.size(); i++) {
		FlowConf &f = c->flows[i];
		const Where w = where(kSecAcross, "flows", i, f);
		const FlowEnds n = flow_ends(*c, f);
		if (!check_flow_roles(e, f, n, w))
			return false;
		/* Lanes sharing QPs each post to every send queue: a depth left to its default is
		 * each lane's default share. */
		if (f.share_qps && n.tx > 1 && !f.sq_depth_given)
			f.sq_depth = std::min<uint32_t>(kMaxSqDepth, n.tx * f.sq_depth);
		if (!check_flow_receivers(e, *c, f, n, w) || !check_flow_pool(e, *c, f, w))
			return false;
	}
	return true;
}

/* Pools hold what their flows keep in flight: a send queue and one chain per QP. */
bool check_pool_counts(Errors &e, const PipelineConf &c)
{
	for (size_t i = 0; i < c.pools.size(); i++) {
		const PoolConf &p = c.pools[i];
		uint64_t need = 0;
		std::vector<std::string> users;
		for (const FlowConf &f : c.flows)
			if (f.pool == p.name) {
				need += static_cast<uint64_t>(f.qps) * (f.sq_depth + f.batch);
				users.push_back(f.name);
			}
		if (need > p.count)
			return e.fail(where(kSecAcross, "pools", i, p), "count", std::to_string(p.count) + " buffers cannot hold the " +
				      std::to_string(need) + " messages in flight of flow(s) " + joined(users) +
				      " (qps x (sq_depth + batch))");
	}
	return true;
}

/* A pattern's flows are templates the ranks run once per pair, its rdma_tx stage on the
 * sender's lcore and its rdma_rx (or echo) on the receiver's; so no rings (a rank has as
 * many of each stage as it has peers) and no two-host ends of their own. */
bool check_pattern_flows(Errors &e, const PipelineConf &c)
{
	const PatternConf &p = c.pattern;
	if (!p.on())
		return true;
	for (size_t i = 0; i < c.flows.size(); i++) {
		const FlowConf &f = c.flows[i];
		const Where w = where(kSecAcross, "flows", i, f);
		const char *end = f.keys.has("listen") ? "listen" : "peer";
		if (!p.has(f.name)) {   // it runs as it is on every rank: several would take one port or peer
			if (f.peer != "loopback")
				return e.fail(w, end, "flow '" + f.name + "' goes between two hosts, and every rank of a job would run it: put it in the pattern");
			continue;
		}
		if (f.peer != "loopback")
			return e.fail(w, end, "flow '" + f.name + "' is in the pattern: its peers are the job's ranks, leave out peer and listen");
		for (const StageConf &st : c.stages)
			if (st.flow == f.name && !(st.inputs.empty() && st.outputs.empty()))
				return e.fail(w, "flow '" + f.name + "' is in the pattern: its stage '" + st.name +
					      "' runs once per peer on each rank, so it takes no rings");
	}
	std::set<std::string> used;
	for (const IoContextConf &io : c.io_contexts)
		used.insert(io.device);
	if (!p.devices.empty() && used.size() > 1)
		return e.fail(Where{"pattern", p.line, &p.keys}, "devices", "devices picks each rank's one device, but the io contexts use " +
			      std::to_string(used.size()) + "; give them one device");
	return true;
}

/* A flow's gid_index picks the GID its QPs send from by index; a flow rdma_cm connects
 * takes the GID of its IP address instead (the peer resolves it from that address). */
bool check_flow_gids(Errors &e, const PipelineConf &c)
{
	for (size_t i = 0; i < c.flows.size(); i++) {
		const FlowConf &f = c.flows[i];
		const bool loopback = f.peer == "loopback" && !c.pattern.has(f.name);
		if (!f.keys.has("gid_index") || (loopback && (f.transport == Transport::uc || c.run.connect == ConnectPath::direct)))
			continue;
		return e.fail(where(kSecAcross, "flows", i, f), "gid_index",
			      "flow '" + f.name + "' connects through rdma_cm, whose GID is its IP address's: " +
			      (loopback ? "set run.connect = \"direct\" to pick the GID by index"
					: "give the address of that GID (local, listen) instead"));
	}
	return true;
}

/* run.connect_timeout bounds the waits for connections: where nothing waits, it would
 * bound nothing. */
bool check_connect_timeout(Errors &e, const PipelineConf &c)
{
	if (!c.run.keys.has("connect_timeout") || conf_waits_to_connect(c))
		return true;
	return e.fail(Where{"run", c.run.line, &c.run.keys}, "connect_timeout", kConnectTimeoutNoWait);
}

/* Each section on its own, in the file's order. */
bool check_sections(Errors &e, PipelineConf *c)
{
	if (!check_devices(e, *c) || !check_pools(e, *c))
		return false;
	for (size_t i = 0; i < c->io_contexts.size(); i++)
		if (!check_io_context(e, *c, i))
			return false;
	return check_flows(e, *c) && check_rings(e, *c) && check_stages(e, *c) && check_run(e, c->run) &&
	       check_pattern_keys(e, c);
}

/* The sections against each other, once each is sound. */
bool check_across(Errors &e, PipelineConf *c)
{
	if (!e.reach(kSecAcross, 0, 0))
		return false;
	for (size_t i = 0; i < c->rings.size(); i++)
		if (!check_ring_ends(e, *c, i))
			return false;
	if (!check_stage_io(e, c) || !check_flow_stages(e, c) || !check_flow_gids(e, *c))
		return false;
	conf_size(c);
	if (!check_pool_counts(e, *c) || !check_connect_timeout(e, *c))
		return false;
	for (size_t i = 0; i < c->io_contexts.size(); i++)
		if (!check_cqs(e, *c, i))
			return false;
	return check_pattern_flows(e, *c);
}

} // namespace

bool conf_connects_hosts(const PipelineConf &c)
{
	for (const FlowConf &f : c.flows)
		if (f.peer != "loopback" || c.pattern.has(f.name))
			return true;
	return false;
}

bool conf_waits_to_connect(const PipelineConf &c)
{
	if (conf_connects_hosts(c))
		return true;
	for (const FlowConf &f : c.flows)
		if (loopback_through_cm(c.run.connect, f.transport == Transport::uc))
			return true;
	return false;
}

int connect_timeout_ms(const RunConf &r)
{
	return static_cast<int>(std::max(1.0, std::ceil(r.connect_timeout_s * 1000)));
}

int conf_validate_before(PipelineConf *c, ConfPos limit, std::string *err)
{
	Errors e(c->file, limit, err);
	if (check_sections(e, c))
		check_across(e, c);
	return e.failed() ? -1 : 0;
}

int conf_validate(PipelineConf *c, std::string *err)
{
	return conf_validate_before(c, kConfEnd, err);
}

} // namespace rp
