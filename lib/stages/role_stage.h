/* The burst of a stage that runs an RDMA role (rdma_tx's Requester or PingPong,
 * rdma_rx's Responder, echo's PingPong): one role burst per stage burst. When the role
 * finished, the stage finishes it at once (a requester then tells its responder, on
 * another lcore, that it is done, without waiting for the other stages of its lcore)
 * and is done. */
#pragma once

#include "engine/pingpong.h"
#include "engine/requester.h"
#include "engine/responder.h"
#include "pipeline/stage.h"

#include <rte_ring.h>

#include <type_traits>

namespace rp {

template <typename Role, uint32_t (*Burst)(Role *), int (*Finish)(Role *)>
uint32_t role_burst(Stage *s)
{
	auto *r = static_cast<Role *>(s->ctx);
	if (s->done.load(std::memory_order_relaxed))
		return 0;
	uint32_t n = Burst(r);
	/* Its objects are messages: posted by a requester, received by a responder (also
	 * those another role of the lcore polled for it). n counts completions too. */
	s->st.bursts += n != 0;
	if constexpr (std::is_same_v<Role, PingPong>) {
		s->st.msgs = r->echo ? r->c.received : r->sent;
	} else if constexpr (std::is_same_v<Role, Requester>) {
		s->st.msgs = r->c.sent;
		/* Fed: nothing more will come once the producers are done and the ring is dry. */
		if (n == 0 && s->in && !r->finished && stage_upstream_done(s) && rte_ring_empty(s->in))
			requester_input_ended(r);
	} else {
		s->st.msgs = r->c.received;
	}
	if (r->finished) {
		s->rc = Finish(r);
		/* A role that failed before its end stops its flow's requester (which would
		 * only wait for its credit; a requester that ends tells the responder itself),
		 * and, joined to other stages by rings, the run (they would wait on it for
		 * ever). One that saw everything through, with bad payloads counted, stops
		 * nothing: the stages after it finish what it handed on. */
		if (s->rc != 0 && (r->c.fail_reason != nullptr || r->c.wc_errors.total != 0)) {
			if constexpr (!std::is_same_v<Role, Requester>)
				r->ctl->abort_now();
			if (s->in || s->out || s->joined)
				r->ctl->run->abort_now();
		}
		s->done.store(true, std::memory_order_release);
	}
	return n;
}

} // namespace rp
