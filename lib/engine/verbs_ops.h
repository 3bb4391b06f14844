/* The one seam between the fast path and the NIC: a table of the data-path verbs,
 * shaped like a provider's ops. Setup picks the table once (the real verbs, or a
 * fake in unit tests that records chains and injects completion errors). */
#pragma once

#include <infiniband/verbs.h>

namespace rp {

struct VerbsOps {
	int (*post_send)(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad);
	int (*post_srq_recv)(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad);
	int (*poll_cq)(ibv_cq *cq, int n, ibv_wc *wc);
};

/* libibverbs' inline fast-path calls. */
extern const VerbsOps kIbvOps;

} // namespace rp
