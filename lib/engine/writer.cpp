#include "engine/writer.h"

#include "conf/options.h"
#include "engine/pattern.h"

#include <rte_cycles.h>
#include <rte_mempool.h>

#include <cerrno>
#include <string>

namespace rp {

namespace {

uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

/* Retires messages [w->c.completed, upto] and returns their buffers in at most two bulks. */
void retire_upto(Writer *w, uint64_t upto)
{
	uint64_t from = w->c.completed;
	if (upto < from)
		return;
	uint64_t n = upto - from + 1;
	uint32_t start = static_cast<uint32_t>(from & w->inflight_mask);
	uint32_t first = static_cast<uint32_t>(
		n < static_cast<uint64_t>(w->inflight_mask + 1 - start) ? n : w->inflight_mask + 1 - start);
	rte_mempool_put_bulk(w->pool, &w->inflight[start], first);
	if (n > first)
		rte_mempool_put_bulk(w->pool, &w->inflight[0], static_cast<unsigned>(n - first));
	w->c.completed = upto + 1;
}

/* Polls the send CQ once. Returns the completions seen, or -1 on a completion error. */
int poll_send(Writer *w)
{
	ibv_wc wc[kTxPollBurst];
	int n = w->ops->poll_cq(w->send_cq, kTxPollBurst, wc);
	if (n < 0) {
		w->c.fail_reason = "ibv_poll_cq on the send CQ failed";
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			w->c.wc_errors.count(wc[i]);
			if (w->c.fail_reason == nullptr)
				w->c.fail_reason = "send completion error";
			continue;
		}
		retire_upto(w, wc[i].wr_id);
	}
	return w->c.fail_reason ? -1 : n;
}

} // namespace

int writer_init(Writer *w, uint64_t remote_base, uint32_t rkey, std::string *err)
{
	const WriterParams &p = w->p;
	/* eRPC's invariant: a signalled WR every N frees the send queue in steps of N. */
	if (p.sq_depth < 2 * p.signal_every || p.sq_depth < p.batch) {
		*err = "writer: send queue depth " + std::to_string(p.sq_depth) +
		       " must be >= 2 x signal-every and >= batch";
		return -EINVAL;
	}
	if (p.window < p.batch) {
		*err = "writer: receive window " + std::to_string(p.window) + " is below batch";
		return -EINVAL;
	}
	if (w->chain.init(p.batch, p.signal_every, p.msg_bytes, remote_base, rkey, p.window) != 0) {
		*err = "writer: bad chain parameters";
		return -EINVAL;
	}
	uint32_t size = pow2_at_least(p.sq_depth);
	w->inflight.reset(new void *[size]());
	w->inflight_mask = size - 1;
	return 0;
}

int writer_run(Writer *w)
{
	WriterCounters &c = w->c;
	const WriterParams &p = w->p;
	void *bufs[kMaxBatch];
	uint64_t total = p.messages ? p.messages : UINT64_MAX;
	uint64_t now = rte_rdtsc();
	uint64_t deadline = p.messages ? UINT64_MAX : now + p.duration_tsc;
	uint64_t last_progress = now;
	uint64_t last_credit = 0;
	c.start_tsc = now;

	while (c.completed < total || c.sent < total) {
		if (w->ctl->abort.load(std::memory_order_relaxed)) {
			c.fail_reason = "aborted";
			break;
		}
		int polled = poll_send(w);
		if (polled < 0)
			break;
		now = rte_rdtsc();
		if (polled > 0)
			last_progress = now;

		/* Time-bounded runs end with one last, flagged message. */
		if (now >= deadline && total == UINT64_MAX)
			total = c.sent + 1;
		if (c.sent >= total) {
			if (now - last_progress > p.stall_tsc) {
				c.fail_reason = "stalled: send completions stopped arriving";
				break;
			}
			continue;   // draining
		}

		uint64_t credit = *w->credit_word;
		if (credit > c.sent) {
			c.credit_anomalies++;
			credit = last_credit;
		}
		if (credit != last_credit) {
			last_credit = credit;
			last_progress = now;
		}
		uint64_t window_room = p.window - (c.sent - last_credit);
		uint64_t sq_room = p.sq_depth - (c.sent - c.completed);
		uint64_t n = total - c.sent;
		if (n > p.batch)
			n = p.batch;
		if (n > window_room)
			n = window_room;
		if (n > sq_room)
			n = sq_room;
		/* Out of window, send queue or buffers: they come back with credits and
		 * signalled completions; nothing coming back for too long is a stall. */
		if (n == 0 || rte_mempool_get_bulk(w->pool, bufs, static_cast<unsigned>(n)) != 0) {
			if (now - last_progress > p.stall_tsc) {
				c.fail_reason = "stalled: no credit or completion from the receiver";
				break;
			}
			continue;
		}

		for (uint64_t i = 0; i < n; i++) {
			uint64_t seq = c.sent + i;
			pattern_fill(bufs[i], p.msg_bytes, seq);
			if (seq == p.corrupt_msg)
				static_cast<unsigned char *>(bufs[i])[p.msg_bytes / 2] ^= 0x5a;
			w->inflight[seq & w->inflight_mask] = bufs[i];
		}
		bool ends = c.sent + n == total;
		ibv_send_wr *bad = nullptr;
		ibv_send_wr *head = w->chain.build(c.sent, static_cast<uint32_t>(n), bufs, *w->mrs, ends);
		int ret = w->ops->post_send(w->qp, head, &bad);
		w->chain.relink(static_cast<uint32_t>(n));
		c.post_calls++;
		if (ret != 0) {
			c.post_errors++;
			c.fail_reason = "ibv_post_send failed";
			/* WRs before `bad` went out; the rest never will. */
			uint64_t ok = 0;
			for (ibv_send_wr *x = head; x != bad && ok < n; x = x->next)
				ok++;
			rte_mempool_put_bulk(w->pool, bufs + ok, static_cast<unsigned>(n - ok));
			c.sent += ok;
			break;
		}
		c.sent += n;
		last_progress = now;
	}
	c.end_tsc = rte_rdtsc();
	w->ctl->writer_sent.store(c.sent, std::memory_order_relaxed);
	w->ctl->writer_done.store(true, std::memory_order_release);
	return c.fail_reason ? -1 : 0;
}

} // namespace rp
