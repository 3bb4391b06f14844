/* One flow as the builder and its roles run it: the file's FlowConf resolved against the
 * run (its count or duration, results, warm-up), the pipeline's test hooks where they act
 * on it, and what the builder derives (windows fitted to the device, chunks from the path
 * MTU, per-QP receive queues, a lane's share). Made from a PipelineConf only
 * (flow_params, graph_plan.cpp): the command line is a PipelineConf too. */
#pragma once

#include "conf/config.h"

#include <cstdint>

namespace rp {

struct FlowParams {
	Verb verb = Verb::write_imm;
	uint32_t qps = 1;
	uint32_t msg_bytes = 64;
	uint64_t messages = 0;          // 0 with duration_s 0: sends what its input ring brings
	double duration_s = 0;
	double rate_pps = 0;            // kept by its gens when they feed it, else by the requester
	uint32_t batch = 32;            // WRs per chain
	uint32_t signal_every = 0;
	uint32_t sq_depth = 0;
	bool batch_given = false, signal_given = false;
	uint32_t slots = 0;             // per QP: messages the responder holds before giving credit back
	bool slots_given = false;
	uint32_t srq_refill = 0;
	uint32_t flow_window = 0;       // over the flow's QPs (0: per-QP windows alone)
	bool flow_window_given = false;
	bool verify = true;
	bool uc = false;
	Reliability reliability = Reliability::none;
	uint32_t ack_every = kDefaultAckEvery, ack_us = kDefaultAckUs;
	uint32_t chunk = kChunkAuto;    // as the file says; chunk_bytes: in force (fit_chunks)
	uint32_t chunk_bytes = 0;
	uint32_t wr_budget = 0;         // WRs outstanding over its QPs at most (fit_send_cq; 0: none)
	uint32_t rq_depth = 0, rq_refill = 0;   // per-QP receive queues (recv_queue = "qp")
	uint32_t slices = 1;            // lanes sharing its QPs: a slice of the far end's memory each
	PostApi post_api = PostApi::classic;
	bool inline_send = false;
	bool fence = false;
	uint8_t rnr_retry = 7, retry_cnt = 7, min_rnr_timer = 12;
	Traffic traffic;                // on every QP of the flow (its service QPs too)
	ConnectPath connect = ConnectPath::cm;
	int connect_timeout_ms = 10000;   // a loopback's rdma_cm connections wait this long (run.connect_timeout)
	double stall_timeout_s = 10;
	bool quiet = false;
	double warmup_s = 0;
	uint32_t pool_count = 0, pool_cache = 0;   // its pool in the file (0: the builder's sizing)
	bool tx_gen_stage = false;      // gens feeding it keep its rate
	bool tx_count_from_input = false;   // fed by a duration's flows: it sends until its input ends
	/* The pipeline's test hooks (HooksConf), on its first flow only. */
	uint64_t corrupt_msg = UINT64_MAX;
	int bad_rkey_qp = -1;
	double inject_loss = 0;
	bool inject_bad_retx_header = false;
};

} // namespace rp
