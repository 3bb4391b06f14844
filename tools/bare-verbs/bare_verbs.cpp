/* bare-verbs: the limit. One RC QP pair on one device (the two ends in this process,
 * connected to each other), messages of one verb and one size from pre-built chains
 * with a signalled WR per chain, and nothing else: no buffer pool, no verification, no
 * counters but a few. What it sends per second, and what its loop costs per message,
 * no tool can beat on that device; tools/bench reports every rate as a ratio to the
 * bare loop of the same verb.
 *
 *   bare-verbs -d rxe0 [-v VERB] [-x GID_INDEX] [-s 64] [-n 1000000] [-b 32] [-q 128] [-r 512]
 *
 * libibverbs only (no DPDK, no rdma_cm: the QPs are connected by hand, as perftest
 * does after its TCP exchange). One thread runs both ends: the sender posts chains and
 * polls the send CQ (bare_send_side); for write_imm and send, the receiver polls its
 * receive CQ and refills its SRQ in batches (bare_recv_side). Each end is one
 * non-inlined function, so that callgrind's inclusive cost of it is that end's. The
 * receiver's work after a poll that returned completions (their status, the counts,
 * the refill) is a non-inlined function of its own, bare_recv_work: its inclusive cost
 * per message leaves the empty polls out, as rdmapipe's responder_busy does.
 *
 * --verify (write, write_imm, send): the sender stamps every message with rdmapipe's
 * payload pattern (engine/pattern.h, key = the message's sequence) before posting it,
 * and the receiver checks every message it receives; each end's extra work stays
 * inside its function. Without it the loop is the unverified one, unchanged. */
#include "engine/pattern.h"

#include <infiniband/verbs.h>

#include <arpa/inet.h>
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <getopt.h>
#include <numeric>
#include <sys/resource.h>
#include <vector>

namespace {

constexpr uint32_t kRecvBatch = 32;   // receives per ibv_post_srq_recv
constexpr uint32_t kPollBatch = 32;   // completions per ibv_poll_cq
constexpr uint32_t kAtomicBytes = 8;

/* An end's function: never inlined nor cloned, so that callgrind files all of that
 * end's work under its one name (clang has no noipa; it does not clone noinline ones). */
#if defined(__clang__)
#define BARE_END __attribute__((noinline))
#else
#define BARE_END __attribute__((noinline, noipa))
#endif

struct Verb {
	const char *name;
	ibv_wr_opcode op;
	bool receives;   // the peer consumes a receive per message
	bool atomic;
};
constexpr Verb kVerbs[] = {
	{"write", IBV_WR_RDMA_WRITE, false, false},
	{"write_imm", IBV_WR_RDMA_WRITE_WITH_IMM, true, false},
	{"send", IBV_WR_SEND, true, false},
	{"read", IBV_WR_RDMA_READ, false, false},
	{"fetch_add", IBV_WR_ATOMIC_FETCH_AND_ADD, false, true},
	{"cmp_swap", IBV_WR_ATOMIC_CMP_AND_SWP, false, true},
};

struct Args {
	const char *dev = nullptr;
	const Verb *verb = &kVerbs[0];
	int gid = -1;   // -1: the first RoCE v2 GID with an IPv4 address
	uint32_t size = 64;
	uint64_t messages = 1000000;
	uint32_t batch = 32;   // WRs per chain, the last one signalled
	uint32_t sq_depth = 128;
	uint32_t srq_depth = 512;
	bool verify = false;
};

[[noreturn]] void die(const char *what, int err)
{
	fprintf(stderr, "bare-verbs: %s: %s\n", what, strerror(err));
	exit(3);
}

void usage(FILE *f)
{
	fprintf(f, "usage: bare-verbs -d DEVICE [-v VERB] [-x GID_INDEX] [-s SIZE] [-n MESSAGES] [-b BATCH]\n"
		   "                  [-q SQ_DEPTH] [-r SRQ_DEPTH] [--verify]\n"
		   "  MESSAGES (default 1000000) of VERB over one RC QP pair on DEVICE, both ends in this\n"
		   "  process and thread, in pre-built chains of BATCH WRs (default 32; one ibv_post_send\n"
		   "  each, the last WR signalled), at most SQ_DEPTH (default 128) outstanding.\n"
		   "  VERB: write (default), write_imm, send, read, fetch_add, cmp_swap.\n"
		   "  SIZE: bytes per message (default 64); atomics are always 8 B.\n"
		   "  write_imm and send: the receiving QP takes its receives from an SRQ of SRQ_DEPTH\n"
		   "  (default 512, a multiple of %u), refilled by one chain of %u receives whenever %u\n"
		   "  have completed on its own receive CQ; the sender never has more messages posted\n"
		   "  than receives (no RNR). read and atomics: as many outstanding as the device allows.\n"
		   "  -x: the GID index (default: the first RoCE v2 GID with an IPv4 address).\n"
		   "  --verify (write, write_imm, send): the sender stamps each message with rdmapipe's\n"
		   "  payload pattern (key: its sequence) before posting it, from one buffer per message\n"
		   "  the send queue holds; write_imm and send: the receiver checks every message (its\n"
		   "  sequence: the immediate, or the order of arrival), into one slot or receive buffer\n"
		   "  per receive the SRQ holds, and counts mismatches.\n"
		   "  Prints the message rate, the CPU time per message of its one thread, and the two\n"
		   "  functions whose inclusive cost (callgrind) is the sender's and the receiver's.\n"
		   "  Exit status: 0 done, 1 a completion error or (--verify) a payload mismatch, 2 bad\n"
		   "  arguments, 3 set-up failure.\n",
		kRecvBatch, kRecvBatch, kRecvBatch);
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

const Verb *find_verb(const char *name)
{
	for (const Verb &v : kVerbs)
		if (strcmp(v.name, name) == 0)
			return &v;
	return nullptr;
}

const char *check(const Args &a)
{
	if (!a.dev)
		return "-d DEVICE is required";
	if (a.sq_depth < a.batch)
		return "-q must hold one chain (-b)";
	if (a.srq_depth % kRecvBatch)
		return "-r must be a multiple of 32";
	if (a.verb->receives && a.srq_depth < a.batch)
		return "-r must hold one chain (-b)";
	if (a.verify && (a.verb->atomic || a.verb->op == IBV_WR_RDMA_READ))
		return "--verify: write, write_imm or send";
	if (a.verify && a.sq_depth % a.batch)
		return "--verify: -q must be a multiple of -b (one buffer per message outstanding)";
	return nullptr;
}

Args parse(int argc, char **argv)
{
	Args a;
	uint64_t v;
	static const option longs[] = {{"verify", no_argument, nullptr, 'V'}, {"help", no_argument, nullptr, 'h'}, {}};
	for (int c; (c = getopt_long(argc, argv, "d:v:x:s:n:b:q:r:h", longs, nullptr)) != -1;) {
		const char *bad = nullptr;
		switch (c) {
		case 'd': a.dev = optarg; break;
		case 'v': if (!(a.verb = find_verb(optarg))) bad = "-v: write, write_imm, send, read, fetch_add or cmp_swap"; break;
		case 'x': if (number(optarg, 0, 255, &v)) a.gid = static_cast<int>(v); else bad = "-x: 0..255"; break;
		case 's': if (number(optarg, 1, 1u << 30, &v)) a.size = static_cast<uint32_t>(v); else bad = "-s: 1..2^30"; break;
		case 'n': if (number(optarg, 1, UINT64_MAX >> 1, &v)) a.messages = v; else bad = "-n: 1 or more"; break;
		case 'b': if (number(optarg, 1, 4096, &v)) a.batch = static_cast<uint32_t>(v); else bad = "-b: 1..4096"; break;
		case 'q': if (number(optarg, 1, 1u << 20, &v)) a.sq_depth = static_cast<uint32_t>(v); else bad = "-q: 1..2^20"; break;
		case 'r': if (number(optarg, kRecvBatch, 1u << 20, &v)) a.srq_depth = static_cast<uint32_t>(v); else bad = "-r: 32..2^20"; break;
		case 'V': a.verify = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
		if (bad) {
			fprintf(stderr, "bare-verbs: %s ('%s')\n", bad, optarg);
			exit(2);
		}
	}
	const char *bad = optind != argc ? "unexpected argument" : check(a);
	if (bad) {
		fprintf(stderr, "bare-verbs: %s\n", bad);
		usage(stderr);
		exit(2);
	}
	if (a.verb->atomic)
		a.size = kAtomicBytes;
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

struct Path {
	ibv_gid gid;
	int gid_index;
	ibv_mtu mtu;
	uint8_t rd_atomic;        // reads and atomics this QP may have outstanding
	uint8_t dest_rd_atomic;   // ... and may answer at once
};

void to_rts(ibv_qp *qp, uint32_t peer_qpn, const Path &p)
{
	ibv_qp_attr a{};
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("ibv_modify_qp INIT", e);
	a = {};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = p.mtu;
	a.dest_qp_num = peer_qpn;
	a.max_dest_rd_atomic = p.dest_rd_atomic;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = p.gid;
	a.ah_attr.grh.sgid_index = static_cast<uint8_t>(p.gid_index);
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
	a.max_rd_atomic = p.rd_atomic;
	if (int e = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
						  IBV_QP_MAX_QP_RD_ATOMIC))
		die("ibv_modify_qp RTS", e);
}

ibv_qp *make_qp(ibv_pd *pd, ibv_cq *scq, ibv_cq *rcq, ibv_srq *srq, uint32_t sq_depth)
{
	ibv_qp_init_attr qa{};
	qa.send_cq = scq;
	qa.recv_cq = rcq;
	qa.srq = srq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 0;
	qa.cap.max_send_wr = sq_depth;
	qa.cap.max_recv_wr = srq ? 0 : 1;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	ibv_qp *qp = ibv_create_qp(pd, &qa);
	if (!qp)
		die("ibv_create_qp", errno);
	return qp;
}

[[noreturn]] void completion_error(const char *end, const ibv_wc &wc)
{
	fprintf(stderr, "bare-verbs: %s completion error: %s (status %d, wr_id %" PRIu64 ")\n", end,
		ibv_wc_status_str(wc.status), wc.status, wc.wr_id);
	exit(1);
}

/* One poll of an end's CQ: the completions it took (a failed poll ends the run). */
inline uint32_t poll_cq(ibv_cq *cq, const char *end, ibv_wc *wc)
{
	const int k = ibv_poll_cq(cq, kPollBatch, wc);
	if (k < 0) {
		char what[48];
		snprintf(what, sizeof what, "ibv_poll_cq (%s CQ)", end);
		die(what, EIO);
	}
	return static_cast<uint32_t>(k);
}

/* Each of k completions a success, else the run ends, naming the end. */
inline void check_status(const ibv_wc *wc, uint32_t k, const char *end)
{
	for (uint32_t i = 0; i < k; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			completion_error(end, wc[i]);
}

/* Both together. Inlined into each end, which keeps its cost. */
inline uint32_t poll_checked(ibv_cq *cq, const char *end, ibv_wc *wc)
{
	const uint32_t k = poll_cq(cq, end, wc);
	check_status(wc, k, end);
	return k;
}

inline uint32_t poll_checked(ibv_cq *cq, const char *end)
{
	ibv_wc wc[kPollBatch];
	return poll_checked(cq, end, wc);
}

/* The sender: whole chains, then one of the rest (if any), cut short and signalled. */
struct Sender {
	ibv_qp *qp;
	ibv_cq *cq;
	std::vector<ibv_send_wr> wr;
	uint32_t batch, rest, most;   // most: chains outstanding at once
	uint64_t chains, posted = 0, done = 0;
	uint64_t sent = 0;            // messages posted
};

/* The receiver (write_imm, send): the SRQ is refilled by one pre-built chain. */
struct Receiver {
	ibv_srq *srq = nullptr;
	ibv_cq *cq = nullptr;
	std::vector<ibv_recv_wr> wr;
	uint64_t posted = 0, received = 0;   // receives
	uint32_t since_refill = 0;
};

/* Posts what the send queue and the receives posted (credit) allow, then polls. */
BARE_END void bare_send_side(Sender &s, uint64_t credit)
{
	while (s.posted < s.chains && s.posted - s.done < s.most) {
		const bool last = s.rest && s.posted + 1 == s.chains;
		const uint32_t n = last ? s.rest : s.batch;
		if (s.sent + n > credit)
			break;
		if (last) {
			s.wr[s.rest - 1].send_flags = IBV_SEND_SIGNALED;
			s.wr[s.rest - 1].next = nullptr;
		}
		ibv_send_wr *bad = nullptr;
		if (int e = ibv_post_send(s.qp, s.wr.data(), &bad))
			die("ibv_post_send", e);
		s.posted++;
		s.sent += n;
	}
	s.done += poll_checked(s.cq, "send");
}

/* The k completions of a poll (none: the first fill) checked and counted; the SRQ
 * given a chain back for every chain's worth consumed. */
BARE_END void bare_recv_work(Receiver &r, const ibv_wc *wc, uint32_t k)
{
	check_status(wc, k, "receive");
	r.received += k;
	r.since_refill += k;
	while (r.since_refill >= kRecvBatch) {
		ibv_recv_wr *bad = nullptr;
		if (int e = ibv_post_srq_recv(r.srq, r.wr.data(), &bad))
			die("ibv_post_srq_recv", e);
		r.since_refill -= kRecvBatch;
		r.posted += kRecvBatch;
	}
}

/* Polls the receive CQ; what it took is bare_recv_work's. */
BARE_END void bare_recv_side(Receiver &r)
{
	ibv_wc wc[kPollBatch];
	const uint32_t k = poll_cq(r.cq, "receive", wc);
	if (k)
		bare_recv_work(r, wc, k);
}

/* --verify: the sender as above, but `most` chains, chain c on its own source buffers
 * (c * batch ...), posted in turn: a chain is rewritten only after its completion (an RC
 * send queue completes in order), so no buffer changes while a WR that reads it is
 * outstanding. Each message is stamped, and a write's target slot and a write_imm's
 * immediate (its sequence) set, just before its chain is posted. */
struct VerifiedSender {
	Sender s;
	uint32_t size;
	char *dst;            // writes: the target slots
	uint64_t dst_slots;   // one per receive the SRQ holds (see main)
	bool imm;
};

/* The receiver under --verify. write_imm: message seq (its immediate) is in target slot
 * seq % slots, checked before its receive is given back (the sender never runs further
 * ahead than the receives posted). send: the message is in its receive's buffer (wr_id),
 * its sequence the order of arrival (one RC QP); a buffer is posted again, in the next
 * refill chain, only after its message was checked. */
struct VerifiedReceiver {
	Receiver r;
	uint32_t size;
	char *data;             // write_imm: the target slots; send: the receive buffers
	uint64_t slots;
	bool by_imm;
	std::vector<ibv_sge> sge;         // send: one per receive buffer
	std::vector<uint32_t> free;       // send: buffers checked and not yet posted again (a ring)
	uint64_t free_head = 0, free_tail = 0;
	uint64_t mismatches = 0;
};

BARE_END void bare_send_side(VerifiedSender &v, uint64_t credit)
{
	Sender &s = v.s;
	while (s.posted < s.chains && s.posted - s.done < s.most) {
		const bool last = s.rest && s.posted + 1 == s.chains;
		const uint32_t n = last ? s.rest : s.batch;
		if (s.sent + n > credit)
			break;
		ibv_send_wr *chain = &s.wr[(s.posted % s.most) * s.batch];
		if (last) {
			chain[s.rest - 1].send_flags = IBV_SEND_SIGNALED;
			chain[s.rest - 1].next = nullptr;
		}
		for (uint32_t i = 0; i < n; i++) {
			const uint64_t seq = s.sent + i;
			rp::pattern_fill(reinterpret_cast<void *>(chain[i].sg_list->addr), v.size, seq);
			if (v.dst)
				chain[i].wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(v.dst) + seq % v.dst_slots * v.size;
			if (v.imm)
				chain[i].imm_data = htonl(static_cast<uint32_t>(seq));
		}
		ibv_send_wr *bad = nullptr;
		if (int e = ibv_post_send(s.qp, chain, &bad))
			die("ibv_post_send", e);
		s.posted++;
		s.sent += n;
	}
	s.done += poll_checked(s.cq, "send");
}

BARE_END void bare_recv_work(VerifiedReceiver &v, const ibv_wc *wc, uint32_t k)
{
	Receiver &r = v.r;
	check_status(wc, k, "receive");
	for (uint32_t i = 0; i < k; i++) {
		const uint64_t seq = r.received + i;
		const char *buf;
		if (v.by_imm) {
			v.mismatches += ntohl(wc[i].imm_data) != static_cast<uint32_t>(seq);
			buf = v.data + seq % v.slots * v.size;
		} else {
			buf = v.data + wc[i].wr_id * v.size;
			v.free[v.free_tail++ % v.slots] = static_cast<uint32_t>(wc[i].wr_id);
		}
		v.mismatches += rp::pattern_check(buf, v.size, seq) >= 0;
	}
	r.received += k;
	r.since_refill += k;
	while (r.since_refill >= kRecvBatch) {
		if (!v.by_imm)
			for (uint32_t j = 0; j < kRecvBatch; j++) {
				const uint32_t b = v.free[v.free_head++ % v.slots];
				r.wr[j].wr_id = b;
				r.wr[j].sg_list = &v.sge[b];
			}
		ibv_recv_wr *bad = nullptr;
		if (int e = ibv_post_srq_recv(r.srq, r.wr.data(), &bad))
			die("ibv_post_srq_recv", e);
		r.since_refill -= kRecvBatch;
		r.posted += kRecvBatch;
	}
}

BARE_END void bare_recv_side(VerifiedReceiver &v)
{
	ibv_wc wc[kPollBatch];
	const uint32_t k = poll_cq(v.r.cq, "receive", wc);
	if (k)
		bare_recv_work(v, wc, k);
}

/* The send chain, built once: WR i moves buffer i to or from slot i; the last one
 * signalled. Posting it again as it is sends the next batch. With chains > 1
 * (--verify), chain c's WRs use buffers and slots c * batch ... */
std::vector<ibv_send_wr> send_chain(const Args &a, uint32_t chains, std::vector<ibv_sge> &sge, char *src, const ibv_mr *smr,
				    char *dst, const ibv_mr *dmr)
{
	const uint32_t total = a.batch * chains;
	std::vector<ibv_send_wr> wr(total);
	sge.resize(total);
	for (uint32_t i = 0; i < total; i++) {
		const uint64_t off = static_cast<uint64_t>(i) * a.size;
		const bool end = (i + 1) % a.batch == 0;
		sge[i] = {reinterpret_cast<uintptr_t>(src) + off, a.size, smr->lkey};
		wr[i].wr_id = i;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = a.verb->op;
		wr[i].send_flags = end ? IBV_SEND_SIGNALED : 0;
		wr[i].next = end ? nullptr : &wr[i + 1];
		if (a.verb->atomic) {
			wr[i].wr.atomic.remote_addr = reinterpret_cast<uintptr_t>(dst) + off;
			wr[i].wr.atomic.rkey = dmr->rkey;
			wr[i].wr.atomic.compare_add = 1;
			wr[i].wr.atomic.swap = 2;
		} else if (a.verb->op != IBV_WR_SEND) {
			wr[i].wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(dst) + off;
			wr[i].wr.rdma.rkey = dmr->rkey;
		}
		if (a.verb->op == IBV_WR_RDMA_WRITE_WITH_IMM)
			wr[i].imm_data = htonl(i);
	}
	return wr;
}

/* The receive chain: a send lands in slot i; a write_imm's receive needs no buffer. */
std::vector<ibv_recv_wr> recv_chain(const Args &a, std::vector<ibv_sge> &sge, char *dst, const ibv_mr *dmr)
{
	std::vector<ibv_recv_wr> wr(kRecvBatch);
	sge.resize(kRecvBatch);
	const bool data = a.verb->op == IBV_WR_SEND;
	for (uint32_t i = 0; i < kRecvBatch; i++) {
		sge[i] = {reinterpret_cast<uintptr_t>(dst) + static_cast<uint64_t>(i % a.batch) * a.size, a.size, dmr->lkey};
		wr[i].wr_id = i;
		wr[i].sg_list = data ? &sge[i] : nullptr;
		wr[i].num_sge = data ? 1 : 0;
		wr[i].next = i + 1 < kRecvBatch ? &wr[i + 1] : nullptr;
	}
	return wr;
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

char *buffer(size_t bytes)
{
	// Page-aligned: atomics need 8-byte aligned targets.
	void *p = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
	if (!p)
		die("aligned_alloc", ENOMEM);
	memset(p, 'a', bytes);
	return static_cast<char *>(p);
}

/* Reads and atomics outstanding: as many as the device allows (the attribute is 8 bits). */
Path path(ibv_context *ctx, const Args &a, const ibv_device_attr &dev)
{
	ibv_port_attr port{};
	if (int e = ibv_query_port(ctx, 1, &port))
		die("ibv_query_port", e);
	Path p{};
	p.gid_index = a.gid >= 0 ? a.gid : pick_gid(ctx);
	if (int e = ibv_query_gid(ctx, 1, p.gid_index, &p.gid))
		die("ibv_query_gid", e);
	p.mtu = port.active_mtu;
	p.rd_atomic = static_cast<uint8_t>(std::clamp(dev.max_qp_init_rd_atom, 1, 255));
	p.dest_rd_atomic = static_cast<uint8_t>(std::clamp(dev.max_qp_rd_atom, 1, 255));
	return p;
}

} // namespace

int main(int argc, char **argv)
{
	const Args a = parse(argc, argv);
	const bool rx = a.verb->receives;
	ibv_context *ctx = open_device(a.dev);
	ibv_device_attr dev{};
	if (int e = ibv_query_device(ctx, &dev))
		die("ibv_query_device", e);
	if (a.verb->atomic && dev.atomic_cap == IBV_ATOMIC_NONE) {
		fprintf(stderr, "bare-verbs: %s: device %s has no atomics (atomic_cap NONE)\n", a.verb->name, a.dev);
		return 3;
	}
	if (rx && a.srq_depth > static_cast<uint32_t>(dev.max_srq_wr)) {
		fprintf(stderr, "bare-verbs: -r %u: device %s allows at most %d receives per SRQ\n", a.srq_depth, a.dev, dev.max_srq_wr);
		return 2;
	}
	const Path p = path(ctx, a, dev);
	ibv_pd *pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd", errno);
	/* The source: one buffer per WR of a chain; the target: as many slots. --verify: one
	 * source buffer per message the send queue holds (a chain each), and one target slot
	 * or receive buffer per receive the SRQ holds: the sender is never further ahead of
	 * the receiver's checks than that. */
	const uint32_t chains = a.verify ? a.sq_depth / a.batch : 1;
	const uint64_t slots = a.verify ? (rx ? a.srq_depth : static_cast<uint64_t>(a.batch) * chains) : a.batch;
	const size_t bytes = static_cast<size_t>(a.size) * a.batch * chains, dst_bytes = static_cast<size_t>(a.size) * slots;
	char *src = buffer(bytes), *dst = buffer(dst_bytes);
	const int remote = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   (a.verb->atomic ? IBV_ACCESS_REMOTE_ATOMIC : 0);
	ibv_mr *smr = ibv_reg_mr(pd, src, bytes, IBV_ACCESS_LOCAL_WRITE);
	ibv_mr *dmr = ibv_reg_mr(pd, dst, dst_bytes, remote);
	if (!smr || !dmr)
		die("ibv_reg_mr", errno);
	ibv_cq *scq = ibv_create_cq(ctx, static_cast<int>(a.sq_depth), nullptr, nullptr, 0);
	ibv_cq *rcq = ibv_create_cq(ctx, rx ? static_cast<int>(a.srq_depth) : 1, nullptr, nullptr, 0);
	if (!scq || !rcq)
		die("ibv_create_cq", errno);
	Receiver r;
	if (rx) {
		ibv_srq_init_attr sa{};
		sa.attr.max_wr = a.srq_depth;
		sa.attr.max_sge = 1;
		if (!(r.srq = ibv_create_srq(pd, &sa)))
			die("ibv_create_srq", errno);
		r.cq = rcq;
	}
	ibv_qp *qp = make_qp(pd, scq, scq, nullptr, a.sq_depth), *peer = make_qp(pd, rcq, rcq, r.srq, 1);
	to_rts(qp, peer->qp_num, p);
	to_rts(peer, qp->qp_num, p);

	std::vector<ibv_sge> ssge, rsge;
	Sender s{qp, scq, send_chain(a, chains, ssge, src, smr, dst, dmr), a.batch, static_cast<uint32_t>(a.messages % a.batch),
		 a.sq_depth / a.batch, 0};
	s.chains = a.messages / a.batch + (s.rest != 0);
	if (rx)
		r.wr = recv_chain(a, rsge, dst, dmr);
	// Without receives, nothing limits the sender but its send queue.
	const uint64_t no_limit = UINT64_MAX;
	double t0, c0;
	uint64_t mismatches = 0;
	if (!a.verify) {
		if (rx) {
			r.since_refill = a.srq_depth;   // fill the SRQ: the first call posts them all
			bare_recv_work(r, nullptr, 0);
		}
		t0 = now(), c0 = cpu_seconds();
		while (s.done < s.chains || (rx && r.received < a.messages)) {
			bare_send_side(s, rx ? r.posted : no_limit);
			if (rx)
				bare_recv_side(r);
		}
	} else {
		const bool remote_write = a.verb->op != IBV_WR_SEND;
		VerifiedSender vs{std::move(s), a.size, remote_write ? dst : nullptr, slots,
				  a.verb->op == IBV_WR_RDMA_WRITE_WITH_IMM};
		VerifiedReceiver vr{std::move(r), a.size, dst, slots, remote_write};
		if (rx && !vr.by_imm) {
			vr.sge.resize(slots);
			for (uint64_t b = 0; b < slots; b++)
				vr.sge[b] = {reinterpret_cast<uintptr_t>(dst) + b * a.size, a.size, dmr->lkey};
			vr.free.resize(slots);
			std::iota(vr.free.begin(), vr.free.end(), 0u);
			vr.free_tail = slots;
		}
		if (rx) {
			vr.r.since_refill = a.srq_depth;
			bare_recv_work(vr, nullptr, 0);
		}
		t0 = now(), c0 = cpu_seconds();
		while (vs.s.done < vs.s.chains || (rx && vr.r.received < a.messages)) {
			bare_send_side(vs, rx ? vr.r.posted : no_limit);
			if (rx)
				bare_recv_side(vr);
		}
		mismatches = vr.mismatches;
		s = std::move(vs.s);
		r = std::move(vr.r);
	}
	const double secs = now() - t0, cpu = cpu_seconds() - c0;
	printf("bare-verbs: %s, %s %u B, 1 RC QP, chains of %u (one signalled), send queue %u", a.dev, a.verb->name, a.size,
	       a.batch, a.sq_depth);
	if (rx)
		printf(", SRQ %u refilled by %u", a.srq_depth, kRecvBatch);
	if (a.verb->op == IBV_WR_RDMA_READ || a.verb->atomic)
		printf(", %u outstanding reads/atomics", p.rd_atomic);
	printf(", GID index %d\n", p.gid_index);
	printf("  messages:      %" PRIu64 " in %.3f s\n", a.messages, secs);
	printf("  message rate:  %.4f Mmsg/s\n", static_cast<double>(a.messages) / secs / 1e6);
	printf("  throughput:    %.4f Gbit/s\n", static_cast<double>(a.messages) * a.size * 8 / secs / 1e9);
	printf("  cpu per message: %.3f us (user and system time of the one thread, both ends)\n",
	       cpu / static_cast<double>(a.messages) * 1e6);
	printf("  ends: sender bare_send_side()%s\n",
	       rx ? ", receiver bare_recv_side() (its work after a poll with completions: bare_recv_work())"
		  : ", receiver none (passive)");
	if (a.verify) {
		if (rx)
			printf("  verified:      %" PRIu64 " messages (payload pattern and sequence), %" PRIu64 " mismatches\n",
			       r.received, mismatches);
		else
			printf("  verified:      none here (a write has no receiver; every message was stamped)\n");
	}
	ibv_destroy_qp(qp);
	ibv_destroy_qp(peer);
	if (r.srq)
		ibv_destroy_srq(r.srq);
	ibv_destroy_cq(scq);
	ibv_destroy_cq(rcq);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(dmr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(src);
	free(dst);
	if (mismatches) {
		fprintf(stderr, "bare-verbs: %" PRIu64 " messages failed their check\n", mismatches);
		return 1;
	}
	return 0;
}
