#include "engine/pingpong.h"

#include "engine/pattern.h"
#include "engine/cq_router.h"
#include "engine/recv_check.h"

#include <rte_cycles.h>
#include <rte_mempool.h>

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

template <Verb V>
int post_one(PingPong *s, uint32_t qi, void *buf)
{
	PingPongQp &q = s->qps[qi];
	const uint64_t seq = q.sent;
	q.inflight[seq & s->inflight_mask] = buf;
	s->chain.set_wr_tag(static_cast<uint64_t>(qi) << kQpShift);
	ibv_send_wr *bad = nullptr;
	ibv_send_wr *wr = s->chain.build<V>(seq, 1, &buf, *s->tx_mrs, seq + 1 == q.target, RemoteTarget{});
	int ret = s->ops->post_send(q.qp, wr, &bad);
	s->chain.relink(1);
	s->post_calls++;
	if (ret != 0)
		return -ret;
	q.sent++;
	s->sent++;
	return 0;
}

int post_send_one(PingPong *s, uint32_t qi, void *buf)
{
	return s->p.verb == Verb::send_imm ? post_one<Verb::send_imm>(s, qi, buf) : post_one<Verb::send>(s, qi, buf);
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
	if (upto < q.send_completed || upto >= q.sent)
		return;
	rte_mempool *pool = s->echo ? s->rx_pool : s->tx_pool;
	for (uint64_t k = q.send_completed; k <= upto; k++)
		rte_mempool_put(pool, q.inflight[k & s->inflight_mask]);
	q.send_completed = upto + 1;
}

/* Checks arrival seq of QP qi: opcode, immediate, length, payload. */
void check_arrival(PingPong *s, uint32_t qi, const ibv_wc &wc, void *buf, uint64_t seq)
{
	ResponderCounters &c = s->c;
	bool last;   // every message is echoed: the flag says nothing here
	bool ok = recv_header_ok(c, wc, s->p.verb, seq, s->p.msg_bytes, &last);
	if (ok && s->p.verify) {
		ptrdiff_t bad = pattern_check(buf, s->p.msg_bytes, msg_key(qi, seq));
		if (bad >= 0) {
			c.payload_errors++;
			c.bad(qi, seq, bad);
			ok = false;
		}
	}
	if (ok)
		c.verified++;
	else
		c.bad(qi, seq, -1);
	c.received++;
	c.bytes += wc.byte_len;
}

/* The echoing side sends arrival seq of QP qi straight back, from its buffer. */
void echo_back(PingPong *s, uint32_t qi, void *buf)
{
	PingPongQp &q = s->qps[qi];
	/* The pinging side waits for this echo before its next ping, so the send queue
	 * only fills with sends not yet reaped: reap them here. */
	while (q.sent - q.send_completed >= s->p.sq_depth && !s->finished) {
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
	if (s->finished || post_send_one(s, qi, buf) != 0) {
		fail(s, "ibv_post_send (echo) failed");
		rte_mempool_put(s->rx_pool, buf);
	}
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
	if (s->echo && s->c.received == 0)
		s->c.start_tsc = now;
	check_arrival(s, qi, wc, buf, q.arrived);
	q.arrived++;
	s->last_progress = now;
	s->c.end_tsc = now;
	if (s->echo) {
		echo_back(s, qi, buf);
		return;
	}
	rte_mempool_put(s->rx_pool, buf);
	if (q.arrived == q.target)   // the last iteration: post to its echo
		s->hist->record(static_cast<uint64_t>(static_cast<double>(now - q.t_post) * 1e9 /
						      static_cast<double>(s->p.tsc_hz) / 2));
}

/* The pinging side: the next ping of every QP whose echo came back. */
uint32_t ping_ready(PingPong *s)
{
	const PingPongParams &p = s->p;
	uint32_t posted = 0;
	for (uint32_t qi = 0; qi < s->nqps; qi++) {
		PingPongQp &q = s->qps[qi];
		if (q.sent == q.target || q.arrived != q.sent || q.sent - q.send_completed >= p.sq_depth)
			continue;
		void *b;
		if (rte_mempool_get(s->tx_pool, &b) != 0)
			continue;   // its buffers come back with the next signalled completion
		pattern_fill(b, p.msg_bytes, msg_key(qi, q.sent));
		if (qi == 0 && q.sent == p.corrupt_msg)
			static_cast<unsigned char *>(b)[p.msg_bytes / 2] ^= 0x5a;
		/* perftest's figure: one iteration, post to post, halved. */
		uint64_t t = rte_rdtsc();
		if (q.sent)
			s->hist->record(static_cast<uint64_t>(static_cast<double>(t - q.t_post) * 1e9 /
							      static_cast<double>(p.tsc_hz) / 2));
		q.t_post = t;
		if (post_send_one(s, qi, b) != 0) {
			rte_mempool_put(s->tx_pool, b);
			fail(s, "ibv_post_send failed");
			return posted;
		}
		posted++;
	}
	return posted;
}

/* Every message in (sends_too: and every send reaped). */
bool all_done(const PingPong *s, bool sends_too)
{
	for (uint32_t qi = 0; qi < s->nqps; qi++) {
		const PingPongQp &q = s->qps[qi];
		if (q.arrived != q.target || (sends_too && q.send_completed != q.sent))
			return false;
	}
	return true;
}

} // namespace

int pingpong_init(PingPong *s, std::string *err)
{
	const PingPongParams &p = s->p;
	if (p.verb != Verb::send && p.verb != Verb::send_imm) {
		*err = "ping-pong: the verb must be send or send_imm";
		return -EINVAL;
	}
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
		fail(s, "aborted");
		return 0;
	}
	ibv_wc wc[kPollBurst];
	int n = s->ops->poll_cq(s->recv_cq, kPollBurst, wc);
	if (n < 0) {
		fail(s, "ibv_poll_cq on the receive CQ failed");
		return 0;
	}
	const uint64_t now = n ? rte_rdtsc() : 0;
	route_burst(wc, n, s->table, s->recv_peer, now, &s->c.unknown_qps,
		    [&](uint32_t qi, const ibv_wc &w) { on_recv(s, qi, w, now); });
	if (n > 0) {
		s->refill->consumed(static_cast<uint32_t>(n));
		if (s->refill->refill(*s->ops, s->srq) < 0)
			fail(s, "ibv_post_srq_recv failed");
	}
	int m = s->ops->poll_cq(s->send_cq, kPollBurst, wc);
	if (m < 0)
		fail(s, "ibv_poll_cq on the send CQ failed");
	route_burst(wc, m, s->table, s->send_peer, now, &s->c.unknown_qps, [&](uint32_t, const ibv_wc &w) { on_send(s, w); });
	uint32_t posted = s->finished || s->echo ? 0 : ping_ready(s);
	if (n > 0 || posted) {   // the echoing side too: a two-host server shows what it echoed
		s->live.sent.store(s->sent, std::memory_order_relaxed);
		s->live.completed.store(s->c.received, std::memory_order_relaxed);
	}
	(n > 0 ? s->c.polls_busy : s->c.polls_idle)++;
	if (all_done(s, true)) {
		s->finished = true;
	} else if (!s->finished) {
		const uint64_t t = rte_rdtsc();
		/* The pinging side ended (or gave up) before every ping came: none will. (Once
		 * all came, the last echoes' completions may still be on their way.) */
		if (s->echo && n == 0 && !all_done(s, false) && s->ctl->requester_done.load(std::memory_order_acquire))
			fail(s, "the pinging side ended before every round trip");
		else if (t - s->last_progress > s->p.stall_tsc)
			fail(s, s->echo ? "stalled: no message from the pinging side" : "stalled: no echo came back");
	}
	return static_cast<uint32_t>(n > 0 ? n : 0) + static_cast<uint32_t>(m > 0 ? m : 0) + posted;
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
			busy |= s->qps[qi].send_completed < s->qps[qi].sent;
		if (m <= 0 && s->c.fail_reason)
			break;   // a failed QP's sends are flushed in error: not waited for
	}
	if (!s->echo)
		s->ctl->requester_done.store(true, std::memory_order_release);
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
