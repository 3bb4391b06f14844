#include "engine/pingpong.h"

#include "engine/pattern.h"
#include "engine/recv_check.h"

#include <rte_cycles.h>
#include <rte_mempool.h>

#include <arpa/inet.h>

#include <cerrno>

namespace rp {

namespace {

constexpr uint32_t kEchoBurst = 16;

/* The payload the pinging side writes into message seq, and expects back. */
inline uint64_t ping_key(uint64_t seq)
{
	return msg_key(0, seq);
}

template <Verb V>
int post_one(PingPongSide *s, uint64_t seq, void *buf)
{
	s->inflight[seq & s->inflight_mask] = buf;
	ibv_send_wr *bad = nullptr;
	ibv_send_wr *wr = s->chain.build<V>(seq, 1, &buf, *s->mrs, seq + 1 == s->p.iterations, RemoteTarget{});
	int ret = s->ops->post_send(s->qp, wr, &bad);
	s->chain.relink(1);
	s->post_calls++;
	if (ret != 0)
		return -ret;
	s->sent++;
	return 0;
}

int post_send_one(PingPongSide *s, uint64_t seq, void *buf)
{
	return s->p.verb == Verb::send_imm ? post_one<Verb::send_imm>(s, seq, buf) : post_one<Verb::send>(s, seq, buf);
}

/* Polls the send CQ once; a signalled completion returns every send buffer up to it. */
int reap_sends(PingPongSide *s)
{
	ibv_wc wc[kEchoBurst];
	int n = s->ops->poll_cq(s->send_cq, kEchoBurst, wc);
	if (n < 0) {
		s->c.fail_reason = "ibv_poll_cq on the send CQ failed";
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			s->c.wc_errors.count(wc[i]);
			s->c.fail_reason = "send completion error";
			return -1;
		}
		uint64_t upto = wc[i].wr_id;
		if (upto < s->send_completed || upto >= s->sent)
			continue;
		for (uint64_t q = s->send_completed; q <= upto; q++)
			rte_mempool_put(s->pool, s->inflight[q & s->inflight_mask]);
		s->send_completed = upto + 1;
	}
	return n;
}

/* Checks arrival seq: opcode, immediate, length, payload. Returns its buffer. */
void *check_arrival(PingPongSide *s, const ibv_wc &wc, uint64_t seq)
{
	ResponderCounters &c = s->c;
	void *buf = reinterpret_cast<void *>(wc.wr_id);
	bool last;   // ping-pong has no last message per QP: every one is echoed
	bool ok = recv_header_ok(c, wc, s->p.verb, seq, s->p.msg_bytes, &last);
	if (ok && s->p.verify) {
		ptrdiff_t bad = pattern_check(buf, s->p.msg_bytes, ping_key(seq));
		if (bad >= 0) {
			c.payload_errors++;
			c.bad(0, seq, bad);
			ok = false;
		}
	}
	if (ok)
		c.verified++;
	else
		c.bad(0, seq, -1);
	c.received++;
	c.bytes += wc.byte_len;
	return buf;
}

/* Waits, bounded, for the send queue to have room and (pinging side) a buffer. */
bool send_room(PingPongSide *s, void **buf)
{
	uint64_t since = rte_rdtsc();
	for (;;) {
		if (s->sent - s->send_completed < s->p.sq_depth && (buf == nullptr || rte_mempool_get(s->pool, buf) == 0))
			return true;
		if (reap_sends(s) < 0)
			return false;
		if (rte_rdtsc() - since > s->p.stall_tsc) {
			s->c.fail_reason = "stalled: no send completion";
			return false;
		}
	}
}

/* After the last message: its signalled completion returns every send buffer. */
void drain_sends(PingPongSide *s)
{
	uint64_t since = rte_rdtsc();
	while (s->send_completed < s->sent && s->c.fail_reason == nullptr) {
		if (reap_sends(s) < 0)
			return;
		if (rte_rdtsc() - since > s->p.stall_tsc)
			s->c.fail_reason = "stalled: the last send never completed";
	}
}

bool stop_asked(PingPongSide *s)
{
	if (!s->ctl->abort.load(std::memory_order_relaxed))
		return false;
	s->c.fail_reason = "aborted";
	return true;
}

} // namespace

int pingpong_init(PingPongSide *s, std::string *err)
{
	const PingPongParams &p = s->p;
	if (p.verb != Verb::send && p.verb != Verb::send_imm) {
		*err = "ping-pong: the verb must be send or send_imm";
		return -EINVAL;
	}
	if (p.sq_depth < 2 * p.signal_every || p.iterations == 0) {
		*err = "ping-pong: send queue depth " + std::to_string(p.sq_depth) + " must be >= 2 x signal-every";
		return -EINVAL;
	}
	if (s->chain.init(p.verb, 1, p.signal_every, p.msg_bytes, p.inline_send ? IBV_SEND_INLINE : 0) != 0) {
		*err = "ping-pong: bad send parameters";
		return -EINVAL;
	}
	uint32_t size = 1;
	while (size < p.sq_depth)
		size <<= 1;
	s->inflight.reset(new void *[size]());
	s->inflight_mask = size - 1;
	return 0;
}

int pingpong_ping(PingPongSide *s)
{
	ResponderCounters &c = s->c;
	const PingPongParams &p = s->p;
	const double half_ns_per_tsc = 1e9 / static_cast<double>(p.tsc_hz) / 2;
	uint64_t t_prev = 0;
	c.start_tsc = rte_rdtsc();

	for (uint64_t seq = 0; seq < p.iterations; seq++) {
		void *b = nullptr;
		if (stop_asked(s) || !send_room(s, &b))
			break;
		pattern_fill(b, p.msg_bytes, ping_key(seq));
		if (seq == p.corrupt_msg)
			static_cast<unsigned char *>(b)[p.msg_bytes / 2] ^= 0x5a;
		/* perftest's figure: one iteration, post to post, halved. */
		uint64_t t = rte_rdtsc();
		if (seq)
			s->hist->record(static_cast<uint64_t>(static_cast<double>(t - t_prev) * half_ns_per_tsc));
		t_prev = t;
		if (post_send_one(s, seq, b) != 0) {
			rte_mempool_put(s->pool, b);
			c.fail_reason = "ibv_post_send failed";
			break;
		}

		ibv_wc wc;
		int n;
		while ((n = s->ops->poll_cq(s->recv_cq, 1, &wc)) == 0) {
			c.polls_idle++;
			s->idler.idle(false);
			if (rte_rdtsc() - t > p.stall_tsc) {
				c.fail_reason = "stalled: no echo came back";
				break;
			}
			if (stop_asked(s))
				break;
		}
		if (n <= 0) {
			if (n < 0)
				c.fail_reason = "ibv_poll_cq on the receive CQ failed";
			break;
		}
		c.polls_busy++;
		s->idler.idle(true);
		if (wc.status != IBV_WC_SUCCESS) {
			c.wc_errors.count(wc);
			c.fail_reason = "receive completion error";
			break;
		}
		rte_mempool_put(s->pool, check_arrival(s, wc, seq));
		if (seq + 1 == p.iterations)
			s->hist->record(static_cast<uint64_t>(static_cast<double>(rte_rdtsc() - t_prev) * half_ns_per_tsc));
		s->refill.consumed(1);
		if (s->refill.refill(*s->ops, s->srq) < 0) {
			c.fail_reason = "ibv_post_srq_recv failed";
			break;
		}
		if (s->sent - s->send_completed >= p.signal_every && reap_sends(s) < 0)
			break;
	}
	c.end_tsc = rte_rdtsc();
	drain_sends(s);
	s->ctl->requester_done.store(true, std::memory_order_release);
	bool clean = c.fail_reason == nullptr && c.received == p.iterations && c.verified == c.received;
	return clean ? 0 : -1;
}

int pingpong_echo(PingPongSide *s)
{
	ResponderCounters &c = s->c;
	const PingPongParams &p = s->p;
	ibv_wc wc[kEchoBurst];
	uint64_t last_progress = rte_rdtsc();

	while (c.received < p.iterations && !stop_asked(s)) {
		int n = s->ops->poll_cq(s->recv_cq, kEchoBurst, wc);
		if (n < 0) {
			c.fail_reason = "ibv_poll_cq on the receive CQ failed";
			break;
		}
		uint64_t now = rte_rdtsc();
		for (int i = 0; i < n && c.fail_reason == nullptr; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				c.wc_errors.count(wc[i]);
				c.fail_reason = "receive completion error";
				break;
			}
			if (wc[i].qp_num != s->qp->qp_num) {
				c.unknown_qps++;
				rte_mempool_put(s->pool, reinterpret_cast<void *>(wc[i].wr_id));
				continue;
			}
			if (c.received == 0)
				c.start_tsc = now;
			uint64_t seq = c.received;
			void *buf = check_arrival(s, wc[i], seq);
			/* Back from the buffer it arrived in; the send completion frees it. */
			if (!send_room(s, nullptr) || post_send_one(s, seq, buf) != 0) {
				if (c.fail_reason == nullptr)
					c.fail_reason = "ibv_post_send (echo) failed";
				rte_mempool_put(s->pool, buf);
			}
		}
		if (c.fail_reason)
			break;
		if (n > 0) {
			last_progress = now;
			c.end_tsc = now;
			s->refill.consumed(static_cast<uint32_t>(n));
			if (s->refill.refill(*s->ops, s->srq) < 0) {
				c.fail_reason = "ibv_post_srq_recv failed";
				break;
			}
		}
		if (s->sent - s->send_completed >= p.signal_every && reap_sends(s) < 0)
			break;
		if (n > 0)
			c.polls_busy++;
		else
			c.polls_idle++;
		s->idler.idle(n > 0);
		if (n == 0) {
			if (s->ctl->requester_done.load(std::memory_order_acquire))
				break;   // the pinging side ended (or gave up): nothing more comes
			if (now - last_progress > p.stall_tsc) {
				c.fail_reason = "stalled: no message from the pinging side";
				break;
			}
		}
	}
	drain_sends(s);
	bool clean = c.fail_reason == nullptr && c.received == p.iterations && c.verified == c.received &&
		     c.unknown_qps == 0;
	return clean ? 0 : -1;
}

} // namespace rp
