/* bare-verbs: the limit. One RC QP pair on one device (the two ends in this process,
 * connected to each other), RDMA WRITEs of one size from pre-built chains with a
 * signalled WR per chain, and nothing else: no buffer pool, no verification, no
 * counters but two. What it sends per second, and what its loop costs per message, no
 * tool can beat on that device; tools/bench reports every rate as a ratio to it.
 *
 *   bare-verbs -d rxe0 [-x GID_INDEX] [-s 64] [-n 1000000] [-b 32] [-q 128]
 *
 * libibverbs only (no DPDK, no rdma_cm: the QPs are connected by hand, as perftest
 * does after its TCP exchange). One thread posts and polls. */
#include <infiniband/verbs.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <getopt.h>
#include <sys/resource.h>
#include <vector>

namespace {

struct Args {
	const char *dev = nullptr;
	int gid = -1;   // -1: the first RoCE v2 GID with an IPv4 address
	uint32_t size = 64;
	uint64_t messages = 1000000;
	uint32_t batch = 32;   // WRs per chain, the last one signalled
	uint32_t sq_depth = 128;
};

[[noreturn]] void die(const char *what, int err)
{
	fprintf(stderr, "bare-verbs: %s: %s\n", what, strerror(err));
	exit(3);
}

void usage(FILE *f)
{
	fprintf(f, "usage: bare-verbs -d DEVICE [-x GID_INDEX] [-s SIZE] [-n MESSAGES] [-b BATCH] [-q SQ_DEPTH]\n"
		   "  RDMA WRITEs of SIZE bytes (default 64) over one RC QP pair on DEVICE, in pre-built\n"
		   "  chains of BATCH WRs (default 32; one ibv_post_send each, the last WR signalled),\n"
		   "  at most SQ_DEPTH (default 128) outstanding; MESSAGES default 1000000.\n"
		   "  Prints the message rate and the CPU time per message of its one thread.\n");
}

bool number(const char *s, uint64_t lo, uint64_t hi, uint64_t *v)
{
	char *end = nullptr;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || end == s || *end || x < lo || x > hi)
		return false;
	*v = x;
	return true;
}

Args parse(int argc, char **argv)
{
	Args a;
	uint64_t v;
	for (int c; (c = getopt(argc, argv, "d:x:s:n:b:q:h")) != -1;) {
		const char *bad = nullptr;
		switch (c) {
		case 'd': a.dev = optarg; break;
		case 'x': if (number(optarg, 0, 255, &v)) a.gid = static_cast<int>(v); else bad = "-x: 0..255"; break;
		case 's': if (number(optarg, 1, 1u << 30, &v)) a.size = static_cast<uint32_t>(v); else bad = "-s: 1..2^30"; break;
		case 'n': if (number(optarg, 1, UINT64_MAX >> 1, &v)) a.messages = v; else bad = "-n: 1 or more"; break;
		case 'b': if (number(optarg, 1, 4096, &v)) a.batch = static_cast<uint32_t>(v); else bad = "-b: 1..4096"; break;
		case 'q': if (number(optarg, 1, 1u << 20, &v)) a.sq_depth = static_cast<uint32_t>(v); else bad = "-q: 1..2^20"; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
		if (bad) {
			fprintf(stderr, "bare-verbs: %s ('%s')\n", bad, optarg);
			exit(2);
		}
	}
	if (!a.dev || optind != argc || a.sq_depth < a.batch) {
		fprintf(stderr, "bare-verbs: %s\n", !a.dev ? "-d DEVICE is required" : optind != argc ? "unexpected argument"
												 : "-q must hold one chain (-b)");
		usage(stderr);
		exit(2);
	}
	return a;
}

ibv_context *open_device(const char *name)
{
	int n = 0;
	ibv_device **list = ibv_get_device_list(&n);
	ibv_context *ctx = nullptr;
	for (int i = 0; list && i < n && !ctx; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "bare-verbs: no device '%s' (ibv_devices lists them)\n", name);
		exit(3);
	}
	return ctx;
}

/* The first RoCE v2 GID that holds an IPv4 address (::ffff:a.b.c.d), as rdmapipe and
 * perftest's -x pick for soft-RoCE; else index 0. */
int pick_gid(ibv_context *ctx)
{
	for (uint32_t i = 0; i < 16; i++) {
		ibv_gid_entry e{};
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0) != 0)
			continue;
		const uint8_t *r = e.gid.raw;
		bool v4 = r[10] == 0xff && r[11] == 0xff;
		for (int k = 0; k < 10; k++)
			v4 = v4 && r[k] == 0;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && v4)
			return static_cast<int>(i);
	}
	return 0;
}

void to_rts(ibv_qp *qp, uint32_t peer_qpn, const ibv_gid &gid, int gid_index, ibv_mtu mtu)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("ibv_modify_qp INIT", e);
	a = {};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = peer_qpn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = static_cast<uint8_t>(gid_index);
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
						  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("ibv_modify_qp RTR", e);
	a = {};
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
						  IBV_QP_MAX_QP_RD_ATOMIC))
		die("ibv_modify_qp RTS", e);
}

ibv_qp *make_qp(ibv_pd *pd, ibv_cq *cq, const Args &a)
{
	ibv_qp_init_attr qa{};
	qa.send_cq = qa.recv_cq = cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 0;
	qa.cap.max_send_wr = a.sq_depth;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	ibv_qp *qp = ibv_create_qp(pd, &qa);
	if (!qp)
		die("ibv_create_qp", errno);
	return qp;
}

double cpu_seconds()
{
	rusage u{};
	getrusage(RUSAGE_THREAD, &u);
	return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double now()
{
	timespec t{};
	clock_gettime(CLOCK_MONOTONIC, &t);
	return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

} // namespace

int main(int argc, char **argv)
{
	const Args a = parse(argc, argv);
	ibv_context *ctx = open_device(a.dev);
	ibv_port_attr port{};
	if (int e = ibv_query_port(ctx, 1, &port))
		die("ibv_query_port", e);
	const int gid_index = a.gid >= 0 ? a.gid : pick_gid(ctx);
	ibv_gid gid{};
	if (int e = ibv_query_gid(ctx, 1, gid_index, &gid))
		die("ibv_query_gid", e);
	ibv_pd *pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", errno);
	/* The source: one buffer per WR of a chain; the target: as many slots. */
	std::vector<char> src(static_cast<size_t>(a.size) * a.batch, 'a'), dst(src.size());
	ibv_mr *smr = ibv_reg_mr(pd, src.data(), src.size(), IBV_ACCESS_LOCAL_WRITE);
	ibv_mr *dmr = ibv_reg_mr(pd, dst.data(), dst.size(), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!smr || !dmr)
		die("ibv_reg_mr", errno);
	ibv_cq *cq = ibv_create_cq(ctx, static_cast<int>(a.sq_depth), nullptr, nullptr, 0);
	ibv_cq *rcq = ibv_create_cq(ctx, 1, nullptr, nullptr, 0);
	if (!cq || !rcq)
		die("ibv_create_cq", errno);
	ibv_qp *qp = make_qp(pd, cq, a), *peer = make_qp(pd, rcq, a);
	to_rts(qp, peer->qp_num, gid, gid_index, port.active_mtu);
	to_rts(peer, qp->qp_num, gid, gid_index, port.active_mtu);

	/* The chain, built once: WR i writes buffer i to slot i; the last one signalled.
	 * Posting it again as it is sends the next batch. */
	std::vector<ibv_sge> sge(a.batch);
	std::vector<ibv_send_wr> wr(a.batch);
	for (uint32_t i = 0; i < a.batch; i++) {
		sge[i] = {reinterpret_cast<uintptr_t>(src.data()) + static_cast<uint64_t>(i) * a.size, a.size, smr->lkey};
		wr[i].wr_id = i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = i + 1 == a.batch ? IBV_SEND_SIGNALED : 0;
		wr[i].wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(dst.data()) + static_cast<uint64_t>(i) * a.size;
		wr[i].wr.rdma.rkey = dmr->rkey;
		wr[i].next = i + 1 < a.batch ? &wr[i + 1] : nullptr;
	}

	/* Whole chains, then one of the rest (if any), cut short and signalled. */
	const uint32_t rest = static_cast<uint32_t>(a.messages % a.batch);
	const uint64_t chains = a.messages / a.batch + (rest != 0);
	const uint32_t most = a.sq_depth / a.batch;   // chains outstanding at once
	uint64_t posted = 0, done = 0;
	ibv_wc wc[16];
	const double t0 = now(), c0 = cpu_seconds();
	while (done < chains) {
		while (posted < chains && posted - done < most) {
			ibv_send_wr *bad = nullptr;
			if (rest && posted + 1 == chains) {
				wr[rest - 1].send_flags = IBV_SEND_SIGNALED;
				wr[rest - 1].next = nullptr;
			}
			if (int e = ibv_post_send(qp, wr.data(), &bad))
				die("ibv_post_send", e);
			posted++;
		}
		const int k = ibv_poll_cq(cq, 16, wc);
		if (k < 0)
			die("ibv_poll_cq", EIO);
		for (int i = 0; i < k; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "bare-verbs: completion error: %s\n", ibv_wc_status_str(wc[i].status));
				return 1;
			}
		done += static_cast<uint64_t>(k);
	}
	const double secs = now() - t0, cpu = cpu_seconds() - c0;
	printf("bare-verbs: %s, RDMA_WRITE %u B, 1 RC QP, chains of %u (one signalled), send queue %u, GID index %d\n",
	       a.dev, a.size, a.batch, a.sq_depth, gid_index);
	printf("  messages:      %" PRIu64 " in %.3f s\n", a.messages, secs);
	printf("  message rate:  %.4f Mmsg/s\n", static_cast<double>(a.messages) / secs / 1e6);
	printf("  throughput:    %.4f Gbit/s\n", static_cast<double>(a.messages) * a.size * 8 / secs / 1e9);
	printf("  cpu per message: %.3f us (user and system time of the posting thread)\n", cpu / static_cast<double>(a.messages) * 1e6);
	ibv_destroy_qp(qp);
	ibv_destroy_qp(peer);
	ibv_destroy_cq(cq);
	ibv_destroy_cq(rcq);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(dmr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
