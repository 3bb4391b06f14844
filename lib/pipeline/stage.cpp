#include "pipeline/stage.h"

#include "engine/pattern.h"
#include "engine/pingpong.h"
#include "engine/requester.h"
#include "engine/responder.h"

#include <rte_cycles.h>

#include <cstdio>
#include <cstring>
#include <type_traits>

namespace rp {

namespace {

/* Offers what is held, then nothing else until the ring took all of it: order is kept
 * and no message is dropped under back-pressure. Returns true when nothing is held. */
bool flush_held(Stage *s)
{
	if (s->nheld == 0)
		return true;
	unsigned sent = rte_ring_enqueue_burst(s->out, s->held, s->nheld, nullptr);
	if (sent < s->nheld) {
		s->st.out_full++;
		memmove(s->held, s->held + sent, (s->nheld - sent) * sizeof(void *));
	}
	s->nheld -= sent;
	return s->nheld == 0;
}

/* Forwards n messages: what the ring does not take is held for the next burst. */
void pass_on(Stage *s, void **msgs, uint32_t n)
{
	unsigned sent = rte_ring_enqueue_burst(s->out, msgs, n, nullptr);
	if (sent < n) {
		s->st.out_full++;
		memcpy(s->held, msgs + sent, (n - sent) * sizeof(void *));
		s->nheld = n - sent;
	}
}

/* Nothing came in: the stage is over once its producers are and its ring is drained. */
uint32_t idle(Stage *s)
{
	if (s->nheld == 0 && s->nupstream && stage_upstream_done(s) && rte_ring_empty(s->in))
		s->done.store(true, std::memory_order_release);
	return 0;
}

uint32_t source_burst(Stage *s)
{
	if (s->ctl && s->ctl->ending()) {
		/* The run ends early: what the ring has not taken goes back, nothing more is made. */
		rte_mempool_put_bulk(s->pool, s->held, s->nheld);
		s->nheld = 0;
		s->done.store(true, std::memory_order_release);
		return 0;
	}
	if (!flush_held(s))
		return 0;
	if (s->seq == s->limit) {
		s->done.store(true, std::memory_order_release);
		return 0;
	}
	uint64_t n = s->limit - s->seq;
	if (n > kStageBurst)
		n = kStageBurst;
	if (s->tsc_per_msg) {
		uint64_t now = rte_rdtsc();
		if (now < s->next_tsc)
			return 0;
		/* Tokens for the time since the last burst, at most one burst's worth. */
		uint64_t due = (now - s->next_tsc) / s->tsc_per_msg + 1;
		if (due < n)
			n = due;
		s->next_tsc += n * s->tsc_per_msg;
		if (s->next_tsc + kStageBurst * s->tsc_per_msg < now)
			s->next_tsc = now;   // long stall: no catch-up burst larger than one
	}
	void *msgs[kStageBurst];
	if (rte_mempool_get_bulk(s->pool, msgs, static_cast<unsigned>(n)) != 0) {
		s->st.pool_empty++;
		return 0;
	}
	for (uint64_t i = 0; i < n; i++)
		self_describing_fill(msgs[i], s->msg_bytes, s->seq + i);
	s->seq += n;
	s->st.msgs += n;
	s->st.bursts++;
	pass_on(s, msgs, static_cast<uint32_t>(n));
	return static_cast<uint32_t>(n);
}

uint32_t forward_burst(Stage *s)
{
	if (!flush_held(s))
		return 0;
	void *msgs[kStageBurst];
	unsigned n = rte_ring_dequeue_burst(s->in, msgs, kStageBurst, nullptr);
	if (n == 0)
		return idle(s);
	s->st.msgs += n;
	s->st.bursts++;
	pass_on(s, msgs, n);
	return n;
}

uint32_t verify_burst(Stage *s)
{
	if (s->out && !flush_held(s))
		return 0;
	void *msgs[kStageBurst];
	unsigned n = rte_ring_dequeue_burst(s->in, msgs, kStageBurst, nullptr);
	if (n == 0)
		return idle(s);
	for (unsigned i = 0; i < n; i++) {
		uint64_t seq;
		if (self_describing_check(msgs[i], s->msg_bytes, &seq) >= 0)
			s->st.payload_errors++;
		/* Messages of several QPs interleave: then only each one's own content counts. */
		if (s->ordered && seq != s->seq)
			s->st.seq_errors++;
		s->seq = seq + 1;
	}
	s->st.msgs += n;
	s->st.bursts++;
	if (s->out)
		pass_on(s, msgs, n);
	else
		rte_mempool_put_bulk(s->pool, msgs, n);
	return n;
}

uint32_t sink_burst(Stage *s)
{
	void *msgs[kStageBurst];
	unsigned n = rte_ring_dequeue_burst(s->in, msgs, kStageBurst, nullptr);
	if (n == 0)
		return idle(s);
	s->st.msgs += n;
	s->st.bursts++;
	rte_mempool_put_bulk(s->pool, msgs, n);
	return n;
}

/* An RDMA role's loop, one burst at a time. When the role finished, the stage finishes
 * it at once (a requester then tells its responder, on another lcore, that it is done,
 * without waiting for the other stages of its lcore) and is done. */
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
				r->ctl->abort.store(true, std::memory_order_relaxed);
			if (s->in || s->out || s->joined)
				r->ctl->run->abort.store(true, std::memory_order_relaxed);
		}
		s->done.store(true, std::memory_order_release);
	}
	return n;
}

} // namespace

const StageOps kRdmaTxStage = {"rdma_tx", role_burst<Requester, requester_burst, requester_finish>, true};
const StageOps kRdmaRxStage = {"rdma_rx", role_burst<Responder, responder_burst, responder_finish>, true};
const StageOps kPingStage = {"rdma_tx", role_burst<PingPong, pingpong_burst, pingpong_finish>, true};
const StageOps kEchoStage = {"echo", role_burst<PingPong, pingpong_burst, pingpong_finish>, true};
const StageOps kSourceStage = {"gen", source_burst};
const StageOps kForwardStage = {"forward", forward_burst};
const StageOps kVerifyStage = {"verify", verify_burst};
const StageOps kSinkStage = {"sink", sink_burst};

void stage_init(Stage *s, const StageOps *ops, const char *name)
{
	s->ops = ops;
	snprintf(s->name, sizeof(s->name), "%s", name);
}

bool stage_feed(Stage *s, const Stage *from)
{
	if (s->nupstream == kMaxUpstreams)
		return false;
	s->upstream[s->nupstream++] = from;
	return true;
}

bool stage_upstream_done(const Stage *s)
{
	for (uint32_t i = 0; i < s->nupstream; i++)
		if (!s->upstream[i]->done.load(std::memory_order_acquire))
			return false;
	return true;
}

} // namespace rp
