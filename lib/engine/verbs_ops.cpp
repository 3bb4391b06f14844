#include "engine/verbs_ops.h"

namespace rp {

namespace {
int real_post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **bad) { return ibv_post_send(qp, wr, bad); }
int real_post_srq_recv(ibv_srq *srq, ibv_recv_wr *wr, ibv_recv_wr **bad) { return ibv_post_srq_recv(srq, wr, bad); }
int real_poll_cq(ibv_cq *cq, int n, ibv_wc *wc) { return ibv_poll_cq(cq, n, wc); }
} // namespace

const VerbsOps kIbvOps = {real_post_send, real_post_srq_recv, real_poll_cq};

} // namespace rp
