/* The pipeline builder's phases (graph.h's graph_plan, graph_build, graph_lcore_run),
 * one file each, and what they share. Private to lib/pipeline:
 *   graph_topology  where stages, rings and lcores are; what reaches each input
 *   graph_plan      flows and stages placed, ping-pongs, lanes, flow windows, checks
 *   graph_sweep     one pipeline per step of a size sweep
 *   graph_size      io contexts, SRQs and pools sized, then fitted to the devices
 *   graph_io        io contexts made and filled, completion routers
 *   graph_flows     each flow's objects and roles, software reliability's control QPs
 *   graph_build     the phases above in order, rings, stages wired, lcore loops
 *   graph_launch    an lcore's job; what main reads and stops while they run */
#pragma once

#include "pipeline/graph.h"
#include "pipeline/stage_kind.h"
#include "conf/cli_pipeline.h"
#include "engine/verbs_ops.h"
#include "log/log.h"

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace rp {

/* A ping-pong's receives are reposted in batches of this many. */
inline constexpr uint32_t kPingPongRefill = 16;

/* graph_topology.cpp (and what the kinds may use of it: stage_kind.h) */
GraphLcore *lcore_of(Graph *g, unsigned lc);   // made on first use
GraphRing *ring_named(Graph *g, const std::string &name);
void derive_origins(Graph *g, std::vector<uint64_t> *out_count);
const GraphStage *find_cycle(Graph *g);
int input_source(Graph *g, const GraphStage &s, const GraphStage **source, uint32_t *bytes, std::string *err);
rte_mempool *source_pool(const GraphStage *src, const MrTable **mrs, Device **dev);

/* graph_size.cpp */
uint64_t flow_receives(const GraphFlow *f);
void size_graph(Graph *g);
int fit_chunks(Graph *g, std::string *err);
int fit_device(Graph *g, std::string *err);

/* graph_io.cpp */
int make_lcore_io(GraphLcore *l, std::string *err);
bool lcore_has_srq(const Graph &g, unsigned lcore);
int fill_lcore_srq(GraphLcore *l, bool starve, std::string *err);
int fill_flow_rqs(GraphLcore *l, GraphFlow &f, std::string *err);
int check_lcore_rqs(GraphLcore *l, std::string *err);
int route_lcore(GraphLcore *l, std::string *err);

/* graph_flows.cpp */
int ensure_ctrl(GraphLcore *l, std::string *err);
int flow_setup(Graph *g, GraphFlow &f, std::string *err);
int reliability_setup(Graph *g, std::string *err);

/* The shapes' hooks (flow_shape.h; flow_shape.cpp's rows), from the phases' files:
 * graph_plan.cpp */
int plan_pingpong(const PipelineConf &c, GraphFlow *f, std::string *err);
int plan_lanes(const PipelineConf &c, GraphFlow *f, std::string *err);
int check_pingpong(const PipelineConf &c, GraphFlow &f, std::string *err);
bool client_rq_per_qp(const GraphFlow &f);
/* graph_size.cpp */
int fit_lanes(Graph *g, GraphFlow *f, std::string *said, std::string *err);
/* graph_io.cpp */
std::vector<ibv_qp *> pingpong_rq_qps(const GraphFlow &f, const GraphLcore *l);
std::vector<ibv_qp *> responder_rq_qps(const GraphFlow &f, const GraphLcore *l);
/* graph_flows.cpp */
int loopback_setup(Graph *g, GraphFlow &f, std::string *err);
int client_setup(Graph *g, GraphFlow &f, std::string *err);
int server_setup(Graph *g, GraphFlow &f, std::string *err);
int pingpong_shape_setup(Graph *g, GraphFlow &f, std::string *err);
int lanes_shape_setup(Graph *g, GraphFlow &f, std::string *err);
void roles_ready(GraphFlow &f);
int loopback_reliability(Graph *g, GraphFlow &f, std::string *err);
int client_reliability(Graph *g, GraphFlow &f, std::string *err);
int server_reliability(Graph *g, GraphFlow &f, std::string *err);
void watch_server(Graph *g, GraphFlow &f);
void watch_client(Graph *g, GraphFlow &f);
void watch_pingpong(Graph *g, GraphFlow &f);
void responder_pool(GraphFlow &f);
void pingpong_pools(GraphFlow &f);

} // namespace rp
