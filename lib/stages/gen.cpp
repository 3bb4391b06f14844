/* gen: makes a flow's messages (its sequence and the pattern of it) in the flow's send
 * pool, at the flow's rate, onto its output ring. A flow's gens share its messages and
 * its rate. */
#include "pipeline/graph_internal.h"
#include "stages/stage_kind.h"

#include "engine/pattern.h"

namespace rp {

namespace {

/* Paced: tokens for the time since the last burst, at most one burst's worth. */
uint64_t gen_due(Stage *s, uint64_t n)
{
	uint64_t now = rte_rdtsc();
	if (now < s->next_tsc)
		return 0;
	uint64_t due = (now - s->next_tsc) / s->tsc_per_msg + 1;
	if (due < n)
		n = due;
	s->next_tsc += n * s->tsc_per_msg;
	if (s->next_tsc + kStageBurst * s->tsc_per_msg < now)
		s->next_tsc = now;   // long stall: no catch-up burst larger than one
	return n;
}

uint32_t gen_burst(Stage *s)
{
	if (s->ctl && s->ctl->ending()) {
		/* The run ends early: what the ring has not taken goes back, nothing more is made. */
		rte_mempool_put_bulk(s->pool, s->held, s->nheld);
		s->nheld = 0;
		s->done.store(true, std::memory_order_release);
		return 0;
	}
	if (!stage_flush_held(s))
		return 0;
	if (s->seq == s->limit) {
		s->done.store(true, std::memory_order_release);
		return 0;
	}
	uint64_t n = s->limit - s->seq;
	if (n > kStageBurst)
		n = kStageBurst;
	if (s->tsc_per_msg && (n = gen_due(s, n)) == 0)
		return 0;
	void *msgs[kStageBurst];
	if (rte_mempool_get_bulk(s->pool, msgs, static_cast<unsigned>(n)) != 0) {
		s->st.pool_empty++;
		return 0;
	}
	for (uint64_t i = 0; i < n; i++)
		self_describing_fill(msgs[i], s->msg_bytes, s->seq + i);
	s->seq += n;
	s->st.msgs += n;
	s->st.bursts++;
	stage_pass_on(s, msgs, static_cast<uint32_t>(n));
	return static_cast<uint32_t>(n);
}

std::vector<GraphStage *> gens_of(Graph *g, const GraphFlow *f)
{
	std::vector<GraphStage *> gens;
	for (auto &s : g->stages)
		if (s->flow == f && s->conf->kind == StageKind::gen)
			gens.push_back(s.get());
	return gens;
}

/* Its share of the flow's messages; the gens keep the flow's rate when they feed its
 * rdma_tx, else the requester does. */
int gen_plan(Graph *g, GraphStage *s, std::string *err)
{
	GraphFlow &f = *s->flow;
	if (f.params.duration_s > 0 || f.params.msg_bytes < 8) {
		*err = stage_path(*g, *s) + (f.params.msg_bytes < 8 ? "a gen stage writes each message's key into its first 8 bytes: flow '" +
			f.conf->name + "' sends " + std::to_string(f.params.msg_bytes) + " B"
			: "a gen stage makes a count of messages: give flow '" + f.conf->name + "' messages, not a duration");
		return -1;
	}
	if (!verb_info(f.params.verb).payload) {
		*err = stage_path(*g, *s) + "a gen stage makes payloads to send: flow '" + f.conf->name + "' uses " +
		       verb_name(f.params.verb) + ", which carries none";
		return -1;
	}
	const std::vector<GraphStage *> gens = gens_of(g, &f);
	const size_t k = std::find(gens.begin(), gens.end(), s) - gens.begin();
	s->st.limit = f.params.messages / gens.size() + (k < f.params.messages % gens.size());
	s->st.msg_bytes = f.params.msg_bytes;
	f.has_gen = true;
	if (f.fed)
		f.params.tx_gen_stage = true;
	return 0;
}

uint64_t gen_made(const Graph &, const GraphStage &s, const CountOf &)
{
	return s.st.limit;
}

uint64_t gen_pool_need(Graph *g, const GraphStage &s)
{
	std::set<const GraphStage *> seen;
	return kStageBurst + downstream_hold(g, &s, &seen);
}

rte_mempool *gen_pool(const GraphStage &s, const MrTable **mrs, Device **dev)
{
	*mrs = &s.flow->objs->tx_mrs;
	*dev = s.flow->tx->dev;
	return s.flow->objs->tx_pool;
}

int gen_wire(Graph *g, GraphStage *s, const StageInput &, std::string *)
{
	s->st.pool = s->flow->objs->tx_pool;
	s->st.ctl = &s->flow->ctl;
	if (s->flow->params.rate_pps > 0) {
		const size_t gens = gens_of(g, s->flow).size();
		s->st.tsc_per_msg = static_cast<uint64_t>(static_cast<double>(rte_get_tsc_hz()) * gens / s->flow->params.rate_pps);
	}
	return 0;
}

std::string gen_describe(const GraphStage &s)
{
	const StageStats &st = s.st.st;
	std::string d = ", made " + std::to_string(st.msgs) + " of " + std::to_string(s.st.limit) + stage_describe_output(s);
	if (st.pool_empty)
		d += ", " + std::to_string(st.pool_empty) + " bursts short of buffers";
	return d;
}

} // namespace

const StageOps kGenStage = {"gen", gen_burst};

extern const StageKindOps kGenKind = {
	.kind = StageKind::gen, .ops = &kGenStage, .plan = gen_plan, .made = gen_made,
	.pool_need = gen_pool_need, .pool = gen_pool, .wire = gen_wire, .describe = gen_describe,
};

} // namespace rp
