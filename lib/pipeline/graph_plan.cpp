/* Planning (graph_plan): the file's flows and stages placed on lcores, ping-pongs, lanes and
 * flow windows decided, and everything that flows through rings checked, before EAL or any
 * device. */
#include "pipeline/graph_internal.h"
#include "pipeline/stage_kind.h"

#include <set>

namespace rp {

FlowParams flow_params(const PipelineConf &c, const FlowConf &f)
{
	FlowParams r;
	r.verb = f.verb;
	r.qps = f.qps;
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
	r.post_api = f.post_api;
	r.fence = f.fence;
	r.rnr_retry = f.rnr_retry;
	r.retry_cnt = f.retry_cnt;
	r.min_rnr_timer = f.min_rnr_timer;
	r.traffic = f.traffic;
	r.connect = c.run.connect;
	r.connect_timeout_ms = connect_timeout_ms(c.run);
	r.rate_pps = f.rate_pps;
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
	r.stall_timeout_s = c.run.stall_timeout_s;
	r.quiet = c.run.quiet;
	r.inject_loss = c.hooks.inject_loss > 0 ? c.hooks.inject_loss : f.inject_loss;
	r.inject_bad_retx_header = c.hooks.inject_bad_retx_header;
	if (&f == &c.flows[0]) {   // these act on the first flow only
		r.corrupt_msg = c.hooks.corrupt_msg;
		r.bad_rkey_qp = c.hooks.bad_rkey_qp;
	}
	return r;
}

/* A flow with an echo stage is a ping-pong: one message in flight per QP, timed, for a
 * number of round trips (the flow's messages, else ib_send_lat's default), or until
 * stopped (duration 0: a round-trip count no run reaches, each end then ends with what
 * it had). */
int plan_pingpong(const PipelineConf &c, GraphFlow *f, std::string *err)
{
	const FlowConf &fc = *f->conf;
	const std::string flow = "flows.[" + std::to_string(&fc - c.flows.data()) + "]";
	auto key = [&](const char *k) { return at(c, fc.line, flow + "." + k); };
	if (fc.rate_pps > 0) {
		*err = key("rate") + "a ping-pong sends the next message when the echo of the last one is back: no rate applies";
		return -1;
	}
	if (f->params.duration_s > 0 && !until_stopped(f->params.duration_s)) {
		*err = (fc.duration_s > 0 ? key("duration") : at(c, fc.line, "run.duration")) +
		       "a ping-pong runs a number of round trips (messages), or until stopped (duration 0), not a duration";
		return -1;
	}
	if (until_stopped(f->params.duration_s))
		f->params.messages = kUntilStoppedRoundTripsPerQp * fc.qps;
	else if (fc.messages == 0)
		f->params.messages = kDefaultPingPongIterations;
	if (f->params.messages < fc.qps) {
		*err = key("messages") + std::to_string(f->params.messages) + " round trips cannot keep " + std::to_string(fc.qps) +
		       " QPs busy (one at least on each)";
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
	if (f->share_qps)
		f->params.slices = nl;   // each lane writes (or reads) its own slice of every QP's memory
	if (!f->share_qps && fc.qps % nl != 0) {
		*err = at(c, fc.line, flow + ".qps") + std::to_string(fc.qps) + " QPs do not split evenly over " + std::to_string(nl) +
		       " lanes (or set share_qps = true)";
		return -1;
	}
	const uint32_t need = std::max(2 * fc.signal_every, fc.batch);
	if (f->share_qps && fc.sq_depth / nl < need) {   // left out, it is capped at kMaxSqDepth: the batch is too large
		*err = at(c, fc.line, flow + (fc.sq_depth_given ? ".sq_depth" : fc.signal_given ? ".signal_every" : ".batch")) + "each of the " +
		       std::to_string(nl) + " lanes gets sq_depth / " + std::to_string(nl) + " = " + std::to_string(fc.sq_depth / nl) +
		       " of every shared send queue, below max(batch, 2 x signal_every) = " + std::to_string(need) +
		       (fc.sq_depth_given ? "" : " (sq_depth left out: " + std::to_string(nl) + " x the default, at most " +
						      std::to_string(kMaxSqDepth) + ")");
		return -1;
	}
	for (uint32_t t = 0; t < nl; t++) {
		FlowParams &o = f->lanes[t]->params;
		o = f->params;
		if (f->params.messages)
			o.messages = f->params.messages / nl + (t < f->params.messages % nl);
		o.rate_pps = f->params.rate_pps / nl;
		if (f->share_qps) {
			o.sq_depth = fc.sq_depth / nl;   // its share of every QP's send queue
		} else {
			o.qps = fc.qps / nl;
		}
		if (t > 0) {   // the test hooks act on lane 0's QP 0
			o.corrupt_msg = UINT64_MAX;
			o.bad_rkey_qp = -1;
		}
	}
	return 0;
}

namespace {

/* A flow's window shared by its QPs (FlowParams::flow_window): given, it must be one
 * the flow can keep; left out, it is kDefaultWindow where the flow's default per-QP
 * windows would add up to more (at 33 QPs and up), so that its receiver's SRQ holds
 * the same whatever the QP count. Sends then have no per-QP window but the flow's. */
int plan_flow_window(const PipelineConf &c, GraphFlow *f, std::string *err)
{
	FlowParams &o = f->params;
	const FlowConf &fc = *f->conf;
	const char *why = !verb_consumes_receive(o.verb) ? "its verb consumes no receive at the far end: there is no window to share"
			  : f->form->no_flow_window ? f->form->no_flow_window
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
		if (o.slots_given && verb_info(o.verb).fills_receive) {
			*err = path + "a " + verb_name(o.verb) + " flow with a flow window has no window per QP (its receives are all in the "
				"SRQ, shared): give window or flow_window, not both";
			return -1;
		}
	}
	const bool no_default = f->form->no_default_flow_window && f->form->no_default_flow_window(*f);
	if (!o.flow_window_given)
		o.flow_window = default_flow_window(why == nullptr && !no_default, o.slots_given, o.qps, o.slots);
	if (o.flow_window == 0)
		return 0;
	if (verb_info(o.verb).fills_receive)
		o.slots = o.flow_window;   // a QP may take all of the flow's window: its SRQ receives are the flow's
	o.srq_refill = static_cast<uint32_t>(std::max<uint64_t>(o.batch, flow_inflight(o) / 8));
	return 0;
}

/* This host's part of each flow: its run options, a two-host flow's end here; the
 * command line's test hooks act on the first flow only. */
int plan_flows(const PipelineConf &c, Graph *g, std::string *err)
{
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
		f.params = flow_params(c, fc);
		f.ctl.run = &g->run;
		if (c.hooks.bad_rkey_qp >= static_cast<int>(fc.qps) && i == 0) {
			*err = "--inject-bad-rkey " + std::to_string(c.hooks.bad_rkey_qp) + ": flow '" + fc.name + "' has only " +
			       std::to_string(fc.qps) + " QP(s)";
			return -1;
		}
		if (fc.peer != "loopback") {   // two hosts: this host's end
			f.remote = std::make_unique<RemoteEnd>();
			if (remote_end_init(c, fc, f.remote.get(), err) != 0)
				return -1;
		}
	}
	return 0;
}

GraphFlow *flow_named(Graph *g, const std::string &n)
{
	for (auto &f : g->flows)
		if (f->conf->name == n)
			return f.get();
	return nullptr;
}

/* Each flow's shape, from its rdma_tx stages (several: lanes) and whether it is echoed
 * (an echo stage here, or its server's on another host), and the shape's own plan
 * before its stages are placed. */
int plan_roles(const PipelineConf &c, Graph *g, std::string *err)
{
	std::map<const GraphFlow *, unsigned> ntx;
	std::set<const GraphFlow *> echoed;
	for (const StageConf &sc : c.stages) {
		GraphFlow *f = flow_named(g, sc.flow);
		if (sc.kind->end == FlowEnd::echo)
			echoed.insert(f);
		else if (sc.kind->end == FlowEnd::requester)
			ntx[f]++;
	}
	for (auto &f : g->flows) {
		f->form = flow_shape_of(*f, ntx[f.get()], f->conf->echoed || echoed.count(f.get()));
		if (f->form->plan && f->form->plan(c, f.get(), err) != 0)
			return -1;
	}
	return 0;
}

/* Stages onto lcores, rings between them, each flow's ends and lanes. */
int place_stages(const PipelineConf &c, Graph *g, std::string *err)
{
	for (const RingConf &rc : c.rings) {
		g->rings.push_back(std::make_unique<GraphRing>());
		g->rings.back()->conf = &rc;
	}
	for (const StageConf &sc : c.stages) {
		g->stages.push_back(std::make_unique<GraphStage>());
		GraphStage &s = *g->stages.back();
		s.conf = &sc;
		s.lcore = lcore_of(g, sc.lcore);
		s.flow = sc.flow.empty() ? nullptr : flow_named(g, sc.flow);
		const StageKindOps &kind = kind_ops(sc.kind);
		stage_init(&s.st, kind.ops, sc.name.c_str());
		for (const std::string &o : sc.outputs)
			ring_named(g, o)->producers.push_back(&s);
		for (const std::string &in : sc.inputs)
			ring_named(g, in)->consumers.push_back(&s);
		if (kind.place && kind.place(g, &s, err) != 0)
			return -1;
	}
	return 0;
}

/* What each stage needs of its flow, once every stage is placed (a gen: its share of
 * the flow's messages). */
int plan_stages(Graph *g, std::string *err)
{
	for (auto &s : g->stages) {
		const StageKindOps &kind = kind_ops(s->conf->kind);
		if (kind.plan && kind.plan(g, s.get(), err) != 0)
			return -1;
	}
	return 0;
}

/* What flows through rings must fit the roles at either end. */
int check_ring_flows(Graph *g, const std::vector<uint64_t> &out_count, std::string *err)
{
	for (size_t i = 0; i < g->stages.size(); i++) {
		GraphStage &s = *g->stages[i];
		const StageKindOps &kind = kind_ops(s.conf->kind);
		if (kind.check && kind.check(g, &s, out_count[i], err) != 0)
			return -1;
	}
	return 0;
}

/* Each flow's shape's own refusals (a ping-pong's: check_pingpong). */
int check_shapes(const PipelineConf &c, Graph *g, std::string *err)
{
	for (auto &f : g->flows)
		if (f->form->check && f->form->check(c, *f, err) != 0)
			return -1;
	return 0;
}

/* Test hooks from the command line with a file: they need a flow to act on. */
int check_hooks(const PipelineConf &c, Graph *g, std::string *err)
{
	bool any_uc = false, any_rel_write = false;
	for (auto &f : g->flows) {
		any_uc |= f->params.uc;
		any_rel_write |= f->reliable() && verb_info(f->params.verb).chunkable;
		if (c.hooks.inject_loss > 0 && f->params.uc && !f->reliable() && f->params.post_api == PostApi::wr) {
			*err = "--inject-loss: flow '" + f->conf->name + "' is plain UC posting through ibv_qp_ex; the hook leaves WRs out of ibv_post_send chains";
			return -1;
		}
	}
	if (c.hooks.inject_loss > 0 && !any_uc) {
		*err = "--inject-loss: no flow of " + c.file + " runs over UC (an RC QP cannot skip a message)";
		return -1;
	}
	if (c.hooks.inject_bad_retx_header && !any_rel_write) {
		*err = "--inject-bad-retx-header: no flow of " + c.file + " is a write_imm over UC with software reliability";
		return -1;
	}
	return 0;
}

/* A flow's settings as planned (sizes, windows and the rest derived), for --plant. */
PlantValues plant_values(const GraphFlow &f)
{
	const FlowParams &p = f.params;
	PlantValues v;
	v.set(PlantKey::size, f.conf->max_size());
	v.set(PlantKey::qps, p.qps);
	v.set(PlantKey::batch, p.batch);
	v.set(PlantKey::signal_every, p.signal_every ? p.signal_every : p.batch);
	v.set(PlantKey::sq_depth, p.sq_depth);
	v.set(PlantKey::window, p.slots);
	v.set(PlantKey::flow_window, p.flow_window);
	v.set(PlantKey::inline_send, p.inline_send);
	v.set(PlantKey::fence, p.fence);
	v.set(PlantKey::verb, static_cast<uint8_t>(p.verb));
	v.set(PlantKey::transport, p.uc);
	v.set(PlantKey::post_api, static_cast<uint8_t>(p.post_api));
	v.set(PlantKey::rate, p.rate_pps);
	v.set(PlantKey::messages, static_cast<double>(p.messages));
	v.set(PlantKey::reliability, static_cast<uint8_t>(p.reliability));
	v.set(PlantKey::verify, p.verify);
	return v;
}

/* One plant on a flow it matched: corrupt flips a byte of an early message of lane 0's
 * QP 0 (the --inject-corruption mechanism, per flow); slow caps its rate; wedge crashes
 * the kernel (the VM's: a test of a host that stops answering). Returns what
 * it did, for the run's log. */
std::string plant_act(const PlantSpec &s, GraphFlow *f)
{
	FlowParams &p = f->params;
	if (s.effect == PlantEffect::corrupt) {
		p.corrupt_msg = kPlantCorruptMsg;
		if (!f->lanes.empty())
			f->lanes[0]->params.corrupt_msg = kPlantCorruptMsg;
		const char *unseen = !p.verify			    ? " (verify is off: nothing will notice)"
				     : p.verb == Verb::read || verb_is_atomic(p.verb) ? " (its verb sends no payload: nothing will notice)"
				     : p.verb == Verb::write ? " (a plain write is checked where no later message overwrote its slot: it may go unnoticed)"
							     : "";
		return "message " + std::to_string(kPlantCorruptMsg) + " of its first QP has a byte flipped" + unseen;
	}
	if (s.effect == PlantEffect::wedge)
		return "the kernel not wedged: " + plant_wedge_kernel();
	if (f->form->no_rate)
		return std::string(f->form->no_rate) + ": not slowed";
	const double rate = p.rate_pps > 0 ? std::min(p.rate_pps / 4, kPlantSlowPps) : kPlantSlowPps;
	p.rate_pps = rate;
	for (auto &ln : f->lanes)
		ln->params.rate_pps = rate / static_cast<double>(f->lanes.size());
	return "paced at " + std::to_string(static_cast<uint64_t>(rate)) + " msg/s";
}

/* --plant: each spec against each flow sent from here, once its settings are planned. */
void apply_plants(const PipelineConf &c, Graph *g)
{
	for (auto &f : g->flows) {
		if (!f->tx)
			continue;   // the far end of a two-host flow sends
		for (const PlantSpec &s : c.hooks.plants)
			if (plant_matches(s, plant_values(*f)))
				f->planted.push_back("--plant '" + s.text + "': " + plant_act(s, f.get()));
	}
}

/* Buffers go back where they came from; a stage takes one message size; an lcore and
 * a ring hold so many stages. */
int check_inputs(const PipelineConf &c, Graph *g, std::string *err)
{
	for (auto &s : g->stages) {
		const GraphStage *src = nullptr;
		uint32_t bytes = 0;
		if (!s->conf->inputs.empty() && input_source(g, *s, &src, &bytes, err) != 0)
			return -1;
		const StageKindOps &kind = kind_ops(s->conf->kind);
		if (!s->conf->inputs.empty() && kind.check_input && kind.check_input(g, s.get(), bytes, err) != 0)
			return -1;
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
	return 0;
}

} // namespace

/* A client cannot see its server's receive queues: per-QP ones on its own lcore (as the
 * command line sets both ends) say the server has them too, and takes no flow window. */
bool client_rq_per_qp(const GraphFlow &f)
{
	return f.tx && f.tx->conf && f.tx->conf->rq_per_qp;
}

/* A ping-pong's refusals: a reliable one is stop-and-wait (each echo is the ACK of its
 * ping), and loss is not injected into pings. */
int check_pingpong(const PipelineConf &c, GraphFlow &f, std::string *err)
{
	const FlowConf &fc = *f.conf;
	const std::string path = "flows.[" + std::to_string(&fc - c.flows.data()) + "].";
	const bool acks = f.reliable() && (fc.ack_every != kDefaultAckEvery || fc.ack_us != kDefaultAckUs);
	if (acks) {
		*err = at(c, fc.line, path + (fc.ack_every != kDefaultAckEvery ? "ack_every" : "ack_us")) + "flow '" + fc.name +
		       "' is a ping-pong: each echo acknowledges its ping, no ACKs are sent";
		return -1;
	}
	if (f.params.inject_loss > 0) {
		*err = (fc.inject_loss > 0 ? at(c, fc.line, path + "inject_loss") : std::string("--inject-loss: ")) + "flow '" +
		       fc.name + "' is a ping-pong: no loss is injected into pings (netem loss on a wire is the way)";
		return -1;
	}
	return 0;
}

int graph_plan(const PipelineConf &c, Graph *g, std::string *err)
{
	g->conf = &c;
	if (plan_flows(c, g, err) != 0 || plan_roles(c, g, err) != 0 || place_stages(c, g, err) != 0 ||
	    plan_stages(g, err) != 0)
		return -1;
	for (auto &f : g->flows)
		if (f->form->placed && f->form->placed(c, f.get(), err) != 0)
			return -1;
	if (const GraphStage *x = find_cycle(g)) {
		*err = stage_path(*g, *x) + "stage '" + x->conf->name + "' is reached again by its own output through rings: "
					    "the stages of such a cycle would wait on each other for ever";
		return -1;
	}
	std::vector<uint64_t> out_count;
	derive_origins(g, &out_count);
	if (check_ring_flows(g, out_count, err) != 0 || check_shapes(c, g, err) != 0)
		return -1;
	for (auto &f : g->flows)
		if (plan_flow_window(c, f.get(), err) != 0)
			return -1;
	apply_plants(c, g);
	if (check_hooks(c, g, err) != 0 || check_inputs(c, g, err) != 0)
		return -1;
	size_graph(g);
	if (c.hooks.inject_rnr_lcore >= 0 && !lcore_has_srq(*g, static_cast<unsigned>(c.hooks.inject_rnr_lcore))) {
		*err = "--inject-rnr " + std::to_string(c.hooks.inject_rnr_lcore) +
		       ": no flow receives SENDs on that lcore (no SRQ there to leave empty)";
		return -1;
	}
	g->planned = true;
	return 0;
}

} // namespace rp
