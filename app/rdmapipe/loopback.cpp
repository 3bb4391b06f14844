#include "loopback.h"

#include "engine/receiver.h"
#include "engine/writer.h"
#include "verbs/device.h"
#include "verbs/io_context.h"
#include "verbs/memory.h"

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include <unistd.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

namespace rp {

namespace {

std::atomic<RunControl *> g_running{nullptr};

/* The writer keeps up to sq_depth messages in flight plus one chain being built. */
unsigned tx_pool_size(const RunOptions &o, unsigned cache)
{
	return o.sq_depth + o.batch + cache + 1;
}

struct Roles {
	Writer writer;
	Receiver receiver;
	RunControl ctl;
	std::atomic<bool> receiver_done{false};  // receiver lcore: wo, main: ro
	std::atomic<bool> writer_finished{false};
	int writer_rc = -1;
	int receiver_rc = -1;
};

int writer_lcore(void *arg)
{
	auto *r = static_cast<Roles *>(arg);
	r->writer_rc = writer_run(&r->writer);
	r->writer_finished.store(true, std::memory_order_release);
	return r->writer_rc;
}

int receiver_lcore(void *arg)
{
	auto *r = static_cast<Roles *>(arg);
	r->receiver_rc = receiver_run(&r->receiver);
	r->receiver_done.store(true, std::memory_order_release);
	return r->receiver_rc;
}

struct Setup {
	Device dev;
	IoResources wio, rio;
	ibv_qp *wqp = nullptr, *rqp = nullptr;
	rte_mempool *pool = nullptr;
	MrTable pool_mrs;
	RegisteredBuf window, credit_word, credit_src;

	~Setup()
	{
		if (wqp)
			ibv_destroy_qp(wqp);
		if (rqp)
			ibv_destroy_qp(rqp);
		io_resources_destroy(&wio);
		io_resources_destroy(&rio);
		mr_table_release(&pool_mrs);
		rte_mempool_free(pool);
		registered_buf_free(&window);
		registered_buf_free(&credit_word);
		registered_buf_free(&credit_src);
		device_close(&dev);
	}
};

double tsc_to_s(uint64_t t)
{
	return static_cast<double>(t) / static_cast<double>(rte_get_tsc_hz());
}

void print_wc_errors(const char *who, const WcErrorCounts &e)
{
	if (e.total == 0)
		return;
	for (unsigned s = 0; s < kWcStatusCount; s++)
		if (e.by_status[s])
			printf("  %s completion errors: %" PRIu64 " x %s\n", who, e.by_status[s],
			       ibv_wc_status_str(static_cast<ibv_wc_status>(s)));
	printf("  %s first error:        %s (opcode %u, wr_id %" PRIu64 ")\n", who,
	       ibv_wc_status_str(static_cast<ibv_wc_status>(e.first_status)), e.first_opcode, e.first_wr_id);
}

int summarise(const RunOptions &o, const Setup &s, const Roles &r)
{
	const WriterCounters &w = r.writer.c;
	const ReceiverCounters &v = r.receiver.c;
	uint64_t end = v.end_tsc > w.start_tsc ? v.end_tsc : w.end_tsc;
	double secs = tsc_to_s(end - w.start_tsc);
	if (secs <= 0)
		secs = 1e-9;
	uint64_t lost = w.sent > v.received ? w.sent - v.received : 0;
	uint64_t completion_errors = w.wc_errors.total + v.wc_errors.total;

	printf("summary:\n");
	printf("  device:              %s port %u, GID index %d, MTU %s\n", s.dev.name.c_str(), s.dev.port,
	       s.dev.gid_index, mtu_str(s.dev.port_attr.active_mtu));
	printf("  verb:                RDMA_WRITE_WITH_IMM, %u B, batch %u, signal every %u, send queue %u, window %u\n",
	       o.msg_bytes, o.batch, o.signal_every, o.sq_depth, o.slots);
	printf("  messages sent:       %" PRIu64 "\n", w.sent);
	printf("  messages received:   %" PRIu64 "\n", v.received);
	printf("  messages verified:   %" PRIu64 "%s\n", v.verified, o.verify ? "" : " (sequence only: --no-verify)");
	printf("  bytes received:      %" PRIu64 "\n", v.bytes);
	printf("  elapsed:             %.3f s\n", secs);
	printf("  message rate:        %.4f Mmsg/s\n", static_cast<double>(v.received) / secs / 1e6);
	printf("  throughput:          %.4f Gbit/s\n", static_cast<double>(v.bytes) * 8 / secs / 1e9);
	printf("  send posts:          %" PRIu64 " (%.1f WRs per ibv_post_send)\n", w.post_calls,
	       w.post_calls ? static_cast<double>(w.sent) / static_cast<double>(w.post_calls) : 0.0);
	printf("  srq posts:           %" PRIu64 "\n", v.srq_post_calls);
	printf("  credit writes:       %" PRIu64 "\n", v.credit_writes);
	printf("  payload errors:      %" PRIu64 "\n", v.payload_errors);
	printf("  sequence errors:     %" PRIu64 "\n", v.sequence_errors);
	printf("  length errors:       %" PRIu64 "\n", v.length_errors);
	printf("  completion errors:   %" PRIu64 "\n", completion_errors);
	printf("  lost messages:       %" PRIu64 "\n", lost);
	if (v.first_bad_seq != UINT64_MAX) {
		if (v.first_bad_offset >= 0)
			printf("  first bad message:   seq %" PRIu64 ", byte %" PRId64 " differs from the pattern\n",
			       v.first_bad_seq, v.first_bad_offset);
		else
			printf("  first bad message:   seq %" PRIu64 "\n", v.first_bad_seq);
	}
	print_wc_errors("writer", w.wc_errors);
	print_wc_errors("receiver", v.wc_errors);
	if (w.fail_reason)
		printf("  writer failed:       %s\n", w.fail_reason);
	if (v.fail_reason)
		printf("  receiver failed:     %s\n", v.fail_reason);
	if (w.credit_anomalies)
		printf("  credit anomalies:    %" PRIu64 "\n", w.credit_anomalies);

	bool pass = r.writer_rc == 0 && r.receiver_rc == 0 && lost == 0 && v.verified == w.sent &&
		    completion_errors == 0;
	printf("result: %s\n", pass ? "PASS" : "FAIL");
	return pass ? kExitOk : kExitRunFailed;
}

} // namespace

void request_stop()
{
	RunControl *c = g_running.load();
	if (c)
		c->abort.store(true);
}

int run_loopback(const RunOptions &o)
{
	unsigned main_lcore = rte_get_main_lcore();
	unsigned workers[2], nworkers = 0, lc;
	RTE_LCORE_FOREACH_WORKER(lc) {
		if (nworkers < 2)
			workers[nworkers++] = lc;
	}
	if (nworkers == 0) {
		fprintf(stderr, "rdmapipe: the loopback run needs 2 lcores (a writer and a receiver); "
				"EAL has only lcore %u: pass -l 0-1\n", main_lcore);
		return kExitUsage;
	}

	std::string names, why, err;
	if (count_devices(&names, &why) == 0) {
		fprintf(stderr, "rdmapipe: no RDMA device: %s.\n"
				"  No RDMA hardware? Run on soft-RoCE: tools/softroce -- rdmapipe ... "
				"(boots a VM with rdma_rxe where the kernel has none; see README.md)\n",
			why.c_str());
		return kExitSetup;
	}

	Setup s;
	if (device_open(&s.dev, o.device, o.port, o.gid_index, &err) != 0) {
		fprintf(stderr, "rdmapipe: %s\n", err.c_str());
		return kExitSetup;
	}

	auto r = std::make_unique<Roles>();
	unsigned cache = o.batch * 2 > RTE_MEMPOOL_CACHE_MAX_SIZE ? RTE_MEMPOOL_CACHE_MAX_SIZE : o.batch * 2;
	unsigned npool = tx_pool_size(o, cache);
	if (cache * 3 / 2 > npool)
		cache = 0;
	s.pool = rte_mempool_create("rp_tx_pool", npool, o.msg_bytes, cache, 0, nullptr, nullptr, nullptr,
				    nullptr, static_cast<int>(rte_socket_id()), 0);
	if (s.pool == nullptr) {
		fprintf(stderr, "rdmapipe: tx buffer pool (%u x %u B): rte_mempool_create: %s "
				"(give EAL more memory: -m, or more hugepages)\n",
			npool, o.msg_bytes, rte_strerror(rte_errno));
		return kExitSetup;
	}
	/* Least access each use needs: send sources are only read by the NIC. */
	if (mr_register_mempool(s.dev, s.pool, 0, &s.pool_mrs, &err) != 0 ||
	    registered_buf_alloc(s.dev, "rp_rx_window", static_cast<size_t>(o.slots) * o.msg_bytes,
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &s.window, &err) != 0 ||
	    registered_buf_alloc(s.dev, "rp_credit_word", 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
				 &s.credit_word, &err) != 0 ||
	    registered_buf_alloc(s.dev, "rp_credit_src", kCreditRing * sizeof(uint64_t), 0, &s.credit_src,
				 &err) != 0) {
		fprintf(stderr, "rdmapipe: %s\n", err.c_str());
		return kExitSetup;
	}

	uint32_t srq_depth = o.slots + o.srq_refill;   // window + what may wait for a refill
	uint32_t writer_cq = o.sq_depth / o.signal_every + 2;
	if (io_resources_create(s.dev, writer_cq, 1, 0, &s.wio, &err) != 0 ||
	    io_resources_create(s.dev, kCreditRing, srq_depth, srq_depth, &s.rio, &err) != 0 ||
	    (s.wqp = rc_qp_create(s.dev, s.wio, o.sq_depth, &err)) == nullptr ||
	    (s.rqp = rc_qp_create(s.dev, s.rio, kCreditRing, &err)) == nullptr) {
		fprintf(stderr, "rdmapipe: %s\n", err.c_str());
		return kExitSetup;
	}
	RcPeer to_receiver{s.rqp->qp_num, 0x1000, s.dev.gid};
	RcPeer to_writer{s.wqp->qp_num, 0x2000, s.dev.gid};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (rc_qp_connect(s.dev, s.wqp, to_writer.psn, to_receiver, access, &err) != 0 ||
	    rc_qp_connect(s.dev, s.rqp, to_receiver.psn, to_writer, access, &err) != 0) {
		fprintf(stderr, "rdmapipe: %s\n", err.c_str());
		return kExitSetup;
	}

	uint64_t hz = rte_get_tsc_hz();
	Writer &w = r->writer;
	w.qp = s.wqp;
	w.send_cq = s.wio.send_cq;
	w.pool = s.pool;
	w.mrs = &s.pool_mrs;
	w.credit_word = static_cast<volatile uint64_t *>(s.credit_word.addr);
	w.ctl = &r->ctl;
	w.p = WriterParams{o.msg_bytes, o.batch, o.signal_every, o.sq_depth, o.slots,
			   o.duration_s > 0 ? 0 : o.messages,
			   static_cast<uint64_t>(o.duration_s * static_cast<double>(hz)),
			   static_cast<uint64_t>(o.stall_timeout_s * static_cast<double>(hz)), o.corrupt_msg};
	if (writer_init(&w, reinterpret_cast<uintptr_t>(s.window.addr), s.window.mr->rkey, &err) != 0) {
		fprintf(stderr, "rdmapipe: %s\n", err.c_str());
		return kExitUsage;
	}

	Receiver &v = r->receiver;
	v.qp = s.rqp;
	v.recv_cq = s.rio.recv_cq;
	v.send_cq = s.rio.send_cq;
	v.srq = s.rio.srq;
	v.window = static_cast<const unsigned char *>(s.window.addr);
	v.credit_src = static_cast<uint64_t *>(s.credit_src.addr);
	v.credit_lkey = s.credit_src.mr->lkey;
	v.credit_remote_addr = reinterpret_cast<uintptr_t>(s.credit_word.addr);
	v.credit_rkey = s.credit_word.mr->rkey;
	v.ctl = &r->ctl;
	uint32_t credit_step = o.slots / 4 ? o.slots / 4 : 1;
	v.p = ReceiverParams{o.msg_bytes, o.slots, credit_step, o.verify,
			     static_cast<uint64_t>(o.stall_timeout_s * static_cast<double>(hz)), hz};
	if (v.refill.init(srq_depth, o.srq_refill, kRxPollBurst) != 0) {
		fprintf(stderr, "rdmapipe: SRQ refill: bad sizes (depth %u, threshold %u)\n", srq_depth, o.srq_refill);
		return kExitUsage;
	}
	int ret = v.refill.fill(*v.ops, v.srq);
	if (ret < 0) {
		fprintf(stderr, "rdmapipe: %s: filling the SRQ with %u receives: %s\n", s.dev.name.c_str(),
			srq_depth, strerror(-ret));
		return kExitSetup;
	}

	/* Roles: receiver on the first worker (or main when there is one worker), writer on
	 * the next. With two workers main only watches, sleeping, so it costs no CPU. */
	bool main_receives = nworkers == 1;
	unsigned writer_lc = main_receives ? workers[0] : workers[1];
	if (!o.quiet)
		printf("rdmapipe: loopback on %s: writer lcore %u -> receiver lcore %u, %s\n", s.dev.name.c_str(),
		       writer_lc, main_receives ? main_lcore : workers[0],
		       o.duration_s > 0 ? (std::to_string(o.duration_s) + " s").c_str()
					: (std::to_string(o.messages) + " messages").c_str());
	fflush(stdout);
	g_running.store(&r->ctl);
	if (!main_receives)
		rte_eal_remote_launch(receiver_lcore, r.get(), workers[0]);
	rte_eal_remote_launch(writer_lcore, r.get(), writer_lc);
	if (main_receives) {
		receiver_lcore(r.get());
	} else {
		while (!r->receiver_done.load(std::memory_order_acquire) ||
		       !r->writer_finished.load(std::memory_order_acquire))
			usleep(10000);
	}
	/* A receiver that gave up cannot be waited for by the writer: stop it too. */
	if (r->receiver_rc != 0 && !r->writer_finished.load(std::memory_order_acquire))
		r->ctl.abort.store(true);
	rte_eal_mp_wait_lcore();
	g_running.store(nullptr);

	return summarise(o, s, *r);
}

} // namespace rp
