/* The pipeline's shape, before any object exists: where stages, rings and lcores are, what
 * reaches each stage's input, and the paths in the file that errors name. */
#include "pipeline/graph_internal.h"
#include "pipeline/stage_kind.h"

namespace rp {

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

namespace {

const IoContextConf *io_conf(const PipelineConf &c, unsigned lc)
{
	for (const IoContextConf &io : c.io_contexts)
		if (io.lcore == lc)
			return &io;
	return nullptr;
}

} // namespace

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

const GraphStage *tx_of(const Graph *g, const GraphFlow *f)
{
	for (const auto &s : g->stages)
		if (s->flow == f && s->conf->kind->end == FlowEnd::requester)
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
	const CountOf count_of = [&](const GraphStage *p) { return (*out_count)[index[p]]; };
	for (size_t pass = 0; pass <= n; pass++)
		for (size_t i = 0; i < n; i++) {
			GraphStage &s = *g->stages[i];
			const StageKindOps &kind = kind_ops(s.conf->kind);
			if (s.conf->kind->source != BufferSource::upstream) {
				s.origins = {s.flow};
				(*out_count)[i] = kind.made(*g, s, count_of);
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
			if (c->conf->kind->end == FlowEnd::requester)   // its send queues
				n += static_cast<uint64_t>(c->flow->params.qps) * (c->flow->params.sq_depth + c->flow->params.batch);
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
			if (c->conf->kind->checks_payload || has_verify_downstream(g, c, seen))
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
				if (p->conf->kind->source == BufferSource::upstream) {
					todo.push_back(p);
					continue;
				}
				uint32_t b = p->flow->params.msg_bytes;
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
		       (a->conf->kind->source == BufferSource::flow_pool ? a->flow == b->flow : a->lcore == b->lcore);
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
	return kind_ops(src->conf->kind).pool(*src, mrs, dev);
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

} // namespace rp
