/* The requester before and after its bursts: sizing checks and preallocation, flows,
 * input, lanes; the end of a run, and what held a stalled one back. */
#include "engine/requester_internal.h"

#include "log/log.h"

#include <rte_cycles.h>
#include <rte_mempool.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>

namespace rp {

namespace {


uint32_t pow2_at_least(uint32_t v)
{
	uint32_t p = 1;
	while (p < v)
		p <<= 1;
	return p;
}

} // namespace

/* At the end: bound buffers go back to the pool (nothing posts from them any more). */
void unbind(Requester *r)
{
	for (uint32_t i = 0; i < r->nqps; i++) {
		RequesterQp &q = r->qps[i];
		if (q.bound)
			rte_mempool_put_bulk(r->pool, q.inflight, q.bound);
		q.bound = 0;
	}
}

/* A stall, with the first QP still owed messages and what holds it back: its send
 * queue (WRs posted and not completed: a signalled completion is due), its window
 * (sent and not yet credited by the receiver: for a reliable flow, acknowledged), the
 * WR budget, a restart it waits for, or its input. */
const char *describe_stall(Requester *r, const char *why)
{
	const RequesterParams &p = r->p;
	for (uint32_t qi = 0; qi < r->nqps; qi++) {
		const RequesterQp &q = r->qps[qi];
		if (q.failed || q.sent >= q.target)
			continue;
		const uint64_t out = p.reliable ? q.wr_posted - q.wr_done : q.sent - q.completed;
		const bool flow_full = p.flow_window && flow_outstanding(r, q.flow) >= p.flow_window;
		const char *held = out >= p.sq_depth ? "its send queue is full"
				   : q.credit_word && q.sent - q.credit >= p.window ? "its window is full"
				   : flow_full ? "its flow's window (over all its QPs) is full"
				   : p.wr_budget && r->wr_out >= p.wr_budget    ? "the WR budget is spent"
				   : q.paused					? "it waits for the receiver to restart it"
				   : r->in					? "nothing came from its ring"
				   : p.reliable					? "it still sends, unacknowledged"
										: "no buffer came from the pool";
		snprintf(r->stall_why, sizeof(r->stall_why),
			 "%s (QP %u: sent %" PRIu64 " of %" PRIu64 ", completed %" PRIu64 ", credited %" PRIu64
			 "; %s: send queue %u, window %u)",
			 why, qi, q.sent, q.target, q.completed, q.credit_word ? q.credit : q.sent, held, p.sq_depth, p.window);
		return r->stall_why;
	}
	return why;
}

int requester_init(Requester *r, uint32_t nqps, std::string *err)
{
	const RequesterParams &p = r->p;
	/* eRPC's invariant: a signalled WR every N frees the send queue in steps of N (every
	 * WR signalled: any depth, down to one in flight). The validator says it to users. */
	if ((p.signal_every > 1 && p.sq_depth < 2 * p.signal_every) || p.sq_depth < p.batch) {
		*err = "requester: send queue depth " + std::to_string(p.sq_depth) +
		       " must be >= 2 x signal-every (above 1) and >= batch";
		return -EINVAL;
	}
	if (p.window < p.batch || (p.flow_window && p.flow_window < p.batch)) {
		*err = "requester: receive window " + std::to_string(p.window < p.batch ? p.window : p.flow_window) + " is below batch";
		return -EINVAL;
	}
	if (p.flow_window && p.reliable) {
		*err = "requester: software reliability returns credit per QP (no flow window)";
		return -EINVAL;
	}
	if (nqps == 0 || nqps > kMaxQps || p.batch > kMaxBatch) {
		*err = "requester: " + std::to_string(nqps) + " QPs is outside 1.." + std::to_string(kMaxQps);
		return -EINVAL;
	}
	if (p.reliable && (!verb_has_imm(p.verb) || p.rto_min_tsc == 0 ||
			   p.rto_max_tsc < p.rto_min_tsc)) {
		*err = "requester: software reliability takes write_imm or send_imm and RTO bounds";
		return -EINVAL;
	}
	r->ck = Chunking::of(p.msg_bytes, p.reliable && verb_info(p.verb).chunkable ? p.chunk_bytes : 0);
	if (p.sq_depth < r->ck.count) {
		*err = "requester: send queue depth " + std::to_string(p.sq_depth) + " holds fewer WRs than the " +
		       std::to_string(r->ck.count) + " chunks of one message";
		return -EINVAL;
	}
	if (r->chain.init(p.verb, p.batch * r->ck.count, p.signal_every, p.msg_bytes, p.inline_send ? IBV_SEND_INLINE : 0,
			  p.fence) != 0) {
		*err = "requester: bad chain parameters";
		return -EINVAL;
	}
	pick_for_verb(r);
	/* Reliable: a message (each of its chunks) is tracked until acknowledged, up to a
	 * window of them. */
	const uint32_t size = pow2_at_least(p.reliable && p.window > p.sq_depth ? p.window : p.sq_depth);
	const uint32_t seqs = p.reliable ? pow2_at_least(std::max<uint32_t>(size, p.window * r->ck.count)) : size;
	r->nqps = nqps;
	r->qps.reset(new RequesterQp[nqps]);
	r->qp_sent.reset(new uint64_t[nqps]());
	r->qp_completed.reset(new uint64_t[nqps]());
	r->qp_failed.reset(new bool[nqps]());
	r->inflight_mem.reset(new void *[static_cast<size_t>(size) * nqps]());
	r->lkey_mem.reset(new uint32_t[static_cast<size_t>(size) * nqps]());
	r->post_tsc_mem.reset(new uint64_t[static_cast<size_t>(seqs) * nqps]());
	r->inflight_mask = size - 1;
	r->seq_mask = seqs - 1;
	for (uint32_t i = 0; i < nqps; i++) {
		r->qps[i].inflight = &r->inflight_mem[static_cast<size_t>(i) * size];
		r->qps[i].lkeys = &r->lkey_mem[static_cast<size_t>(i) * size];
		r->qps[i].post_tsc = &r->post_tsc_mem[static_cast<size_t>(i) * seqs];
	}
	if (p.reliable) {
		const size_t all = static_cast<size_t>(seqs) * nqps;
		r->marks_mem.reset(new uint8_t[all]());
		r->hdrs.reset(new RetxHeader[all]());
		r->hdrs_bytes = all * sizeof(RetxHeader);
		r->retx.reset(new Requester::Retx[p.batch]());
		for (uint32_t i = 0; i < nqps; i++) {
			r->qps[i].marks = &r->marks_mem[static_cast<size_t>(i) * seqs];
			r->qps[i].rto.min = p.rto_min_tsc;
			r->qps[i].rto.max = p.rto_max_tsc;
			r->qps[i].rto.initial = p.rto_initial_tsc;
		}
	}
	RP_LOG(DEBUG, ENGINE, "rdmapipe: requester: %u QP%s, %s, %u B, batch %u, signal every %u, send queue %u, window %u%s\n", nqps,
	       nqps == 1 ? "" : "s", verb_name(p.verb), p.msg_bytes, p.batch, p.signal_every, p.sq_depth, p.window,
	       p.reliable ? ", reliable in software" : "");
	return requester_set_flows(r, &nqps, 1, err);
}

int requester_set_flows(Requester *r, const uint32_t *sizes, uint32_t nflows, std::string *err)
{
	uint64_t total = 0;
	for (uint32_t f = 0; f < nflows; f++)
		total += sizes[f];
	if (nflows == 0 || nflows > kMaxFlows || total != r->nqps) {
		*err = "requester: flows of " + std::to_string(total) + " QPs in all, but " + std::to_string(r->nqps) +
		       " QPs were set up";
		return -EINVAL;
	}
	const uint64_t m = r->p.messages;
	r->nflows = nflows;
	r->flow_errors.reset(new WcErrorCounts[nflows]);
	r->flow_latency.reset(new Histogram[nflows]);
	r->flow_live.reset(new FlowLive[nflows]);
	r->flow_sent.reset(new uint64_t[nflows]());
	r->flow_credit.reset(new Requester::FlowCredit[nflows]);
	r->flow_ctl.reset(new FlowControl[nflows]);
	r->pace.reset(new Requester::Pace[nflows]);
	for (uint32_t f = 0; f < nflows; f++) {
		r->flow_live[f].reliable = r->p.reliable;
		r->flow_ctl[f].tsc_per_msg.store(r->p.tsc_per_msg, std::memory_order_relaxed);
		r->flow_ctl[f].batch.store(r->p.batch, std::memory_order_relaxed);
	}
	uint32_t qi = 0;
	for (uint32_t f = 0; f < nflows; f++)
		for (uint32_t k = 0; k < sizes[f]; k++, qi++) {
			r->qps[qi].flow = f;
			/* Messages spread round-robin: QP k of the flow gets every sizes[f]-th. */
			r->qps[qi].target = m ? qp_share(m, sizes[f], k) : UINT64_MAX;
		}
	return 0;
}

int requester_set_input(Requester *r, rte_ring *in, rte_mempool *pool, const MrTable *mrs, std::string *err)
{
	if (in == nullptr || pool == nullptr || mrs == nullptr) {
		*err = "requester: an input ring needs the ring, its buffers' pool and their MR table";
		return -EINVAL;
	}
	r->in = in;
	r->pool = pool;
	r->mrs = mrs;
	r->pre = PrebuiltChains();   // fed: nothing is bound
	pick_for_verb(r);   // the fed variant of the post
	return 0;
}

int requester_set_lane(Requester *r, uint32_t lane, rte_ring *const *rings, uint32_t nlanes, std::string *err)
{
	if (lane >= nlanes || nlanes > kMaxLanes || rings == nullptr) {
		*err = "requester: lane " + std::to_string(lane) + " of " + std::to_string(nlanes) + " (at most " +
		       std::to_string(kMaxLanes) + ")";
		return -EINVAL;
	}
	for (uint32_t i = 0; i < r->nqps; i++)
		if (r->qps[i].target > kSeqMask) {
			*err = "requester: shared QPs run a message count below 2^40 per QP";
			return -EINVAL;
		}
	r->lane = lane;
	r->lane_rings = rings;
	r->nlanes = nlanes;
	r->wr_tag = static_cast<uint64_t>(lane) << kLaneShift;
	r->chain.set_wr_tag(r->wr_tag);
	r->pre = PrebuiltChains();   // lanes share the pool: nothing is bound
	pick_for_verb(r);   // lanes share the flow's pool: no bound buffers
	return 0;
}

int requester_join_lanes(Requester *r, uint32_t lane, uint32_t nlanes, uint64_t *sent, uint64_t *completed,
			 bool *failed, std::atomic<uint32_t> *left, std::string *err)
{
	if (lane >= nlanes || nlanes > kMaxLanes || sent == nullptr || completed == nullptr || failed == nullptr ||
	    left == nullptr ||
	    static_cast<uint64_t>(r->nqps) * nlanes > static_cast<uint64_t>(kMaxQps) * kMaxLanes) {
		*err = "requester: lane " + std::to_string(lane) + " of " + std::to_string(nlanes) + " (at most " +
		       std::to_string(kMaxLanes) + ") with nowhere to publish its counts";
		return -EINVAL;
	}
	r->key_stride = nlanes;
	r->key_lane = lane;
	r->lanes_sent = sent;
	r->lanes_completed = completed;
	r->lanes_failed = failed;
	r->lanes_left = left;
	return 0;
}

/* The rate run's prebuilt chains (PrebuiltChains), where each QP's buffers, remote
 * slots and signals repeat within a period that fits: a QP's bound buffers (its
 * in-flight ring), the window of a verb that writes or reads slots, a signal every
 * signal_every. Beyond kMaxPrebuiltPeriod (or kMaxPrebuiltEntries over all QPs),
 * chains are built per post. Returns 0 or -EINVAL. */
namespace {
int prebuild_chains(Requester *r)
{
	const RequesterParams &p = r->p;
	const bool slots = verb_info(p.verb).remote_access && !verb_is_atomic(p.verb);
	r->pre = PrebuiltChains();
	if (p.reliable || p.inject_loss || p.post_api != PostApi::classic)
		return 0;
	uint32_t period = r->inflight_mask + 1;
	for (uint32_t i = 0; i < r->nqps && period; i++) {
		if (slots && r->qps[i].remote.slots == 0)
			return 0;
		period = PrebuiltChains::period_for(period, slots ? r->qps[i].remote.slots : 0, p.signal_every,
						    kMaxPrebuiltPeriod);
	}
	if (period == 0 || static_cast<uint64_t>(period) * r->nqps > kMaxPrebuiltEntries)
		return 0;
	return r->pre.init(p.verb, r->nqps, period, p.signal_every, p.msg_bytes, p.inline_send ? IBV_SEND_INLINE : 0,
			   p.fence);
}
} // namespace

int requester_add_qps(Requester *r, std::string *err)
{
	r->table.init(r->nqps);
	for (uint32_t i = 0; i < r->nqps; i++) {
		if (r->qps[i].qp == nullptr || !r->table.insert(r->qps[i].qp->qp_num, i)) {
			*err = "requester: QP " + std::to_string(i) + " is missing or its qp_num is a duplicate";
			return -EINVAL;
		}
		if (r->p.reliable)
			r->qps[i].credit_word = &r->qps[i].ack_credit;   // ACKs return the credit
		if (r->p.flow_window && r->flow_credit[r->qps[i].flow].word == nullptr) {
			*err = "requester: flow " + std::to_string(r->qps[i].flow) + " has a flow window but no credit word";
			return -EINVAL;
		}
		if (r->p.post_api == PostApi::wr && r->qps[i].qpx == nullptr) {
			*err = "requester: QP " + std::to_string(i) + " has no ibv_qp_ex for --post-api wr";
			return -EINVAL;
		}
	}
	if (prebuild_chains(r) != 0) {
		*err = "requester: bad prebuilt chain parameters";
		return -EINVAL;
	}
	pick_for_verb(r);   // the prebuilt variant where buffers are bound
	return 0;
}

void requester_start(Requester *r)
{
	/* Binding buffers the pool cannot all give would leave QPs without any: per chain then. */
	const uint64_t want = static_cast<uint64_t>(r->nqps) * (r->inflight_mask + 1);
	if (r->bound && rte_mempool_avail_count(r->pool) < want) {
		RP_LOG(DEBUG, ENGINE, "rdmapipe: requester: its pool has %u buffers, not the %" PRIu64 " its QPs would keep: buffers per chain\n",
		       rte_mempool_avail_count(r->pool), want);
		r->p.bind_buffers = false;
		pick_for_verb(r);
	}
	uint64_t now = rte_rdtsc();
	r->deadline = r->p.messages || r->p.count_from_input ? UINT64_MAX : now + r->p.duration_tsc;
	r->last_progress = now;
	r->until_look = 0;
	r->timed_out = false;
	r->finished = false;
	r->c.start_tsc = now;
	r->warm_end = r->p.warmup_tsc ? now + r->p.warmup_tsc : UINT64_MAX;
	r->warm_tsc = 0;
	r->warm_completed = 0;
	pick_burst(r);   // the lean shape where the run allows it
}

int requester_finish(Requester *r)
{
	RequesterCounters &c = r->c;
	c.end_tsc = rte_rdtsc();
	unbind(r);
	for (uint32_t i = 0; i < r->nqps; i++) {
		r->qp_sent[i] = r->qps[i].sent;
		r->qp_completed[i] = r->qps[i].completed;
		r->qp_failed[i] = r->qps[i].failed;
	}
	if (c.fail_reason == nullptr && c.failed_qps)
		c.fail_reason = "completion errors";
	if (r->lanes_left) {   // a lane: its slices' counts, the flow's published by the last lane
		for (uint32_t i = 0; i < r->nqps; i++) {
			r->lanes_sent[key_qp(r, i)] = r->qps[i].sent;
			r->lanes_completed[key_qp(r, i)] = r->qps[i].completed;
			r->lanes_failed[key_qp(r, i)] = r->qps[i].failed;
		}
		if (r->lanes_left->fetch_sub(1, std::memory_order_acq_rel) == 1) {
			r->ctl->qp_sent = r->lanes_sent;
			r->ctl->qp_completed = r->lanes_completed;
			r->ctl->qp_failed = r->lanes_failed;
			r->ctl->finish_requesting();
		}
		return c.fail_reason || c.result_errors ? -1 : 0;
	}
	r->ctl->qp_sent = r->qp_sent.get();
	r->ctl->qp_completed = r->qp_completed.get();
	r->ctl->qp_failed = r->qp_failed.get();
	r->ctl->finish_requesting();   // all of the above published
	return c.fail_reason || c.result_errors ? -1 : 0;
}

} // namespace rp
