/* Setup of an lcore's verbs resources (its SharedIOContext's objects): one send CQ and
 * one receive CQ shared by all its QPs, an optional SRQ, and RC QPs bound to them. */
#pragma once

#include "verbs/traffic.h"

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

namespace rp {

struct Device;

struct SharedIOContext {
	ibv_cq *send_cq = nullptr;
	ibv_cq *recv_cq = nullptr;
	ibv_srq *srq = nullptr;
	uint32_t send_cq_depth = 0;
	uint32_t recv_cq_depth = 0;
	uint32_t srq_depth = 0;
	ibv_comp_channel *channel = nullptr;   // adaptive polling: the CQs report here
	bool cq_ex = false;                    // CQs made by ibv_create_cq_ex (cq_ex_of() works)
};

/* What an extended CQ must report for the completion dispatch (verbs_ops.cpp). */
inline constexpr uint64_t kCqExWcFlags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM;

/* The ibv_cq_ex behind a CQ made by ibv_create_cq_ex: ibv_cq_ex begins with the
 * members of ibv_cq (ibv_cq_ex_to_cq() is the same cast the other way). */
inline ibv_cq_ex *cq_ex_of(ibv_cq *cq)
{
	return reinterpret_cast<ibv_cq_ex *>(cq);
}

/* srq_depth 0: no SRQ. Depths are checked against the device limits. With
 * `with_channel` the CQs share a new completion channel (for adaptive polling); with
 * `cq_ex` they are extended CQs (ibv_create_cq_ex, kCqExWcFlags). */
int shared_io_context_create(Device &dev, uint32_t send_cq_depth, uint32_t recv_cq_depth,
			uint32_t srq_depth, bool with_channel, bool cq_ex, SharedIOContext *io, std::string *err);
void shared_io_context_destroy(SharedIOContext *io);

struct QpOptions {
	uint32_t sq_depth = 1;
	uint32_t max_inline = 0;     // inline payload bytes the QP must accept
	bool qp_ex = false;          // create with ibv_qp_ex send ops (ibv_wr_*)
	uint8_t rnr_retry = 7;       // 7: retry forever
	uint8_t min_rnr_timer = 12;  // 12: 0.64 ms (the IB encoding)
	bool uc = false;             // unreliable connected: no acks, no RNR, no reads or atomics
	uint8_t retry_cnt = 7;       // RC transport retries (rxe: 7 retries forever, as RNR's 7 does)
	uint32_t rq_depth = 1;       // its own receive queue, where io has no SRQ
	Traffic traffic;             // its flow's class, SL, flow label, hop limit, GID index
	uint32_t qp_index = 0;       // its place in the flow (a spread flow label's offset)
};

/* An RC (or, with o.uc, UC) QP on io's CQs and SRQ, or without one a receive queue of
 * o.rq_depth; left in RESET. */
ibv_qp *rc_qp_create(Device &dev, SharedIOContext &io, const QpOptions &o, std::string *err);

struct RcPeer {
	uint32_t qpn;
	uint32_t psn;
	ibv_gid gid;
};

/* RESET -> INIT -> RTR -> RTS towards `peer`, allowing the remote `access` to our memory
 * (a UC QP takes remote writes only, and none of RC's retry, RNR and atomic settings). */
int rc_qp_connect(Device &dev, ibv_qp *qp, const QpOptions &o, uint32_t local_psn, const RcPeer &peer,
		  int access, std::string *err);

} // namespace rp
