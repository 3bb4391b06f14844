/* Private to the requester's files: requester_burst.h (the fast path: a burst and the
 * send completions it polls), requester.cpp (completions out of the burst, the burst's
 * entry), requester_post.cpp (the post and retire variants, the bursts instantiated),
 * requester_reliable.cpp (UC made reliable in software: ACKs, retransmission,
 * timeouts, restarts) and requester_setup.cpp (setup, the end of a run, what a stall
 * was). Nothing else includes it. */
#pragma once

#include "engine/requester.h"
#include "engine/verbs_ops.h"

#include <cstdint>

namespace rp {

/* Messages of flow f in flight and not yet credited, less those its failed QPs will
 * never see credited. */
inline uint64_t flow_outstanding(const Requester *r, uint32_t f)
{
	const Requester::FlowCredit &fc = r->flow_credit[f];
	const uint64_t live = r->flow_sent[f] - fc.lost;
	return live > fc.credit ? live - fc.credit : 0;
}

/* A reliable flow's chain (new WRs or retransmissions), through the API it posts
 * with; all or nothing either way (a reliable chain's WRs are tracked, not counted). */
inline int post_tracked(Requester *r, RequesterQp &q, ibv_send_wr *head)
{
	ibv_send_wr *bad = nullptr;
	return r->p.post_api == PostApi::wr ? post_send_ex(q.qpx, head) : r->ops->post_send(q.qp, head, &bad);
}

/* requester_post.cpp: the verb's post and retire functions, and where buffers come
 * from; then (at start) the burst's shape for the run (requester_burst.h). */
void pick_for_verb(Requester *r);
void pick_burst(Requester *r);

/* requester.cpp: what the burst leaves out of line (requester_burst.h). */
void on_send_error(Requester *r, uint32_t qi, const ibv_wc &wc);
int take_handed(Requester *r, uint64_t now);
bool bind_more(Requester *r, RequesterQp &q, uint32_t n);

/* requester_reliable.cpp: timeouts once per burst, and a paused QP's restart request. */
int check_timeouts(Requester *r, uint64_t now);
void ask_when_quiet(Requester *r, RequesterQp &q);

/* requester_setup.cpp: a stall's fail_reason, and bound buffers back to the pool. */
const char *describe_stall(Requester *r, const char *why);
void unbind(Requester *r);

} // namespace rp
