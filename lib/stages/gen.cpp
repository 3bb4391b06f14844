/* gen: makes a flow's messages (its sequence and the pattern of it) in the flow's send
 * pool, at the flow's rate, onto its output ring: its count or, for a flow that runs
 * for a duration, as many as that time makes. A flow's gens share its messages and
 * its rate. */
#include "pipeline/stage_kind.h"
#include "stages/stages.h"

#include "engine/pattern.h"

namespace rp {

namespace {

extern const StageKindInfo kGenKind;   // this file's kind, below

/* Paced: tokens for the time since the last burst, at most one burst's worth. */
uint64_t gen_due(Stage *s, uint64_t n, uint64_t now)
{
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

/* Whether to make no more: its count made, the run ending (the console's quit) or,
 * timed, its duration over. */
template <bool Timed>
inline bool gen_over(const Stage *s, uint64_t now)
{
	if (s->seq == s->limit || (s->ctl && s->ctl->ending()))
		return true;
	if constexpr (Timed)
		return now >= s->deadline_tsc;
	return false;
}

/* What it made it hands on whole (the stages after it finish those, so that what its
 * flow sent is what it made); then it makes nothing more and is done. Its clock (the
 * duration, the rate) starts at its first burst, as a requester's at its start:
 * paced, that burst makes one message, not a burst's worth. */
template <bool Timed>
uint32_t gen_burst(Stage *s)
{
	const uint64_t now = Timed || s->tsc_per_msg || s->start_tsc == 0 ? rte_rdtsc() : 0;
	if (s->start_tsc == 0) {
		s->start_tsc = s->next_tsc = now;
		s->deadline_tsc = now + s->duration_tsc;
	}
	if (!stage_flush_held(s))
		return 0;
	if (gen_over<Timed>(s, now)) {
		s->end_tsc = rte_rdtsc();
		s->done.store(true, std::memory_order_release);
		return 0;
	}
	uint64_t n = s->limit - s->seq;
	if (n > kStageBurst)
		n = kStageBurst;
	if (s->tsc_per_msg && (n = gen_due(s, n, now)) == 0)
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
		if (s->flow == f && s->conf->kind == &kGenKind)
			gens.push_back(s.get());
	return gens;
}

/* Its share of the flow's messages, or, for a flow that runs for a duration (its own
 * or the run's), messages for that long; the gens keep the flow's rate when they feed
 * its rdma_tx, else the requester does. */
int gen_plan(Graph *g, GraphStage *s, std::string *err)
{
	GraphFlow &f = *s->flow;
	if (f.params.msg_bytes < 8) {
		*err = stage_path(*g, *s) + "a gen stage writes each message's key into its first 8 bytes: flow '" + f.conf->name +
		       "' sends " + std::to_string(f.params.msg_bytes) + " B";
		return -1;
	}
	if (!verb_info(f.params.verb).payload) {
		*err = stage_path(*g, *s) + "a gen stage makes payloads to send: flow '" + f.conf->name + "' uses " +
		       verb_name(f.params.verb) + ", which carries none";
		return -1;
	}
	const std::vector<GraphStage *> gens = gens_of(g, &f);
	const size_t k = std::find(gens.begin(), gens.end(), s) - gens.begin();
	if (f.params.duration_s > 0) {
		s->duration_s = f.params.duration_s;
		s->st.limit = UINT64_MAX;
	} else {
		s->st.limit = f.params.messages / gens.size() + (k < f.params.messages % gens.size());
	}
	s->st.msg_bytes = f.params.msg_bytes;
	f.has_gen = true;
	if (f.fed)
		f.params.tx_gen_stage = true;
	return 0;
}

/* Its share of a count, or a duration's (UINT64_MAX). */
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
	const double hz = static_cast<double>(rte_get_tsc_hz());
	s->st.pool = s->flow->objs->tx_pool;
	s->st.ctl = &s->flow->ctl;
	if (s->flow->params.rate_pps > 0) {
		const size_t gens = gens_of(g, s->flow).size();
		s->st.tsc_per_msg = static_cast<uint64_t>(hz * static_cast<double>(gens) / s->flow->params.rate_pps);
	}
	if (s->duration_s > 0) {   // the variant that watches the clock
		s->st.ops = &kTimedGenStage;
		s->st.duration_tsc = static_cast<uint64_t>(s->duration_s * hz);
	}
	return 0;
}

/* What it made over how long (its rate, as measured), and of what it was asked. */
std::string gen_describe(const GraphStage &s)
{
	const StageStats &st = s.st.st;
	std::string d = ", made " + std::to_string(st.msgs);
	if (s.duration_s == 0)
		d += " of " + std::to_string(s.st.limit);
	const Stage &x = s.st;
	if (x.end_tsc > x.start_tsc && x.start_tsc) {
		const double secs = static_cast<double>(x.end_tsc - x.start_tsc) / static_cast<double>(rte_get_tsc_hz());
		char buf[96];
		snprintf(buf, sizeof(buf), " in %.3f s (%.0f msg/s", secs, static_cast<double>(st.msgs) / secs);
		d += buf;
		if (x.tsc_per_msg)
			d += ", paced at " + std::to_string(static_cast<uint64_t>(static_cast<double>(rte_get_tsc_hz()) / static_cast<double>(x.tsc_per_msg)));
		d += ")";
	}
	d += stage_describe_output(s);
	if (st.pool_empty)
		d += ", " + std::to_string(st.pool_empty) + " bursts short of buffers";
	return d;
}

} // namespace

const StageOps kGenStage = {.kind = "gen", .burst = gen_burst<false>, .in_order = true};
const StageOps kTimedGenStage = {.kind = "gen", .burst = gen_burst<true>, .in_order = true};

namespace {

const StageKindOps kGenOps = {.ops = &kGenStage, .plan = gen_plan, .made = gen_made,
	.pool_need = gen_pool_need, .pool = gen_pool, .wire = gen_wire, .describe = gen_describe,
};

const StageKindInfo kGenKind = {
	.name = "gen", .article = "a", .in = kNoRing, .out = kOneRing,
	.needs_flow = true, .needs_io = false, .end = FlowEnd::none, .source = BufferSource::flow_pool,
	.checks_payload = false, .writes_file = false,
	.what = "makes a flow's messages (sequence and pattern) in its send pool, at its rate",
	.ops = &kGenOps,
};

} // namespace

RP_STAGE_KIND_REGISTER(kGenKind)

} // namespace rp
