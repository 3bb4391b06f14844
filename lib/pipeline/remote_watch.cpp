/* The watch of a two-host run's connections, on a control thread while the lcores run
 * (remote_flow.h): the far end's final counts written and read, a keep-alive read per
 * QP, disconnects, and a client that stops answering. */
#include "pipeline/remote_flow.h"

#include <rte_cycles.h>
#include <rte_lcore.h>

#include <infiniband/verbs.h>
#include <unistd.h>

#include <cstring>
#include <string>

namespace rp {

namespace {

constexpr useconds_t kWatchPeriodUs = 10000;   // the control thread's look at CM events
constexpr unsigned kProbeEvery = 100;          // watch periods: a keep-alive read per QP a second
constexpr unsigned kProbeDeadline = 300;       // unanswered for 3 s: the client is gone

/* One 8-byte RDMA READ or WRITE between a word of ours and one of the peer's (signalled
 * unless told otherwise). */
int post_word(ibv_qp *qp, ibv_wr_opcode op, uint64_t wr_id, uint64_t *local, uint32_t lkey, const RemoteTarget &remote,
	      bool signalled = true)
{
	ibv_sge sge{reinterpret_cast<uintptr_t>(local), 8, lkey};
	ibv_send_wr wr{};
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = op;
	wr.send_flags = signalled ? IBV_SEND_SIGNALED : 0;
	wr.wr.rdma.remote_addr = remote.base;
	wr.wr.rdma.rkey = remote.rkey;
	ibv_send_wr *bad = nullptr;
	return ibv_post_send(qp, &wr, &bad);
}

/* A client's final counts (each QP's messages sent) into the server's words, once its
 * requester is done and did not fail. Signalled: after the lcores are done, polled on
 * the lcore's send CQ. Unsignalled: while the lcore still runs other roles (the
 * watch's early copy; the CQ is the lcore's then, and an unsignalled WR completes
 * there only if it fails, which fails the flow as it should). Returns whether posted. */
bool post_final_counts(RemoteWatchEnd &we, bool signalled)
{
	RemoteEnd &e = *we.end;
	const Requester &q = *we.q;
	if (!e.final_counts || we.ctl->aborted() || q.c.fail_reason)
		return false;   // a failed run has no final count to give; the server fails too
	auto *src = static_cast<uint64_t *>(e.counts.addr);
	const RunControl &ctl = *we.ctl;   // the requester published its counts before requester_done
	uint32_t posted = 0;
	for (uint32_t i = 0; i < q.nqps; i++) {
		if (ctl.qp_failed[i])
			continue;
		src[i] = ctl.qp_sent[i];
		/* wr_id: none of the requester's */
		if (post_word(q.qps[i].qp, IBV_WR_RDMA_WRITE, UINT64_MAX - i, &src[i], e.counts.mr->lkey, e.count_words[i],
			      signalled) != 0)
			return false;
		posted++;
	}
	if (!signalled)
		e.counts_early = posted;
	return true;
}

/* Server: every QP's final count told (the client's last WRITE on each QP, so all it
 * wrote before is in). */
bool counts_all_told(const RemoteEnd &e, uint32_t qps)
{
	const auto *fin = static_cast<const uint64_t *>(e.counts.addr);
	for (uint32_t i = 0; i < qps; i++)
		if (__atomic_load_n(&fin[i], __ATOMIC_ACQUIRE) == UINT64_MAX)
			return false;
	return true;
}

/* One period of a server's keep-alive reads: answers in, late ones judged, new ones out. */
void probe_step(RemoteWatchEnd &we, unsigned it)
{
	RemoteEnd &e = *we.end;
	ibv_wc wc[16];
	const int n = ibv_poll_cq(e.probe_cq, 16, wc);
	for (int k = 0; k < n; k++) {
		if (wc[k].wr_id < e.posted_at.size())
			e.posted_at[wc[k].wr_id] = 0;
		e.probes_answered += wc[k].status == IBV_WC_SUCCESS;
	}
	const CmConnSet &cm = *we.cm;
	for (size_t i = 0; i < e.words.size() && i < cm.size(); i++) {
		const unsigned at = e.posted_at[i];
		if (at && it - at > kProbeDeadline && e.down == 0 && e.why.empty() && !e.role_done.load(std::memory_order_acquire)) {
			e.why = "the client stopped answering: QP " + std::to_string(i) + "'s keep-alive RDMA READ unanswered for " +
				std::to_string(kProbeDeadline * kWatchPeriodUs / 1000000) + " s";
			we.ctl->abort_now();
		}
		if (at || it % kProbeEvery)
			continue;
		/* The set's connections are in arrival order: QP index i is the one whose peer says so. */
		for (unsigned c = 0; c < cm.size(); c++)
			if (cm.conn(c).peer.qp_index == i &&
			    post_word(cm.conn(c).qp, IBV_WR_RDMA_READ, i, &e.scratch[i], e.scratch_lkey, e.words[i]) == 0) {
				e.posted_at[i] = it;
				e.probes_posted++;
			}
	}
}

/* The end's connections that went down since the last look: how many (-errno when the
 * channel failed), the first one's cause kept, the count of those down updated. */
int note_disconnects(RemoteWatchEnd &we)
{
	RemoteEnd &e = *we.end;
	std::string why;
	const int d = we.cm->poll_disconnects(&why);
	/* A client whose role is over (its requester done, its final counts out) lets its
	 * server go: that server ends on the counts, and may go before this host's lcore,
	 * busy with other flows, is done. */
	const bool over = !e.server && e.counts_posted;
	if (d < 0 || (d > 0 && e.why.empty() && !over))
		e.why = why;
	e.down = we.cm->down();
	return d;
}

/* One period for one end: its disconnects, and what they mean for its flow. */
bool watch_step(RemoteWatchEnd &we, unsigned it)
{
	RemoteEnd &e = *we.end;
	if (e.probe_cq)
		probe_step(we, it);
	const int d = note_disconnects(we);
	if (d < 0) {
		we.ctl->abort_now();
		return false;
	}
	if (e.server && e.down == we.cm->size())
		we.ctl->finish_requesting();   // nothing more will come
	/* Final counts as soon as the client's role is done, not when its whole lcore is:
	 * the lcore may also serve a flow whose client waits for ours (two hosts serving
	 * each other, a job's ranks), and the server ends on them. */
	if (!e.server && we.q && !e.counts_posted && we.ctl->requester_done.load(std::memory_order_acquire))
		e.counts_posted = post_final_counts(we, false) || true;
	if (e.server && e.final_counts && e.counts.addr && counts_all_told(e, static_cast<uint32_t>(we.cm->size())))
		we.ctl->finish_requesting();
	if (!e.server && d > 0 && !e.role_done.load(std::memory_order_acquire) && !e.counts_posted)
		we.ctl->abort_now();   // the server went away mid-run
	return true;
}

void *watch_main(void *arg)
{
	auto *w = static_cast<RemoteWatch *>(arg);
	std::vector<bool> live(w->ends.size(), true);
	for (unsigned it = 1; !w->stop.load(std::memory_order_acquire); it++) {
		for (size_t i = 0; i < w->ends.size(); i++)
			if (live[i])
				live[i] = watch_step(w->ends[i], it);
		usleep(kWatchPeriodUs);
	}
	return nullptr;
}

} // namespace

int remote_watch_start(RemoteWatch *w, std::string *err)
{
	if (w->ends.empty())
		return 0;
	int ret = rte_ctrl_thread_create(&w->thread, "rp-cm-watch", nullptr, watch_main, w);
	if (ret != 0) {
		*err = std::string("rdma_cm watcher thread: ") + strerror(ret < 0 ? -ret : ret);
		return -1;
	}
	w->running = true;
	return 0;
}

namespace {

/* A client of a duration run (or of a one-sided verb), its lcore done: each QP's final
 * count into the server's word again, signalled and waited for, before the disconnect
 * that ends the server's run; the summary counts them. */
void write_final_counts(RemoteWatchEnd &we)
{
	RemoteEnd &e = *we.end;
	const Requester &q = *we.q;
	if (e.down == we.cm->size()) {   // the server ended on the early copy, then went
		e.counts_written = e.counts_early;
		return;
	}
	if (!post_final_counts(we, true))
		return;
	for (unsigned waited_us = 0; e.counts_written < q.nqps && waited_us < 1000000; waited_us += 1000) {
		ibv_wc wc[16];
		const int n = ibv_poll_cq(we.send_cq, 16, wc);
		for (int k = 0; k < n; k++)
			e.counts_written += wc[k].wr_id >= UINT64_MAX - q.nqps + 1 && wc[k].status == IBV_WC_SUCCESS;
		if (n <= 0)
			usleep(1000);
	}
}

} // namespace

void remote_watch_finish(RemoteWatch *w, double stall_s)
{
	if (!w->running)
		return;
	for (RemoteWatchEnd &we : w->ends)
		we.end->role_done.store(true, std::memory_order_release);
	w->stop.store(true, std::memory_order_release);
	pthread_join(w->thread, nullptr);
	w->running = false;
	/* Clients first: each server in the run waits for its client to go. */
	for (RemoteWatchEnd &we : w->ends)
		if (!we.end->server) {
			if (we.q)
				write_final_counts(we);
			we.cm->close();
		}
	for (RemoteWatchEnd &we : w->ends)
		for (double waited = 0; we.end->server && waited < stall_s && !we.ctl->aborted(); waited += kWatchPeriodUs / 1e6) {
			if (note_disconnects(we) < 0 || we.end->down == we.cm->size())
				break;
			usleep(kWatchPeriodUs);
		}
}

} // namespace rp
