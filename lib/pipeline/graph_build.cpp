/* graph_build: from a plan to a built pipeline, in phases: devices, sizes fitted, io
 * contexts, flows connected, rings, stages wired, each lcore's loop. */
#include "pipeline/graph_internal.h"
#include "pipeline/stage_kind.h"

namespace rp {

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
					qps[i] += f->params.qps;
				for (GraphFlow *f : l->responders)   // a lanes flow's far end: counted with its lanes
					qps[i] += f->lanes.empty() ? f->params.qps : 0;
				for (GraphFlow *f : l->pingers)
					qps[i] += f->params.qps;
				for (GraphFlow *f : l->echoers)
					qps[i] += f->params.qps;
				for (GraphLane *ln : l->lanes)   // both ends; shared QPs once
					if (!ln->stage->flow->share_qps || ln == ln->stage->flow->lanes[0].get())
						qps[i] += 2ull * ln->params.qps;
			}
	}
	for (size_t i = 0; i < devs.size(); i++)
		if (qps[i] > static_cast<uint64_t>(devs[i].dev->dev_attr.max_qp)) {
			*err = devs[i].dev->name + ": " + std::to_string(qps[i]) + " QPs needed, the device allows " +
			       std::to_string(devs[i].dev->dev_attr.max_qp);
			return -1;
		}
	for (auto &f : g->flows) {
		if (f->params.post_api == PostApi::wr && f->tx && !f->tx->caps->qp_ex)
			f->params.post_api = PostApi::classic;   // said once by the caller
		g->use_wr |= f->params.post_api == PostApi::wr;
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

/* Each lcore's loop as built: its stages in the order it calls them. */
void log_lcores(const Graph &g)
{
	for (const auto &l : g.lcores) {
		std::string stages;
		for (const auto &s : g.stages)
			if (s->lcore == l.get())
				stages += (stages.empty() ? "" : ", ") + s->conf->name + " (" + s->conf->kind->name + ")";
		RP_LOG(DEBUG, PIPELINE, "rdmapipe: lcore %u runs %s%s\n", l->lcore, stages.c_str(),
		       l->has_io ? ", sharing one io context" : "");
	}
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

namespace {

/* Per lcore with RDMA stages: one io context sized by all of them, its SRQ filled
 * before any QP connects (a client on another host posts once its connections are up). */
int build_io(Graph *g, std::string *err)
{
	for (auto &l : g->lcores)
		if (l->conf && l->has_roles() && make_lcore_io(l.get(), err) != 0)
			return -1;
	for (auto &l : g->lcores) {
		l->starved = static_cast<int>(l->lcore) == g->conf->hooks.inject_rnr_lcore;
		if (l->has_io && fill_lcore_srq(l.get(), l->starved, err) != 0)
			return -1;
	}
	return 0;
}

/* Each flow's objects and roles on its lcores' io contexts. The listening ends of
 * two-host flows listen first (that never blocks), then accept on threads of their
 * own while this host's other flows connect: two hosts that each serve the other a
 * flow would otherwise each wait in its connect for the other's accept. */
int connect_flows(Graph *g, std::string *err)
{
	for (auto &f : g->flows)
		if (f->listens() && remote_listen(f->remote.get(), f->params.qps, *f->end_here()->dev, f->objs.get(), err) != 0) {
			*err = "flow '" + f->conf->name + "': " + *err;
			return -1;
		}
	if (g->listening && g->listening(err) != 0)
		return -1;
	/* Each lcore's control QP before the threads: two ends of reliable flows on one lcore
	 * (a server accepting beside a client connecting) would otherwise both make it. */
	for (auto &f : g->flows)
		if (f->reliable() && f->form->ctrl_first && ensure_ctrl(f->end_here(), err) != 0)
			return -1;
	const size_t nflows = g->flows.size();
	std::vector<std::thread> accepting;
	std::vector<int> accept_rc(nflows, 0);
	std::vector<std::string> accept_err(nflows);
	for (size_t i = 0; i < nflows; i++)
		if (GraphFlow &f = *g->flows[i]; f.listens())
			accepting.emplace_back([g, &f, &accept_rc, &accept_err, i] { accept_rc[i] = flow_setup(g, f, &accept_err[i]); });
	int rc = 0;
	for (auto &f : g->flows)
		if (rc == 0 && !f->listens())
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
	for (auto &f : g->flows) {
		if (f->form->watch)
			f->form->watch(g, *f);
		if (f->form->receive_pools)   // lanes: passive far ends
			f->form->receive_pools(*f);
	}
	return 0;
}

/* Rings with the file's flags. */
int make_rings(const PipelineConf &c, Graph *g, std::string *err)
{
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
	return 0;
}

/* Stages wired to their rings, pools and roles. */
int wire_stages(Graph *g, std::string *err)
{
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
		const StageKindOps &kind = kind_ops(sc.kind);
		if (kind.wire && kind.wire(g, &s, StageInput{pool, mrs, pool_dev, bytes}, err) != 0)
			return -1;
	}
	return 0;
}

/* Each lcore: its roles share its CQs; its stages in file order; it idles as one. */
int make_loops(const PipelineConf &c, Graph *g, std::string *err)
{
	for (auto &l : g->lcores) {
		if (l->has_io && route_lcore(l.get(), err) != 0)
			return -1;
		l->loop.abort = &g->run.abort;
		l->loop.bell = &g->run.bell;
		l->loop.count_cycles = c.run.stage_cycles;
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
	return 0;
}

} // namespace

int graph_build(const PipelineConf &c, const std::vector<GraphDevice> &devs, Graph *g,
		std::string *err)
{
	if (!g->planned && graph_plan(c, g, err) != 0)
		return -1;
	if (assign_devices(c, devs, g, err) != 0 || fit_chunks(g, err) != 0 || fit_device(g, err) != 0)
		return -1;
	if (build_io(g, err) != 0 || connect_flows(g, err) != 0 || make_rings(c, g, err) != 0 || wire_stages(g, err) != 0 ||
	    make_loops(c, g, err) != 0)
		return -1;
	if (log_enabled(RTE_LOG_DEBUG, rp_logtype_pipeline))
		log_lcores(*g);
	return c.hooks.inject_pool_left ? squeeze_pool(g, c.hooks.inject_pool_left, err) : 0;
}

} // namespace rp
