#include "engine/pingpong.h"
#include "engine/pattern_match.h"

#include "engine/pattern.h"
#include "engine/cq_router.h"
#include "engine/recv_check.h"

#include <rte_atomic.h>
#include <rte_cycles.h>
#include <rte_mempool.h>

#include <algorithm>
#include <cerrno>

namespace rp {

namespace {

constexpr uint32_t kPollBurst = 16;
constexpr unsigned kQpShift = 40;   // wr_id: QP index above, sequence below
constexpr uint64_t kSeqBits = (1ull << kQpShift) - 1;

void fail(PingPong *s, const char *why)
{
	if (s->c.fail_reason == nullptr)
		s->c.fail_reason = why;
	s->finished = true;
}

/* Posts message seq of QP qi from buf (a new one, or a repeat of it): wr_id and
 * signalling count posts, the immediate carries seq; a write goes to the QP's slot at
 * the far end. */
template <Verb V>
int post_one(PingPong *s, uint32_t qi, void *buf, uint64_t seq)
{
	PingPongQp &q = s->qps[qi];
	const uint64_t k = q.posts;
	q.inflight[k & s->inflight_mask] = buf;
	ibv_send_wr *bad = nullptr;
	const bool last = seq + 1 == q.target;
	ibv_send_wr *wr = s->chain.build<V>(seq, 1, &buf, *s->tx_mrs, last, q.peer);
	wr->wr_id = k | (static_cast<uint64_t>(qi) << kQpShift);
	wr->send_flags = (wr->send_flags & ~IBV_SEND_SIGNALED) |
			 (wr_signalled(k, s->p.signal_every) || last ? IBV_SEND_SIGNALED : 0);
	int ret = s->ops->post_send(q.qp, wr, &bad);
	s->chain.relink(1);
	s->post_calls++;
	if (ret != 0)
		return -ret;
	q.posts++;
	return 0;
}

int post_send_one(PingPong *s, uint32_t qi, void *buf, uint64_t seq)
{
	switch (s->p.verb) {
	case Verb::send_imm:
		return post_one<Verb::send_imm>(s, qi, buf, seq);
	case Verb::write:
		return post_one<Verb::write>(s, qi, buf, seq);
	default:
		return post_one<Verb::send>(s, qi, buf, seq);
	}
}

/* Where the buffers of this side's sends go back: writes echo from their slots. */
rte_mempool *send_pool(const PingPong *s)
{
	return !s->echo ? s->tx_pool : s->polls_memory ? nullptr : s->rx_pool;
}

uint8_t *slot_of(const PingPong *s, uint32_t qi)
{
	return s->slots + static_cast<size_t>(qi) * s->slot_stride;
}

/* A send completion of QP qi: a signalled one returns every send buffer up to it. */
void on_send(PingPong *s, const ibv_wc &wc)
{
	const uint32_t qi = static_cast<uint32_t>(wc.wr_id >> kQpShift);
	if (qi >= s->nqps) {
		s->c.unknown_qps++;
		return;
	}
	if (wc.status != IBV_WC_SUCCESS) {
		s->c.wc_errors.count(wc);
		s->live.errors.store(s->c.wc_errors.total, std::memory_order_relaxed);
		fail(s, "send completion error");
		return;
	}
	PingPongQp &q = s->qps[qi];
	const uint64_t upto = wc.wr_id & kSeqBits;
	if (upto < q.send_completed || upto >= q.posts)
		return;
	if (rte_mempool *pool = send_pool(s))
		for (uint64_t k = q.send_completed; k <= upto; k++)
			rte_mempool_put(pool, q.inflight[k & s->inflight_mask]);
	q.send_completed = upto + 1;
}

/* Checks arrival seq of QP qi: opcode, immediate, length, payload. */
void check_arrival(PingPong *s, uint32_t qi, const ibv_wc &wc, void *buf, uint64_t seq, bool *last)
{
	ResponderCounters &c = s->c;
	bool ok = recv_header_ok(c, wc, s->p.verb, seq, s->p.msg_bytes, last);
	if (ok && s->p.verify && !pattern_matches(buf, s->p.msg_bytes, msg_key(qi, seq))) [[unlikely]] {
		c.payload_errors++;
		c.bad(qi, seq, pattern_check(buf, s->p.msg_bytes, msg_key(qi, seq)));   // where
		ok = false;
	}
	if (ok)
		c.verified++;
	else
		c.bad(qi, seq, -1);
	c.received++;
	c.bytes += wc.byte_len;
}

/* The echoing side sends ping seq of QP qi straight back, from its buffer. */
void echo_back(PingPong *s, uint32_t qi, void *buf, uint64_t seq)
{
	PingPongQp &q = s->qps[qi];
	/* The pinging side waits for this echo before its next ping, so the send queue
	 * only fills with sends not yet reaped: reap them here. */
	while (q.posts - q.send_completed >= s->p.sq_depth && !s->finished) {
		ibv_wc wc[kPollBurst];
		int n = s->ops->poll_cq(s->send_cq, kPollBurst, wc);
		if (n < 0)
			fail(s, "ibv_poll_cq on the send CQ failed");
		for (int i = 0; i < n; i++)
			if (s->table.find(wc[i].qp_num) != QpTable::kNone)
				on_send(s, wc[i]);
			else if (s->send_peer.on_wc)
				s->send_peer.on_wc(s->send_peer.role, wc[i], 0);
		if (rte_rdtsc() - s->last_progress > s->p.stall_tsc)
			fail(s, "stalled: no send completion");
	}
	if (s->finished || post_send_one(s, qi, buf, seq) != 0) {
		fail(s, "ibv_post_send (echo) failed");
		if (rte_mempool *pool = send_pool(s))
			rte_mempool_put(pool, buf);
	}
}

/* Reliable: an arrival that repeats the last message of QP qi (a ping sent again, or
 * the echo of one) is not new. The echoing side echoes it again (the pinging side
 * would not repeat a ping whose echo it had), the pinging side drops it. */
bool repeated(PingPong *s, uint32_t qi, const ibv_wc &wc, void *buf)
{
	const PingPongQp &q = s->qps[qi];
	if (!s->p.reliable || q.arrived == 0 || wc.status != IBV_WC_SUCCESS || !(wc.wc_flags & IBV_WC_WITH_IMM))
		return false;
	const uint64_t prev = q.arrived - 1;
	if ((ntohl(wc.imm_data) & kImmSeqMask) != (prev & kImmSeqMask))
		return false;
	s->duplicates++;
	if (s->echo) {
		s->last_progress = rte_rdtsc();   // a repeat keeps a lingering echo side there
		echo_back(s, qi, buf, prev);
	} else {
		rte_mempool_put(s->rx_pool, buf);
	}
	return true;
}

/* Message arrived - 1 of QP qi is in, checked, at buf: the echoing side sends it back
 * from there, the pinging side times the last round trip. */
void took(PingPong *s, uint32_t qi, void *buf, uint64_t now)
{
	PingPongQp &q = s->qps[qi];
	s->last_progress = now;
	s->c.end_tsc = now;
	if (s->echo) {
		q.sent++;
		s->sent++;
		echo_back(s, qi, buf, q.arrived - 1);
		return;
	}
	if (!s->polls_memory)
		rte_mempool_put(s->rx_pool, buf);
	if (s->p.reliable) {
		if (q.rto.backoff == 0)   // Karn: a repeated ping's echo times nothing
			q.rto.sample(now - q.t_sent);
		q.rto.progressed();
	}
	if (q.arrived == q.target)   // the last iteration: post to its echo
		s->hist->record(static_cast<uint64_t>(static_cast<double>(now - q.t_post) * 1e9 /
						      static_cast<double>(s->p.tsc_hz) / 2));
}

void on_recv(PingPong *s, uint32_t qi, const ibv_wc &wc, uint64_t now)
{
	void *buf = reinterpret_cast<void *>(wc.wr_id);
	if (wc.status != IBV_WC_SUCCESS) {
		s->c.wc_errors.count(wc);
		if (buf)
			rte_mempool_put(s->rx_pool, buf);
		fail(s, "receive completion error");
		return;
	}
	PingPongQp &q = s->qps[qi];
	if (repeated(s, qi, wc, buf))
		return;
	if (s->echo && s->c.received == 0)
		s->c.start_tsc = now;
	bool last = false;   // the pinging side's last ping of this QP (it knows its count; the echoing side, until stopped, learns it so)
	check_arrival(s, qi, wc, buf, q.arrived, &last);
	q.arrived++;
	if (s->echo && last && s->p.until_stopped)
		q.target = q.arrived;   // its echo goes flagged and signalled too
	took(s, qi, buf, now);
}

/* Writes: whether QP qi's next message is in its slot, counted (checked, or corrupted:
 * a mark neither its nor its predecessor's, or a pattern still wrong kSettleS after the
 * mark showed). */
bool slot_arrived(PingPong *s, uint32_t qi, uint64_t *now)
{
	PingPongQp &q = s->qps[qi];
	const uint32_t len = s->p.msg_bytes;
	const uint8_t *slot = slot_of(s, qi);
	const uint8_t mark = *reinterpret_cast<const volatile uint8_t *>(slot + len - 1);
	if (mark == (q.arrived ? write_mark(q.arrived - 1) : 0))
		return false;
	rte_smp_rmb();   // the bytes before the mark are read after it
	*now = rte_rdtsc();
	ResponderCounters &c = s->c;
	const uint64_t seq = q.arrived;
	ptrdiff_t bad = mark == write_mark(seq) ? -1 : static_cast<ptrdiff_t>(len) - 1;
	if (bad < 0 && s->p.verify && (bad = pattern_check(slot, len - 1, msg_key(qi, seq))) >= 0) {
		if (q.settling == 0)
			q.settling = *now;
		if (*now - q.settling < s->p.settle_tsc)
			return false;
	}
	q.settling = 0;
	if (s->echo && c.received == 0)
		c.start_tsc = *now;
	if (bad >= 0) {
		c.payload_errors++;
		c.bad(qi, seq, bad);
	} else {
		c.verified++;
	}
	c.received++;
	c.bytes += len;
	return true;
}

/* Writes: each QP whose next message came (the pinging side: the echo of its ping). */
uint32_t poll_slots(PingPong *s)
{
	uint32_t got = 0;
	for (uint32_t qi = 0; qi < s->nqps && !s->finished; qi++) {
		PingPongQp &q = s->qps[qi];
		uint64_t now;
		if (q.arrived == q.target || (!s->echo && q.arrived == q.sent) || !slot_arrived(s, qi, &now))
			continue;
		q.arrived++;
		took(s, qi, slot_of(s, qi), now);
		got++;
	}
	return got;
}

/* The pinging side: the next ping of every QP whose echo came back. */
uint32_t ping_ready(PingPong *s)
{
	const PingPongParams &p = s->p;
	uint32_t posted = 0;
	for (uint32_t qi = 0; qi < s->nqps; qi++) {
		PingPongQp &q = s->qps[qi];
		if (q.sent == q.target || q.arrived != q.sent || q.posts - q.send_completed >= p.sq_depth)
			continue;
		void *b;
		if (rte_mempool_get(s->tx_pool, &b) != 0)
			continue;   // its buffers come back with the next signalled completion
		pattern_fill(b, p.msg_bytes, msg_key(qi, q.sent));
		if (s->polls_memory)
			static_cast<uint8_t *>(b)[p.msg_bytes - 1] = write_mark(q.sent);
		if (qi == 0 && q.sent == p.corrupt_msg)
			static_cast<unsigned char *>(b)[p.msg_bytes / 2] ^= 0x5a;
		/* perftest's figure: one iteration, post to post, halved. */
		uint64_t t = rte_rdtsc();
		if (q.sent)
			s->hist->record(static_cast<uint64_t>(static_cast<double>(t - q.t_post) * 1e9 /
							      static_cast<double>(p.tsc_hz) / 2));
		q.t_post = q.t_sent = t;
		if (post_send_one(s, qi, b, q.sent) != 0) {
			rte_mempool_put(s->tx_pool, b);
			fail(s, "ibv_post_send failed");
			return posted;
		}
		q.sent++;
		s->sent++;
		posted++;
	}
	return posted;
}

/* Reliable, the pinging side: each ping whose echo is later than its QP's timeout
 * goes again, refilled (its payload is a function of QP and sequence). */
uint32_t ping_again(PingPong *s, uint64_t now)
{
	const PingPongParams &p = s->p;
	uint32_t posted = 0;
	for (uint32_t qi = 0; qi < s->nqps; qi++) {
		PingPongQp &q = s->qps[qi];
		if (q.arrived == q.sent || q.posts - q.send_completed >= p.sq_depth)
			continue;
		void *b;
		if (now - q.t_sent < q.rto.current() || rte_mempool_get(s->tx_pool, &b) != 0)
			continue;
		const uint64_t seq = q.sent - 1;
		pattern_fill(b, p.msg_bytes, msg_key(qi, seq));
		if (post_send_one(s, qi, b, seq) != 0) {
			rte_mempool_put(s->tx_pool, b);
			fail(s, "ibv_post_send (a ping sent again) failed");
			return posted;
		}
		q.t_sent = now;
		q.rto.timed_out();
		s->retx_timeout++;
		s->live.retx_timeout.store(s->retx_timeout, std::memory_order_relaxed);
		posted++;
	}
	return posted;
}

/* Reliable, the echoing side with every echo sent: the last ones may still be lost,
 * so it answers repeats until the pinging side ends (across hosts, which it cannot
 * see: until none has come for twice the largest timeout). */
bool lingers(const PingPong *s)
{
	if (!s->p.reliable || !s->echo || s->ctl->requester_done.load(std::memory_order_acquire))
		return false;
	return rte_rdtsc() - s->last_progress < 2 * s->p.rto_max_tsc;
}

/* Every message in (sends_too: and every send reaped). */
bool all_done(const PingPong *s, bool sends_too)
{
	for (uint32_t qi = 0; qi < s->nqps; qi++) {
		const PingPongQp &q = s->qps[qi];
		if (q.arrived != q.target || (sends_too && q.send_completed != q.posts))
			return false;
	}
	return true;
}

/* Until stopped, the pinging side once the run ends: each QP sends one more ping, its
 * last (flagged, signalled: it reaps the sends before it), timed to its echo as every
 * run's last is. The echoing side ends each QP when that ping comes flagged (verbs
 * with an immediate), or all of them once the pinging side has ended (here, or its
 * client gone): each QP with the pings that came (its echoes are all signalled, as it
 * cannot know its last one). */
void stop_when_ended(PingPong *s)
{
	if (s->echo ? !s->ctl->requester_done.load(std::memory_order_acquire) : !s->ctl->ending())
		return;
	for (uint32_t qi = 0; qi < s->nqps; qi++) {
		PingPongQp &q = s->qps[qi];
		q.target = s->echo ? q.arrived : q.sent + 1;
	}
	s->stopped = true;
}

/* Writes: this end's slots, and the far end's per QP. */
int init_slots(PingPong *s, std::string *err)
{
	if (s->slots == nullptr || s->slot_stride < s->p.msg_bytes || s->p.msg_bytes == 0 || s->p.reliable) {
		*err = "ping-pong of writes: each QP needs a slot of its message's size here (" + std::to_string(s->p.msg_bytes) +
		       " B), and no software reliability (nothing completes at the receiving end)";
		return -1;
	}
	for (uint32_t qi = 0; qi < s->nqps; qi++)
		if (s->qps[qi].peer.base == 0) {
			*err = "ping-pong of writes: QP " + std::to_string(qi) + " has no slot at the far end to write to";
			return -1;
		}
	if (s->p.settle_tsc == 0)
		s->p.settle_tsc = std::min(s->p.stall_tsc, static_cast<uint64_t>(kSettleS * static_cast<double>(s->p.tsc_hz)));
	if (s->echo)
		s->tx_mrs = &s->slot_mrs;   // it writes back from its slots
	return 0;
}

} // namespace

int pingpong_init(PingPong *s, std::string *err)
{
	const PingPongParams &p = s->p;
	const PingWait wait = verb_info(p.verb).ping_wait;
	if (wait == PingWait::none) {
		*err = std::string("ping-pong: the verb must be ") + verb_echoed_list() + ", not " + verb_name(p.verb);
		return -EINVAL;
	}
	s->polls_memory = wait == PingWait::memory;
	if (s->polls_memory && init_slots(s, err) != 0)
		return -EINVAL;
	if (p.reliable && (!verb_has_imm(p.verb) || p.rto_min_tsc == 0 || p.rto_max_tsc < p.rto_min_tsc ||
			   p.rto_initial_tsc == 0)) {
		*err = "ping-pong: software reliability carries the sequence in send_imm's immediate and needs timeout bounds";
		return -EINVAL;
	}
	s->live.reliable = p.reliable;
	if (p.sq_depth < 2 * p.signal_every || p.iterations < s->nqps || s->nqps == 0) {
		*err = "ping-pong: send queue depth " + std::to_string(p.sq_depth) + " must be >= 2 x signal-every, and " +
		       "every QP needs a round trip (" + std::to_string(p.iterations) + " for " + std::to_string(s->nqps) + " QPs)";
		return -EINVAL;
	}
	if (s->chain.init(p.verb, 1, p.signal_every, p.msg_bytes, p.inline_send ? IBV_SEND_INLINE : 0) != 0) {
		*err = "ping-pong: bad send parameters";
		return -EINVAL;
	}
	uint32_t size = 1;
	while (size < p.sq_depth)
		size <<= 1;
	s->inflight_mask = size - 1;
	s->table.init(s->nqps);
	for (uint32_t qi = 0; qi < s->nqps; qi++) {
		PingPongQp &q = s->qps[qi];
		q.target = p.iterations / s->nqps + (qi < p.iterations % s->nqps);
		q.inflight.reset(new void *[size]());
		q.rto.min = p.rto_min_tsc;
		q.rto.max = p.rto_max_tsc;
		q.rto.initial = p.rto_initial_tsc;
		if (!s->table.insert(q.qp->qp_num, qi)) {
			*err = "ping-pong: QP " + std::to_string(q.qp->qp_num) + " given twice";
			return -EINVAL;
		}
	}
	return 0;
}

void pingpong_start(PingPong *s)
{
	s->last_progress = rte_rdtsc();
	if (!s->echo)
		s->c.start_tsc = s->last_progress;
}

uint32_t pingpong_burst(PingPong *s)
{
	if (s->finished)
		return 0;
	if (s->ctl->aborted()) {
		fail(s, s->ctl->abort_reason());
		return 0;
	}
	if (s->p.until_stopped && !s->stopped)
		stop_when_ended(s);
	ibv_wc wc[kPollBurst];
	int n = s->ops->poll_cq(s->recv_cq, kPollBurst, wc);
	if (n < 0) {
		fail(s, "ibv_poll_cq on the receive CQ failed");
		return 0;
	}
	const uint64_t now = n ? rte_rdtsc() : 0;
	route_burst(wc, n, s->table, s->recv_peer, now, &s->c.unknown_qps,
		    [&](uint32_t qi, const ibv_wc &w) { on_recv(s, qi, w, now); });
	if (n > 0)
		s->refill->consumed(wc, n);
	const uint32_t got = s->polls_memory ? poll_slots(s) : 0;
	/* The next pings first: a round trip counts from post to post, so the refill and the
	 * send CQ's poll come after them. */
	uint32_t posted = s->finished || s->echo || (n <= 0 && got == 0) ? 0 : ping_ready(s);
	/* Every burst, not only after a receive of its own: another role of the lcore may
	 * have polled ours. */
	if (s->refill->refill(*s->ops) < 0)
		fail(s, s->refill->per_qp() ? "ibv_post_recv failed" : "ibv_post_srq_recv failed");
	int m = s->ops->poll_cq(s->send_cq, kPollBurst, wc);
	if (m < 0)
		fail(s, "ibv_poll_cq on the send CQ failed");
	/* A time for the completions handed on (a requester sharing the CQ takes it as its
	 * progress): `now` is 0 when no receive came. */
	route_burst(wc, m, s->table, s->send_peer, m > 0 && now == 0 ? rte_rdtsc() : now, &s->c.unknown_qps,
		    [&](uint32_t, const ibv_wc &w) { on_send(s, w); });
	if (!s->finished && !s->echo && (m > 0 || (n <= 0 && got == 0)))
		posted += ping_ready(s);   // the first pings, and those a full send queue held back
	if (s->p.reliable && !s->finished && !s->echo)
		posted += ping_again(s, rte_rdtsc());   // not `now`: it may precede the pings just posted
	if (n > 0 || got || posted) {   // the echoing side too: a two-host server shows what it echoed
		s->live.sent.store(s->sent, std::memory_order_relaxed);
		s->live.completed.store(s->c.received, std::memory_order_relaxed);
	}
	(n > 0 || got ? s->c.polls_busy : s->c.polls_idle)++;
	if (all_done(s, true)) {
		s->finished = !lingers(s);
	} else if (!s->finished) {
		const uint64_t t = rte_rdtsc();
		/* The pinging side ended (or gave up) before every ping came: none will. (Once
		 * all came, the last echoes' completions may still be on their way.) */
		if (s->echo && n <= 0 && got == 0 && !all_done(s, false) && s->ctl->requester_done.load(std::memory_order_acquire)) {
			if (s->p.until_stopped)   // its end, come since this burst began: each QP ends with what came
				stop_when_ended(s);
			else
				fail(s, "the pinging side ended before every round trip");
		}
		else if (t - s->last_progress > s->p.stall_tsc)
			fail(s, s->echo ? "stalled: no message from the pinging side" : "stalled: no echo came back");
	}
	return static_cast<uint32_t>(n > 0 ? n : 0) + static_cast<uint32_t>(m > 0 ? m : 0) + got + posted;
}

int pingpong_finish(PingPong *s)
{
	/* Sends still posted complete before the QPs go (flushed if the QP failed). */
	const uint64_t until = rte_rdtsc() + s->p.tsc_hz / 10;
	for (bool busy = true; busy && rte_rdtsc() < until;) {
		ibv_wc wc[kPollBurst];
		int m = s->ops->poll_cq(s->send_cq, kPollBurst, wc);
		for (int i = 0; i < m; i++)
			if (s->table.find(wc[i].qp_num) != QpTable::kNone)
				on_send(s, wc[i]);
			else if (s->send_peer.on_wc)
				s->send_peer.on_wc(s->send_peer.role, wc[i], 0);
		busy = false;
		for (uint32_t qi = 0; qi < s->nqps; qi++)
			busy |= s->qps[qi].send_completed < s->qps[qi].posts;
		if (m <= 0 && s->c.fail_reason)
			break;   // a failed QP's sends are flushed in error: not waited for
	}
	if (!s->echo)
		s->ctl->finish_requesting();
	uint64_t want = 0;
	for (uint32_t qi = 0; qi < s->nqps; qi++)
		want += s->qps[qi].target;
	const ResponderCounters &c = s->c;
	return c.fail_reason == nullptr && c.received == want && c.verified == c.received && c.unknown_qps == 0 ? 0 : -1;
}

void pingpong_on_send_wc(void *role, const ibv_wc &wc, uint64_t)
{
	on_send(static_cast<PingPong *>(role), wc);
}

void pingpong_on_recv_wc(void *role, const ibv_wc &wc, uint64_t now)
{
	auto *s = static_cast<PingPong *>(role);
	on_recv(s, s->table.find(wc.qp_num), wc, now ? now : rte_rdtsc());
}

} // namespace rp
