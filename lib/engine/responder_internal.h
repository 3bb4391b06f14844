/* Private to the responder's files: responder.cpp (the burst: each completion checked,
 * its buffer handed on or given back, credit or ACKs returned; the run's end and its
 * checks), responder_credit.cpp (credit writes, each QP's and the flow's, and their
 * completions), responder_reliable.cpp (UC made reliable in software: sequences, the
 * window, ACKs, restarts) and responder_setup.cpp (init, QPs, start). Nothing else
 * includes it. What the burst calls per message is inline here; what it calls per burst
 * or less is out of line in its file. */
#pragma once

#include "engine/pattern.h"
#include "engine/pattern_match.h"
#include "engine/responder.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace rp {

/* What a QP's sender may count as consumed: what arrived, or with an output ring what
 * the ring took (so a full ring holds the sender back at its window). */
inline uint64_t consumed_of(const Responder *r, const ResponderQp &q)
{
	return r->out ? q.handed : q.received;
}

/* responder.cpp: a payload that differs from its pattern, counted (off the hot path). */
[[gnu::noinline, gnu::cold]] void payload_bad(Responder *r, uint32_t qi, uint64_t seq, ptrdiff_t bad);

/* Message seq of QP qi's payload at data; a verify stage downstream may check it
 * instead (self-describing format). False (counted) when it differs. */
inline bool payload_ok(Responder *r, uint32_t qi, uint64_t seq, const unsigned char *data)
{
	if (r->payload_check == Responder::PayloadCheck::none)
		return true;
	uint64_t key;
	const bool self = r->payload_check == Responder::PayloadCheck::self_describing;
	if (self) {
		memcpy(&key, data, sizeof(key));
		if (pattern_matches(r->matcher, data + 8, r->p.msg_bytes - 8, key)) [[likely]]
			return true;
	} else if (pattern_matches(r->matcher, data, r->p.msg_bytes, msg_key(qi, seq))) [[likely]] {
		return true;
	}
	/* Where it differs (the slow path). */
	payload_bad(r, qi, seq, self ? self_describing_check(data, r->p.msg_bytes, &key)
				     : pattern_check(data, r->p.msg_bytes, msg_key(qi, seq)));
	return false;
}

/* A SEND's receive buffer (hand_on: its message is one to pass on): on to the next
 * stage, which checks the payload and frees it; else back to the pool, in one bulk put
 * per burst (give_back_buffers), before the refill takes them again. At most a poll
 * burst is collected between two give-backs. The window bounds what is held (credit
 * counts what the ring took); a sender beyond it is counted. */
inline void recv_buffer_done(Responder *r, uint32_t qi, void *buf, bool hand_on)
{
	if (r->out && hand_on && r->nheld < r->held_cap) {
		r->held[r->nheld] = buf;
		r->held_qp[r->nheld++] = qi;
		return;
	}
	if (r->out && hand_on)
		r->c.held_overflow++;
	r->freed[r->nfreed++] = buf;
}

/* responder.cpp: the busy burst for r's variants (responder_start sets r->busy). */
decltype(Responder::busy) responder_busy_for(const Responder *r);

/* responder_credit.cpp: what return_credit (the burst) and the run's end call. */
int send_credit(Responder *r, uint32_t qi);
int send_flow_credit(Responder *r, uint64_t now);
int poll_credit_completions(Responder *r);

/* responder_reliable.cpp: a receive completion of a reliable flow's QP; its ACKs. */
[[gnu::noinline]] void on_recv_rel(Responder *r, uint32_t qi, const ibv_wc &wc, uint64_t now);
int send_acks(Responder *r, uint64_t now);

} // namespace rp
