/* The interface of a stage kind to the pipeline builder: what each kind does in the
 * engine (its burst, StageOps, the fast path, and its hooks into the builder's phases,
 * StageKindOps) and what of the builder a kind may use. lib/pipeline owns it and names
 * no kind; each kind is one file of lib/stages/ that fills a StageKindOps and a
 * StageKindInfo (conf/stage_kinds.h) and registers them (RP_STAGE_KIND_REGISTER). The
 * builder's phases call the hooks in file order; a kind leaves out (nullptr) what it has
 * nothing to do for. Like grout's node registrations and rdma-core's provider ops
 * tables: the builder knows kinds only through these tables and their declared
 * properties. */
#pragma once

#include "conf/stage_kinds.h"
#include "pipeline/graph.h"
#include "pipeline/stage.h"

#include <cstdint>
#include <functional>
#include <set>
#include <string>

struct rte_mempool;

namespace rp {

struct MrTable;
struct Device;

/* What reaches a stage's input: the pool its buffers go back to (registered as mrs on
 * dev), and their size. All nullptr/0 for a stage with no input. */
struct StageInput {
	rte_mempool *pool = nullptr;
	const MrTable *mrs = nullptr;
	Device *dev = nullptr;
	uint32_t bytes = 0;
};

/* The messages each stage's output carries (UINT64_MAX: for a duration). */
using CountOf = std::function<uint64_t(const GraphStage *)>;

struct StageKindOps {
	const StageOps *ops = nullptr;   // its burst
	/* graph_plan, as the file's stages are placed on their lcores in order: the flow's
	 * end it is (s->flow and s->lcore are set, and the flow's shape row, s->flow->form). */
	int (*place)(Graph *g, GraphStage *s, std::string *err) = nullptr;
	/* graph_plan, once every stage is placed: what it needs of its flow. */
	int (*plan)(Graph *g, GraphStage *s, std::string *err) = nullptr;
	/* A source (BufferSource other than upstream): the messages it emits. */
	uint64_t (*made)(const Graph &g, const GraphStage &s, const CountOf &count_of) = nullptr;
	/* graph_plan, once what reaches each input is known (`in`: its count). */
	int (*check)(Graph *g, GraphStage *s, uint64_t in, std::string *err) = nullptr;
	/* graph_plan, last: the size of the messages reaching its input (0: none). */
	int (*check_input)(Graph *g, GraphStage *s, uint32_t bytes, std::string *err) = nullptr;
	/* A source: buffers its pool needs for it beyond one burst (what downstream holds). */
	uint64_t (*pool_need)(Graph *g, const GraphStage &s) = nullptr;
	/* A source: the pool it takes its buffers from, registered as *mrs on *dev. */
	rte_mempool *(*pool)(const GraphStage &s, const MrTable **mrs, Device **dev) = nullptr;
	/* graph_build: wired to its rings' ends, its input's pool, its role. */
	int (*wire)(Graph *g, GraphStage *s, const StageInput &in, std::string *err) = nullptr;
	/* The summary: what its line says after "N messages in B bursts" (nullptr: what
	 * any stage says, stage_describe_output()). */
	std::string (*describe)(const GraphStage &s) = nullptr;
};

/* A kind's hooks. */
inline const StageKindOps &kind_ops(const StageKindInfo *k)
{
	return *k->ops;
}

/* Burst helpers the kinds share (stage.cpp). Offers what is held, then nothing else
 * until the ring took all of it: true when nothing is held. */
bool stage_flush_held(Stage *s);
/* Forwards n messages: what the ring does not take is held for the next burst. */
void stage_pass_on(Stage *s, void **msgs, uint32_t n);
/* Nothing came in: the stage is over once its producers are and its ring is drained. */
uint32_t stage_idle(Stage *s);

/* What the builder offers the kinds' hooks (stage_kind.cpp, graph_topology.cpp). The
 * wiring of a kind that takes its input's buffers (verify, sink, forward): they go back
 * to the input's pool; in order only from one in-order source straight before it. */
int stage_wire_input(Graph *g, GraphStage *s, const StageInput &in, std::string *err);
/* ", N bursts held back by a full ring" for a stage with an output ring, else "". */
std::string stage_describe_output(const GraphStage &s);
/* A stage's summary after "N messages in B bursts": its kind's describe, or the above. */
std::string stage_describe(const GraphStage &s);
/* "FILE:LINE: PATH: " for an error about a setting of c ("" for the command line's
 * pipeline: its message names the flow and the option). */
std::string at(const PipelineConf &c, int line, const std::string &path);
/* "FILE:LINE: stages.[i]: " of a stage, for its errors. */
std::string stage_path(const Graph &g, const GraphStage &s);
/* A flow's (first) rdma_tx stage. */
const GraphStage *tx_of(const Graph *g, const GraphFlow *f);
/* Buffers the stages after s hold at most (their rings and bursts). */
uint64_t downstream_hold(Graph *g, const GraphStage *s, std::set<const GraphStage *> *seen);
/* Whether a stage after s checks each message's payload. */
bool has_verify_downstream(Graph *g, const GraphStage *s, std::set<const GraphStage *> *seen);

} // namespace rp
