/* The responder's receive burst alone, on the host: the engine's Responder fed by a
 * NIC faked at the VerbsOps seam that costs next to nothing (completions made up in the
 * poll, receives and credit writes only counted), so its instructions per message can
 * be counted under callgrind in seconds and without RDMA (tools/bench-rx). The poll is
 * the fake NIC's, outside responder_busy: callgrind's inclusive cost of responder_busy
 * per message is the responder's work with empty polls left out, the figure tools/bench
 * reports from real runs on rxe (whose post_srq_recv and credit posts cost more).
 *
 * --check: the payload check alone, ns per byte against memcmp of the same length. */
#include "engine/pattern.h"
#include "engine/pattern_match.h"
#include "engine/responder.h"
#include "engine/wr_chain.h"

#include <rte_cpuflags.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_mempool.h>

#include <arpa/inet.h>
#include <getopt.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Args {
	rp::Verb verb = rp::Verb::write_imm;
	uint32_t size = 64;
	uint32_t qps = 1;
	uint64_t messages = 200000;
	uint32_t burst = rp::kRxPollBurst;
	uint32_t slots = 256;
	bool check = false;
};

/* The faked NIC: a ring of posted receive wr_ids (buffers, for SENDs), a ring of send
 * completions for signalled credit writes, and the traffic it makes up. */
struct Nic {
	const Args *a = nullptr;
	std::vector<uint64_t> srq;   // power of two
	uint64_t srq_head = 0, srq_tail = 0;
	std::vector<ibv_wc> scq;
	uint64_t scq_head = 0, scq_tail = 0;
	std::vector<uint64_t> next;   // per QP: next sequence
	uint64_t made = 0;
	unsigned char *window = nullptr;
	uint32_t rr = 0;
};
Nic nic;
ibv_cq *const kRecvCq = reinterpret_cast<ibv_cq *>(0x2000);
constexpr uint32_t kQpBase = 0x100;

int post_srq_recv(ibv_srq *, ibv_recv_wr *wr, ibv_recv_wr **)
{
	for (; wr; wr = wr->next)
		nic.srq[nic.srq_tail++ & (nic.srq.size() - 1)] = wr->wr_id;
	return 0;
}

int post_send(ibv_qp *qp, ibv_send_wr *wr, ibv_send_wr **)
{
	for (; wr; wr = wr->next)
		if (wr->send_flags & IBV_SEND_SIGNALED) {
			ibv_wc &w = nic.scq[nic.scq_tail++ & (nic.scq.size() - 1)];
			w = ibv_wc{};
			w.wr_id = wr->wr_id;
			w.opcode = IBV_WC_RDMA_WRITE;
			w.qp_num = qp->qp_num;
		}
	return 0;
}

int post_recv(ibv_qp *, ibv_recv_wr *, ibv_recv_wr **) { return EINVAL; }

/* The receive CQ: the next messages round-robin over the QPs, payloads put in place as
 * a NIC would (not counted in responder_busy). The send CQ: the credit writes. */
int poll_cq(ibv_cq *cq, int n, ibv_wc *wc)
{
	const Args &a = *nic.a;
	if (cq != kRecvCq) {
		int k = 0;
		for (; k < n && nic.scq_head < nic.scq_tail; k++)
			wc[k] = nic.scq[nic.scq_head++ & (nic.scq.size() - 1)];
		return k;
	}
	const uint64_t total = a.messages;
	int k = 0;
	for (; k < n && k < static_cast<int>(a.burst) && nic.made < total && nic.srq_head < nic.srq_tail; k++) {
		const uint32_t qi = nic.rr;
		nic.rr = nic.rr + 1 == a.qps ? 0 : nic.rr + 1;
		const uint64_t seq = nic.next[qi]++;
		nic.made++;
		ibv_wc &w = wc[k];
		w = ibv_wc{};
		w.qp_num = kQpBase + qi;
		w.byte_len = a.size;
		w.wr_id = nic.srq[nic.srq_head++ & (nic.srq.size() - 1)];
		const bool last = nic.made + a.qps > total;
		if (rp::verb_has_imm(a.verb)) {
			w.wc_flags = IBV_WC_WITH_IMM;
			w.imm_data = htonl(static_cast<uint32_t>(seq & rp::kImmSeqMask) | (last ? rp::kImmLast : 0));
		}
		w.opcode = rp::verb_recv_wc_opcode(a.verb);
		unsigned char *dst = a.verb == rp::Verb::write_imm
					     ? nic.window + (static_cast<uint64_t>(qi) * a.slots + seq % a.slots) * a.size
					     : reinterpret_cast<unsigned char *>(w.wr_id);
		rp::pattern_fill(dst, a.size, rp::msg_key(qi, seq));
	}
	return k;
}

int no_qp(ibv_qp *) { return 0; }

const rp::VerbsOps kOps = {post_send, post_srq_recv, post_recv, poll_cq, no_qp, no_qp};

[[noreturn]] void usage(int rc)
{
	fprintf(rc ? stderr : stdout,
		"usage: rdmapipe-rx-bench [-v write_imm|send|send_imm] [-s BYTES] [-q QPS] [-n MESSAGES]\n"
		"                         [--burst N] [--slots N] [--check]\n"
		"The engine's responder on a faked NIC that costs next to nothing; run it under\n"
		"callgrind and read responder_busy's inclusive Ir per message (tools/bench-rx).\n"
		"--check: the payload check alone, ns per byte against memcmp.\n");
	exit(rc);
}

Args parse(int argc, char **argv)
{
	Args a;
	static const option longs[] = {{"burst", required_argument, nullptr, 'b'},
				       {"slots", required_argument, nullptr, 'S'},
				       {"check", no_argument, nullptr, 'c'},
				       {"help", no_argument, nullptr, 'h'},
				       {nullptr, 0, nullptr, 0}};
	for (int o; (o = getopt_long(argc, argv, "v:s:q:n:h", longs, nullptr)) != -1;) {
		switch (o) {
		case 'v':
			if (!strcmp(optarg, "write_imm"))
				a.verb = rp::Verb::write_imm;
			else if (!strcmp(optarg, "send"))
				a.verb = rp::Verb::send;
			else if (!strcmp(optarg, "send_imm"))
				a.verb = rp::Verb::send_imm;
			else
				usage(2);
			break;
		case 's': a.size = static_cast<uint32_t>(strtoul(optarg, nullptr, 0)); break;
		case 'q': a.qps = static_cast<uint32_t>(strtoul(optarg, nullptr, 0)); break;
		case 'n': a.messages = strtoull(optarg, nullptr, 0); break;
		case 'b': a.burst = static_cast<uint32_t>(strtoul(optarg, nullptr, 0)); break;
		case 'S': a.slots = static_cast<uint32_t>(strtoul(optarg, nullptr, 0)); break;
		case 'c': a.check = true; break;
		case 'h': usage(0);
		default: usage(2);
		}
	}
	if (a.size < (a.check ? 1u : 8u) || a.qps == 0 || a.messages < a.qps || a.burst == 0 || a.burst > rp::kRxPollBurst || a.slots < 8)
		usage(2);
	return a;
}

/* One way of checking a payload, timed over `rounds` checks of buf. */
template <typename Check>
double time_check(const unsigned char *buf, uint64_t rounds, uint64_t *bad, Check &&check)
{
	const uint64_t t0 = rte_rdtsc();
	for (uint64_t i = 0; i < rounds; i++) {
		asm volatile("" ::"r"(buf) : "memory");   // read it again every time
		*bad += !check();
	}
	return static_cast<double>(rte_rdtsc() - t0);
}

/* The payload checks alone against memcmp, over a buffer of `size` bytes: the slow
 * path's pattern_check, the burst's pattern_matches (baseline and AVX2). */
int check_bench(const Args &a)
{
	std::vector<unsigned char> buf(a.size), ref(a.size);
	rp::pattern_fill(buf.data(), a.size, 7);
	rp::pattern_fill(ref.data(), a.size, 7);
	const uint64_t rounds = a.messages;
	const unsigned char *b = buf.data();
	const size_t len = a.size;
	uint64_t bad = 0;
	const double find = time_check(b, rounds, &bad, [&] { return rp::pattern_check(b, len, 7) < 0; });
	const double base = time_check(b, rounds, &bad, [&] { return rp::pattern_matches(b, len, 7); });
	const bool avx2 = rte_cpu_get_flag_enabled(RTE_CPUFLAG_AVX2) > 0;
	const double wide = avx2 ? time_check(b, rounds, &bad, [&] { return rp::pattern_matches_avx2(b, len, 7); }) : 0;
	const double cmp = time_check(b, rounds, &bad, [&] { return memcmp(b, ref.data(), len) == 0; });
	const double ns = 1e9 / static_cast<double>(rte_get_tsc_hz()) / static_cast<double>(rounds);
	printf("check %u B, ns per message (per byte): pattern_check %.1f (%.3f), pattern_matches %.1f (%.3f), ", a.size,
	       find * ns, find * ns / len, base * ns, base * ns / len);
	if (avx2)
		printf("AVX2 %.1f (%.3f), ", wide * ns, wide * ns / len);
	else
		printf("AVX2 not on this CPU, ");
	printf("memcmp %.1f (%.3f)%s\n", cmp * ns, cmp * ns / len, bad ? ": MISMATCH" : "");
	return bad ? 1 : 0;
}

int rx_bench(const Args &a)
{
	std::vector<ibv_qp> qps(a.qps);
	std::vector<uint64_t> sent(a.qps), credit_src(static_cast<size_t>(a.qps) * rp::kCreditRing), credit_dst(a.qps);
	std::vector<unsigned char> memory(rp::responder_memory_per_qp(a.verb, a.size, a.slots) * a.qps + 8);
	nic.a = &a;
	nic.srq.assign(4096, 0);
	nic.scq.assign(4096, ibv_wc{});
	nic.next.assign(a.qps, 0);
	nic.window = memory.data();
	rp::RunControl ctl;
	rp::Responder r;
	r.ops = &kOps;
	r.recv_cq = kRecvCq;
	r.send_cq = reinterpret_cast<ibv_cq *>(0x1000);
	r.memory = memory.data();
	r.credit_src = credit_src.data();
	r.ctl = &ctl;
	const uint64_t hz = rte_get_tsc_hz();
	r.p = rp::ResponderParams{a.verb, a.size, a.slots, a.slots / 4, true, 10 * hz, hz};
	std::string err;
	if (rp::responder_init(&r, a.qps, &err) != 0) {
		fprintf(stderr, "rx-bench: %s\n", err.c_str());
		return 1;
	}
	for (uint32_t i = 0; i < a.qps; i++) {
		qps[i].qp_num = kQpBase + i;
		r.qps[i].qp = &qps[i];
		r.qps[i].credit_remote_addr = reinterpret_cast<uintptr_t>(&credit_dst[i]);
		r.qps[i].credit_rkey = 9;
		sent[i] = a.messages / a.qps + (i < a.messages % a.qps);
	}
	if (rp::responder_add_qps(&r, &err) != 0) {
		fprintf(stderr, "rx-bench: %s\n", err.c_str());
		return 1;
	}
	ctl.qp_sent = sent.data();
	ctl.counts_known = true;
	rte_mempool *pool = nullptr;
	rp::MrTable mrs;
	if (a.verb != rp::Verb::write_imm) {
		pool = rte_mempool_create("rx_bench", 2047, a.size, 0, 0, nullptr, nullptr, nullptr, nullptr, 0, 0);
		if (!pool) {
			fprintf(stderr, "rx-bench: rte_mempool_create failed\n");
			return 1;
		}
		mrs.n = 1;
		mrs.chunks[0] = {0, UINTPTR_MAX, 0x33};
		r.rx_pool = pool;
	}
	const uint32_t depth = 512;
	if (r.refill.init(reinterpret_cast<ibv_srq *>(0x3000), depth, 32, rp::kRxPollBurst, pool, a.size, &mrs) != 0 ||
	    r.refill.fill(kOps) != static_cast<int>(depth)) {
		fprintf(stderr, "rx-bench: SRQ fill failed\n");
		return 1;
	}
	rp::responder_start(&r);
	const uint64_t t0 = rte_rdtsc();
	while (!r.finished)
		rp::responder_burst(&r);
	const uint64_t t1 = rte_rdtsc();
	int rc = rp::responder_finish(&r);
	const rp::ResponderCounters &c = r.c;
	printf("rx-bench %s %u B x %u QPs: %" PRIu64 " received, %" PRIu64 " verified, %" PRIu64
	       " busy polls, %" PRIu64 " credit writes, %.1f ns/msg%s%s\n",
	       rp::verb_name(a.verb), a.size, a.qps, c.received, c.verified, c.polls_busy, c.credit_writes,
	       static_cast<double>(t1 - t0) * 1e9 / static_cast<double>(hz) / static_cast<double>(a.messages),
	       rc ? ", FAILED: " : "", rc ? (c.fail_reason ? c.fail_reason : "checks") : "");
	rte_mempool_free(pool);
	return rc == 0 && c.verified == a.messages ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
	Args a = parse(argc, argv);
	static char n0[] = "rx-bench", a1[] = "--no-huge", a2[] = "--no-pci", a3[] = "--no-shconf", a4[] = "-m",
		    a5[] = "64", a6[] = "-l", a7[] = "0", a8[] = "--log-level=lib.eal:error", a9[] = "--no-telemetry";
	char *eal[] = {n0, a1, a2, a3, a4, a5, a6, a7, a8, a9, nullptr};
	if (rte_eal_init(10, eal) < 0) {
		fprintf(stderr, "rx-bench: rte_eal_init failed\n");
		return 1;
	}
	int rc = a.check ? check_bench(a) : rx_bench(a);
	rte_eal_cleanup();
	return rc;
}
