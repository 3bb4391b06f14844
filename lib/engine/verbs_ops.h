/* The one seam between the fast path and the NIC: a table of the data-path verbs,
 * shaped like a provider's ops. Setup picks the table once (the real verbs, or a
 * fake in unit tests that records chains and injects completion errors). */
#pragma once

#include <infiniband/verbs.h>

namespace rp {

struct VerbsOps {
	int (*post_send)(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad);
	int (*post_srq_recv)(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad);
	int (*post_recv)(ibv_qp *qp, ibv_recv_wr *wr, ibv_recv_wr **bad);   // a QP's own receive queue
	int (*poll_cq)(ibv_cq *cq, int n, ibv_wc *wc);
	/* Error recovery of a UC QP, in two steps some time apart: stop_qp moves it to ERR,
	 * restart_qp back through RESET to RTS with the attributes it had (each 0, or
	 * -errno). rxe's responder, with an SRQ, never leaves a multi-packet message broken
	 * by a loss (its class E error keeps the message's opcode, so every later message is
	 * dropped), and a reset is what clears it; see responder.cpp for why not at once. */
	int (*stop_qp)(ibv_qp *qp);
	int (*restart_qp)(ibv_qp *qp);
};

/* A chain of ibv_send_wr posted through ibv_qp_ex (ibv_wr_start .. ibv_wr_complete,
 * one doorbell): sends, sends and writes with immediate, one SGE each. All or
 * nothing: 0, or an errno and nothing posted. Not the list setters: rxe before
 * rdma-core 54.5 sums ibv_wr_set_sge_list's lengths wrongly (the first SGE's, times
 * their count) and ibv_wr_set_inline_data_list's to 0. */
int post_send_ex(ibv_qp_ex *x, const ibv_send_wr *head);

/* libibverbs' inline fast-path calls. */
extern const VerbsOps kIbvOps;

/* The same, but completions are read through the extended CQ API (ibv_start_poll,
 * ibv_next_poll, ibv_end_poll) into the same ibv_wc array, so the dispatch code is
 * shared. Only for CQs made by ibv_create_cq_ex with kCqExWcFlags. */
extern const VerbsOps kIbvCqExOps;
/* The same for providers whose ibv_next_poll ends the batch itself on ENOENT (rxe in
 * rdma-core 44 and later: see DeviceCaps::next_poll_ends_batch). */
extern const VerbsOps kIbvCqExRxeOps;

} // namespace rp

namespace rp {

/* Roles on one lcore share its SharedIOContext's CQs: whichever of them polls a CQ
 * hands each completion of a QP it does not own on through this (to the lcore's
 * CqRouter, which finds the owner). All run on the same lcore, so this needs no
 * synchronisation. */
struct CqPeer {
	void (*on_wc)(void *role, const ibv_wc &wc, uint64_t now) = nullptr;
	void *role = nullptr;
};

} // namespace rp
