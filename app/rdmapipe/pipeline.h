/* Running a pipeline file (-f). In this build a pipeline runs when it has one of these
 * shapes: loopback flows, each with one rdma_tx stage and one rdma_rx stage (the rate
 * run: flows sharing the two lcores' contexts), with gen -> ring -> rdma_tx or
 * rdma_rx -> ring -> verify [-> ring -> sink] on those lcores for one flow; one echo
 * stage (ping-pong); one half of a two-host flow (listen, or peer); or the relay
 * below. Everything else the schema allows is validated by --check but refused here,
 * before EAL starts, with an error that names the setting and says so. */
#pragma once

#include "conf/config.h"
#include "conf/options.h"

#include <string>
#include <vector>

namespace rp {

/* Fills *o (whose test hooks and -q are kept) from the pipeline. Returns 0, or -1
 * with *err = "FILE:LINE: PATH: why it cannot run". */
int pipeline_to_options(const PipelineConf &c, RunOptions *o, std::string *err);

/* The relay: loopback flow `in` arrives at an rdma_rx stage, whose buffers go through a
 * ring to a verify stage and through another ring to the rdma_tx stage of loopback
 * flow `out`, which sends those very buffers on (zero copy) to its own rdma_rx stage,
 * where each is checked again. Five stages on any lcores, with at most one rdma_tx and
 * one rdma_rx stage per lcore (roles on one lcore share its io context). */
struct RelayPlan {
	RunOptions in, out;                  // one flow each; out's buffers are in's receive pool
	unsigned in_tx = 0, in_rx = 0, verify = 0, out_tx = 0, out_rx = 0;   // the stages' lcores
	std::string in_name, out_name, verify_name;
	std::string rx_ring_name, tx_ring_name;   // rdma_rx -> verify, verify -> rdma_tx
	uint32_t rx_ring = 0, tx_ring = 0;        // their sizes
};

/* 1 when c has the relay's shape (a verify stage feeding an rdma_tx stage): then *p is
 * filled, or -1 with *err when it cannot run. 0: c is not a relay. */
int pipeline_to_relay(const PipelineConf &c, const RunOptions &cli, RelayPlan *p, std::string *err);

/* Seed 002's QP-sharing experiment: one loopback flow of N QPs of RDMA READs whose
 * rdma_tx stages are on T lcores (lanes). share_qps: every lane posts to every QP and
 * polls their one send CQ, handing the other lanes' completions over through rings;
 * else lane t owns QPs t, t + T, ... with a send CQ of its own. The far ends are
 * passive: a READ needs nothing from the responder's CPU. */
struct SharePlan {
	RunOptions o;                  // the flow: qps = N, messages over all lanes
	std::vector<unsigned> lanes;   // the rdma_tx stages' lcores
	bool shared = false;
	std::string name;
};

/* 1 when c has that shape (a flow with two or more rdma_tx stages): then *p is filled,
 * or -1 with *err when it cannot run. 0: it is not. */
int pipeline_to_share(const PipelineConf &c, const RunOptions &cli, SharePlan *p, std::string *err);

} // namespace rp
