/* cm_pair: two processes connected by lib/verbs/cm over rdma_cm, on two rxe devices.
 *
 *   cm_pair --server ADDR PORT N [--timeout-ms MS] [--stall] [--die-at K]
 *   cm_pair --client ADDR PORT N --local ADDR [--timeout-ms MS] [--corrupt-qp Q]
 *           [--wrong-device cm:DEV|ibv:DEV]
 *   cm_pair --bad-client ADDR PORT --local ADDR [--timeout-ms MS]
 *   cm_pair --hostile-writer ADDR PORT --local ADDR --size B --slots S --messages M
 *
 * The server advertises a registered window per QP in its accept; the client
 * advertises a verdict word per QP in its connect, RDMA-writes a pattern (a function
 * of QP index and offset) into each QP's window and then SENDs; on each SEND the
 * server checks that QP's window and RDMA-writes its verdict into the client's word.
 * Then the client disconnects and the server sees it. Each side prints one result
 * line, "cm_pair client: PASS: ..." or "... FAIL: <why>", and exits 0 or 1 (2: usage).
 *
 * Test hooks: --stall (server: accept, then never answer), --die-at K (server:
 * SIGKILL itself at the K-th connection request), --corrupt-qp Q (client: flip a byte
 * of QP Q's pattern), --wrong-device (client: put the PD and CQs on librdmacm's
 * context of DEV, or on DEV opened by ibv_open_device, instead of the context the
 * route resolved to: connect() must refuse), --bad-client (send private data that
 * must be refused), --hostile-writer (connect to an rdmapipe server of RDMA WRITE as
 * its client would, then write outside the windows it was given: each such write must
 * fail at the server's NIC, so the server registered no more than the windows). */
#include "engine/types.h"
#include "verbs/cm.h"
#include "verbs/device.h"
#include "verbs/io_context.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

using namespace rp;

namespace {

constexpr uint32_t kSlots = 4;               // server window per QP: 4 x 1 KiB
constexpr uint32_t kSlotBytes = 1024;
constexpr uint32_t kMaxSlots = 16;           // the most the client writes per QP
constexpr uint32_t kMaxSlotBytes = 64 * 1024;
constexpr uint32_t kClientSq = kMaxSlots + 1;   // one WRITE per slot, then the SEND
constexpr uint32_t kMsgBytes = 8;            // SEND payload: flow, QP index, bytes written
constexpr uint32_t kRecvBytes = 64;
constexpr uint32_t kInline = 16;
constexpr uint8_t kMinRnrTimer = 14;         // 0.96 ms: distinct from rdma_cm's 0
constexpr uint64_t kVerdictPass = 0x5041535300000000ull;   // "PASS" | QP index
constexpr uint64_t kVerdictFail = 0x4641494c00000000ull;   // "FAIL" | QP index

const char *g_role = "cm_pair";

int64_t now_ns()
{
	timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t deadline_after(int ms)
{
	return now_ns() + static_cast<int64_t>(ms) * 1000000;
}

std::string count(unsigned n, const char *what)
{
	return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

void say(const std::string &s)
{
	printf("%s: %s\n", g_role, s.c_str());
	fflush(stdout);
}

int fail(const std::string &why)
{
	say("FAIL: " + why);
	return 1;
}

uint8_t pattern(uint16_t qp, uint32_t off)
{
	uint32_t x = (off + 1) * 2654435761u ^ (qp + 1u) * 40503u;
	return static_cast<uint8_t>(x >> 24 ^ x >> 11 ^ off);
}

std::string hex8(unsigned v)
{
	char b[8];
	snprintf(b, sizeof(b), "0x%02x", v & 0xff);
	return b;
}

struct Args {
	std::string mode, addr, port, local;
	unsigned n = 1;
	int timeout_ms = 5000;
	bool stall = false;
	int die_at = -1;
	int corrupt_qp = -1;
	std::string wrong_device;
	uint32_t size = 0, slots = 0;   // --hostile-writer: the server's -s and --slots
	uint64_t messages = 0;          // ... and its messages per QP
};

/* Everything one side owns, released in the order the verbs need: the connections
 * (their QPs) before the MRs, CQs, SRQ and PD they use. */
struct Resources {
	CmConnSet *set = nullptr;
	std::vector<ibv_mr *> mrs;
	std::vector<void *> bufs;
	SharedIOContext io;
	Device dev;
	bool own_ctx = false;   // dev opened by device_open (ibv_open_device), not on librdmacm's

	void *alloc_reg(size_t len, int access, ibv_mr **mr, std::string *err)
	{
		size_t rounded = (len + 4095) / 4096 * 4096;
		void *p = aligned_alloc(4096, rounded);
		if (p == nullptr) {
			*err = "out of memory for " + std::to_string(len) + " B";
			return nullptr;
		}
		memset(p, 0, rounded);
		bufs.push_back(p);
		*mr = ibv_reg_mr(dev.pd, p, len, access);
		if (*mr == nullptr) {
			*err = dev.name + ": ibv_reg_mr " + std::to_string(len) + " B: " + strerror(errno);
			return nullptr;
		}
		mrs.push_back(*mr);
		return p;
	}

	~Resources()
	{
		if (set)
			set->close();
		for (ibv_mr *mr : mrs)
			ibv_dereg_mr(mr);
		for (void *p : bufs)
			free(p);
		shared_io_context_destroy(&io);
		if (own_ctx)
			device_close(&dev);
		else
			cm_device_close(&dev);
	}
};

/* Polls `step` (1: done, 0: not yet, <0: failed with *why) until the deadline,
 * reading the CM events on the way: a connection that goes down ends the wait, once
 * `step` has had a last look (what the peer wrote before it left counts). */
template <class Step>
int wait_for(CmConnSet &set, int64_t deadline, const std::string &what, int timeout_ms, Step step,
	     std::string *why)
{
	for (;;) {
		int r = step(why);
		if (r != 0)
			return r < 0 ? r : 0;
		std::string down;
		int d = set.poll_disconnects(&down);
		if (d != 0) {
			r = step(why);
			if (r != 0)
				return r < 0 ? r : 0;
			*why = (d < 0 ? down : down + " while " + what);
			return -ECONNRESET;
		}
		if (now_ns() > deadline) {
			*why = "timed out after " + std::to_string(timeout_ms) + " ms " + what;
			return -ETIMEDOUT;
		}
		usleep(200);   // the test's own pacing, not a data path
	}
}

/* Checks state, min RNR timer, access and inline size of an established QP: what
 * the caller asked for is what the QP has. */
int check_qp(const CmConn &c, int access, std::string *why)
{
	ibv_qp_attr a{};
	ibv_qp_init_attr ia{};
	int ret = ibv_query_qp(c.qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_ACCESS_FLAGS | IBV_QP_CAP, &ia);
	if (ret) {
		*why = c.name + ": ibv_query_qp: " + strerror(ret);
		return -ret;
	}
	if (a.qp_state != IBV_QPS_RTS || a.min_rnr_timer != kMinRnrTimer || a.qp_access_flags != static_cast<unsigned>(access) ||
	    a.cap.max_inline_data < kInline) {
		*why = c.name + ": QP " + std::to_string(c.qp->qp_num) + " has state " + std::to_string(a.qp_state) +
		       ", min RNR timer " + std::to_string(a.min_rnr_timer) + ", access " +
		       std::to_string(a.qp_access_flags) + ", inline " + std::to_string(a.cap.max_inline_data) +
		       "; want RTS (3), " + std::to_string(kMinRnrTimer) + ", " + std::to_string(access) + ", >= " +
		       std::to_string(kInline);
		return -EINVAL;
	}
	return 0;
}

/* ---- server ---- */

int run_server(const Args &a)
{
	g_role = "cm_pair server";
	const unsigned n = a.n;
	std::string err;
	CmAddr addr;
	if (cm_addr_parse(a.addr, a.port, &addr, &err))
		return fail(err);
	CmServer srv;
	Resources r;
	r.set = &srv;
	if (srv.listen(addr, static_cast<int>(n < 64 ? 64 : n), &err))
		return fail(err);
	if (cm_device_open(&r.dev, srv.verbs(), srv.port_num(), &err))
		return fail(err);
	const uint32_t srq_depth = n + 8;
	if (shared_io_context_create(r.dev, n * 2, srq_depth, srq_depth, false, false, &r.io, &err))
		return fail(err);

	/* A window per QP, each its own MR (a key used on the wrong QP's window fails). */
	const uint32_t window = kSlots * kSlotBytes;
	std::vector<uint8_t *> windows(n);
	std::vector<ibv_mr *> window_mrs(n);
	for (unsigned i = 0; i < n; i++) {
		windows[i] = static_cast<uint8_t *>(
			r.alloc_reg(window, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &window_mrs[i], &err));
		if (windows[i] == nullptr)
			return fail(err);
	}
	ibv_mr *recv_mr, *verdict_mr;
	auto *recv = static_cast<uint8_t *>(r.alloc_reg(srq_depth * kRecvBytes, IBV_ACCESS_LOCAL_WRITE, &recv_mr, &err));
	auto *verdicts = static_cast<uint64_t *>(r.alloc_reg(n * 8, IBV_ACCESS_LOCAL_WRITE, &verdict_mr, &err));
	if (recv == nullptr || verdicts == nullptr)
		return fail(err);
	for (uint32_t i = 0; i < srq_depth; i++) {
		ibv_sge sge{reinterpret_cast<uintptr_t>(recv + i * kRecvBytes), kRecvBytes, recv_mr->lkey};
		ibv_recv_wr wr{}, *bad = nullptr;
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (int ret = ibv_post_srq_recv(r.io.srq, &wr, &bad))
			return fail(r.dev.name + ": ibv_post_srq_recv: " + strerror(ret));
	}
	say("listening on " + addr.str + " (" + r.dev.name + "), pid " + std::to_string(getpid()));

	QpOptions qo;
	qo.sq_depth = 2;
	qo.max_inline = kInline;
	qo.min_rnr_timer = kMinRnrTimer;
	const int access = IBV_ACCESS_REMOTE_WRITE;   // the client only writes our windows
	auto choose = [&](const CmRequest &req, CmQpSpec *spec, CmPrivate *reply, std::string *why) {
		if (a.die_at >= 0 && req.index == static_cast<unsigned>(a.die_at)) {
			say("killing itself at connection request " + std::to_string(req.index) + " (test hook)");
			raise(SIGKILL);
		}
		if (req.peer.flow != 0 || req.peer.qp_index >= n) {
			*why = "no flow " + std::to_string(req.peer.flow) + " QP " + std::to_string(req.peer.qp_index) +
			       " here (flow 0 has " + std::to_string(n) + ")";
			return kCmReject;
		}
		if (req.peer.credit_addr == 0) {
			*why = "no verdict word advertised";
			return kCmReject;
		}
		if (req.verbs != r.dev.ctx) {
			*why = "the request came in on " + std::string(ibv_get_device_name(req.verbs->device)) +
			       ", the server's QPs are on " + r.dev.name;
			return -EXDEV;
		}
		*spec = cm_qp_spec(r.dev.pd, r.io, qo);
		spec->access = access;
		*reply = CmPrivate{};
		reply->flow = req.peer.flow;
		reply->qp_index = req.peer.qp_index;
		reply->addr = reinterpret_cast<uintptr_t>(windows[req.peer.qp_index]);
		reply->rkey = window_mrs[req.peer.qp_index]->rkey;
		reply->slots = kSlots;
		reply->slot_bytes = kSlotBytes;
		return kCmAccept;
	};
	const int64_t t0 = now_ns();
	if (srv.accept(n, a.timeout_ms, choose, &err))
		return fail(err);
	for (unsigned i = 0; i < n; i++)
		if (check_qp(srv.conn(i), access, &err))
			return fail(err);
	say(count(n, "connection") + " established in " + std::to_string((now_ns() - t0) / 1000000) + " ms");

	if (a.stall) {
		say("stalling (test hook): not checking, not answering");
		sleep(60);
		return fail("stalled for 60 s and nobody killed this server");
	}

	/* One SEND per QP: then its window must hold the client's pattern. */
	std::vector<int> got(n, 0);
	std::vector<std::string> bad(n);
	unsigned received = 0;
	int64_t deadline = deadline_after(a.timeout_ms);
	auto on_recv = [&](std::string *why) {
		ibv_wc wc[16];
		int k = ibv_poll_cq(r.io.recv_cq, 16, wc);
		if (k < 0) {
			*why = "ibv_poll_cq on the receive CQ failed";
			return -EIO;
		}
		for (int j = 0; j < k; j++) {
			unsigned i = 0;
			while (i < n && srv.conn(i).qp->qp_num != wc[j].qp_num)
				i++;
			if (i == n) {
				*why = "a receive completion for unknown QP " + std::to_string(wc[j].qp_num);
				return -EPROTO;
			}
			const CmConn &c = srv.conn(i);
			if (wc[j].status != IBV_WC_SUCCESS) {
				*why = c.name + ": receive completion error: " + ibv_wc_status_str(wc[j].status);
				return -EIO;
			}
			const uint8_t *m = recv + wc[j].wr_id * kRecvBytes;
			unsigned flow = m[0] << 8 | m[1], qpi = m[2] << 8 | m[3];
			uint32_t bytes = static_cast<uint32_t>(m[4]) << 24 | m[5] << 16 | m[6] << 8 | m[7];
			if (wc[j].byte_len != kMsgBytes || flow != c.peer.flow || qpi != c.peer.qp_index || bytes != window) {
				*why = c.name + ": SEND of " + std::to_string(wc[j].byte_len) + " B says flow " +
				       std::to_string(flow) + " QP " + std::to_string(qpi) + ", " + std::to_string(bytes) +
				       " B written; want flow " + std::to_string(c.peer.flow) + " QP " +
				       std::to_string(c.peer.qp_index) + ", " + std::to_string(window) + " B";
				return -EPROTO;
			}
			if (got[i]++) {
				*why = c.name + ": a second SEND";
				return -EPROTO;
			}
			received++;
			const uint8_t *w = windows[c.peer.qp_index];
			for (uint32_t o = 0; o < window; o++) {
				if (w[o] != pattern(c.peer.qp_index, o)) {
					bad[i] = "QP " + std::to_string(c.peer.qp_index) + ": byte " + std::to_string(o) + " is " +
						 hex8(w[o]) + ", want " + hex8(pattern(c.peer.qp_index, o));
					break;
				}
			}
		}
		return received == n ? 1 : 0;
	};
	if (wait_for(srv, deadline, "waiting for the client's SENDs", a.timeout_ms, on_recv, &err))
		return fail(err + " (" + std::to_string(received) + " of " + std::to_string(n) + " QPs sent)");

	/* The verdicts go back as RDMA writes into the words the client advertised. */
	unsigned failed = 0;
	std::string first_bad;
	for (unsigned i = 0; i < n; i++) {
		const CmConn &c = srv.conn(i);
		verdicts[i] = (bad[i].empty() ? kVerdictPass : kVerdictFail) | c.peer.qp_index;
		if (!bad[i].empty() && failed++ == 0)
			first_bad = bad[i];
		ibv_sge sge{reinterpret_cast<uintptr_t>(&verdicts[i]), 8, verdict_mr->lkey};
		ibv_send_wr wr{}, *badwr = nullptr;
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = c.peer.credit_addr;
		wr.wr.rdma.rkey = c.peer.credit_rkey;
		if (int ret = ibv_post_send(c.qp, &wr, &badwr))
			return fail(c.name + ": ibv_post_send (verdict): " + strerror(ret));
	}
	unsigned written = 0;
	auto on_send = [&](std::string *why) {
		ibv_wc wc[16];
		int k = ibv_poll_cq(r.io.send_cq, 16, wc);
		for (int j = 0; j < k; j++) {
			if (wc[j].status != IBV_WC_SUCCESS) {
				*why = srv.conn(static_cast<unsigned>(wc[j].wr_id)).name +
				       ": verdict write: completion error: " + ibv_wc_status_str(wc[j].status);
				return -EIO;
			}
			written++;
		}
		return written == n ? 1 : 0;
	};
	if (wait_for(srv, deadline_after(a.timeout_ms), "writing the verdicts", a.timeout_ms, on_send, &err))
		return fail(err);

	/* The client disconnects when it has read them: the CM tells us, bounded. */
	deadline = deadline_after(a.timeout_ms);
	while (srv.down() < n && now_ns() < deadline) {
		std::string why;
		if (srv.poll_disconnects(&why) < 0)
			return fail(why);
		usleep(1000);
	}
	if (srv.down() < n)
		return fail("the client disconnected " + std::to_string(srv.down()) + " of " + std::to_string(n) +
			    " connections within " + std::to_string(a.timeout_ms) + " ms");
	if (failed)
		return fail(std::to_string(failed) + " of " + std::to_string(n) + " QPs' windows corrupt, the first: " +
			    first_bad);
	say("PASS: " + count(n, "QP") + ", each window of " + std::to_string(kSlots) + " x " +
	    std::to_string(kSlotBytes) + " B verified; the client disconnected all " + std::to_string(n));
	return 0;
}

/* ---- client ---- */

/* A client's own address and its server's, from the command line. */
int client_ends(const Args &a, CmAddr *local, CmAddr *server, std::string *err)
{
	return cm_addr_parse(a.local, "0", local, err) || cm_addr_parse(a.addr, a.port, server, err) ? -1 : 0;
}

int run_client(const Args &a)
{
	g_role = "cm_pair client";
	const unsigned n = a.n;
	std::string err;
	CmAddr local, server;
	if (client_ends(a, &local, &server, &err))
		return fail(err);
	CmClient cli;
	Resources r;
	r.set = &cli;
	const int64_t t0 = now_ns();
	if (cli.resolve(local, server, n, a.timeout_ms, &err))
		return fail(err);
	/* Only now is it known which device rdma_cm routes over: open ours on its context. */
	if (a.wrong_device.rfind("cm:", 0) == 0) {
		ibv_context *v = nullptr;
		if (cm_device_context(a.wrong_device.substr(3), &v, &err) || cm_device_open(&r.dev, v, 1, &err))
			return fail(err);
	} else if (a.wrong_device.rfind("ibv:", 0) == 0) {
		r.own_ctx = true;
		if (device_open(&r.dev, a.wrong_device.substr(4), 1, -1, &err))
			return fail(err);
	} else if (cm_device_open(&r.dev, cli.verbs(), cli.port_num(), &err)) {
		return fail(err);
	}
	if (shared_io_context_create(r.dev, n * kClientSq, 1, 0, false, false, &r.io, &err))
		return fail(err);
	ibv_mr *words_mr;
	auto *words = static_cast<uint64_t *>(
		r.alloc_reg(n * 8, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, &words_mr, &err));
	if (words == nullptr)
		return fail(err);

	QpOptions qo;
	qo.sq_depth = kClientSq;
	qo.max_inline = kInline;
	qo.min_rnr_timer = kMinRnrTimer;
	const int access = IBV_ACCESS_REMOTE_WRITE;   // the server writes our verdict words
	std::vector<CmQpSpec> specs(n, cm_qp_spec(r.dev.pd, r.io, qo));
	std::vector<CmPrivate> locals(n);
	for (unsigned i = 0; i < n; i++) {
		specs[i].access = access;
		locals[i].flow = 0;
		locals[i].qp_index = static_cast<uint16_t>(i);
		locals[i].credit_addr = reinterpret_cast<uintptr_t>(&words[i]);
		locals[i].credit_rkey = words_mr->rkey;
	}
	if (cli.connect(specs, locals, a.timeout_ms, &err))
		return fail(err);
	say(count(n, "connection") + " established from " + local.str.substr(0, local.str.find(':')) + " (" +
	    r.dev.name + ") to " + server.str + " in " + std::to_string((now_ns() - t0) / 1000000) + " ms");

	/* The server's reply came off the wire: check it fits what this client will do. */
	size_t total = 0;
	for (unsigned i = 0; i < n; i++) {
		const CmConn &c = cli.conn(i);
		if (check_qp(c, access, &err))
			return fail(err);
		if (c.peer.flow != c.local.flow || c.peer.qp_index != c.local.qp_index)
			return fail(c.name + ": the server answered for flow " + std::to_string(c.peer.flow) + " QP " +
				    std::to_string(c.peer.qp_index));
		if (c.peer.slots == 0 || c.peer.slots > kMaxSlots || c.peer.slot_bytes > kMaxSlotBytes)
			return fail(c.name + ": the server's window is " + std::to_string(c.peer.slots) + " x " +
				    std::to_string(c.peer.slot_bytes) + " B; this client writes 1.." +
				    std::to_string(kMaxSlots) + " slots of at most " + std::to_string(kMaxSlotBytes) + " B");
		total += static_cast<size_t>(c.peer.slots) * c.peer.slot_bytes;
	}

	ibv_mr *src_mr;
	auto *src = static_cast<uint8_t *>(r.alloc_reg(total, IBV_ACCESS_LOCAL_WRITE, &src_mr, &err));
	if (src == nullptr)
		return fail(err);
	size_t off = 0;
	for (unsigned i = 0; i < n; i++) {
		const CmConn &c = cli.conn(i);
		const uint32_t len = c.peer.slots * c.peer.slot_bytes;
		uint8_t *s = src + off;
		for (uint32_t o = 0; o < len; o++)
			s[o] = pattern(c.local.qp_index, o);
		if (a.corrupt_qp == static_cast<int>(c.local.qp_index)) {
			s[517 % len] ^= 0x40;
			say("corrupting byte " + std::to_string(517 % len) + " of QP " + std::to_string(a.corrupt_qp) +
			    " (test hook)");
		}
		/* One chain per QP: a WRITE per slot, then the SEND that says "done"; only
		 * the SEND is signalled (RC completes in order). */
		ibv_sge sges[kMaxSlots];
		ibv_send_wr wrs[kMaxSlots + 1]{};
		for (uint32_t k = 0; k < c.peer.slots; k++) {
			sges[k] = ibv_sge{reinterpret_cast<uintptr_t>(s + k * c.peer.slot_bytes), c.peer.slot_bytes, src_mr->lkey};
			wrs[k].sg_list = &sges[k];
			wrs[k].num_sge = 1;
			wrs[k].opcode = IBV_WR_RDMA_WRITE;
			wrs[k].wr.rdma.remote_addr = c.peer.addr + static_cast<uint64_t>(k) * c.peer.slot_bytes;
			wrs[k].wr.rdma.rkey = c.peer.rkey;
			wrs[k].next = &wrs[k + 1];
		}
		uint8_t msg[kMsgBytes] = {static_cast<uint8_t>(c.local.flow >> 8), static_cast<uint8_t>(c.local.flow),
					  static_cast<uint8_t>(c.local.qp_index >> 8), static_cast<uint8_t>(c.local.qp_index),
					  static_cast<uint8_t>(len >> 24), static_cast<uint8_t>(len >> 16),
					  static_cast<uint8_t>(len >> 8), static_cast<uint8_t>(len)};
		ibv_sge msg_sge{reinterpret_cast<uintptr_t>(msg), kMsgBytes, 0};   // inline: copied at post
		ibv_send_wr &send = wrs[c.peer.slots];
		send.wr_id = i;
		send.sg_list = &msg_sge;
		send.num_sge = 1;
		send.opcode = IBV_WR_SEND;
		send.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
		send.next = nullptr;
		ibv_send_wr *badwr = nullptr;
		if (int ret = ibv_post_send(c.qp, wrs, &badwr))
			return fail(c.name + ": ibv_post_send: " + strerror(ret));
		off += len;
	}
	unsigned completed = 0;
	auto on_send = [&](std::string *why) {
		ibv_wc wc[16];
		int k = ibv_poll_cq(r.io.send_cq, 16, wc);
		for (int j = 0; j < k; j++) {
			if (wc[j].status != IBV_WC_SUCCESS) {
				*why = cli.conn(static_cast<unsigned>(wc[j].wr_id)).name +
				       ": completion error: " + ibv_wc_status_str(wc[j].status);
				return -EIO;
			}
			completed++;
		}
		return completed == n ? 1 : 0;
	};
	if (wait_for(cli, deadline_after(a.timeout_ms), "writing the windows", a.timeout_ms, on_send, &err))
		return fail(err);
	say(count(n, "window") + " written, " + count(n, "SEND") + " completed; waiting for the server's verdicts");

	unsigned in = 0;
	auto verdicts_in = [&](std::string *) {
		in = 0;
		for (unsigned i = 0; i < n; i++)
			in += std::atomic_ref<uint64_t>(words[i]).load(std::memory_order_acquire) != 0;
		return in == n ? 1 : 0;
	};
	if (wait_for(cli, deadline_after(a.timeout_ms), "waiting for the server's verdicts", a.timeout_ms, verdicts_in,
		     &err))
		return fail(err + " (" + std::to_string(in) + " of " + std::to_string(n) + " verdicts in)");
	unsigned failed = 0;
	std::string first;
	for (unsigned i = 0; i < n; i++) {
		const CmConn &c = cli.conn(i);
		uint64_t v = words[i];
		if (v == (kVerdictPass | c.local.qp_index))
			continue;
		if (failed++ == 0)
			first = v == (kVerdictFail | c.local.qp_index)
					? "the server found QP " + std::to_string(c.local.qp_index) + "'s window corrupt"
					: c.name + ": verdict word " + std::to_string(v) + " is neither pass nor fail";
	}
	cli.close();   // disconnects: the server waits to see it
	if (failed)
		return fail(std::to_string(failed) + " of " + std::to_string(n) + " QPs failed; " + first);
	say("PASS: " + count(n, "QP") + " connected to " + server.str + ", windows written, the server verified all " +
	    std::to_string(n));
	return 0;
}

/* ---- a client that sends what the server must refuse ---- */

/* Raw librdmacm, so nothing of ours cleans up the bytes on the way out. */
struct RawEvent {
	rdma_cm_event_type type;
	int status;
	uint8_t priv[256];   // private_data_len is a uint8_t
	size_t priv_len;
};

int raw_wait(rdma_event_channel *ch, int64_t deadline, RawEvent *ev)
{
	for (;;) {
		rdma_cm_event *e = nullptr;
		if (rdma_get_cm_event(ch, &e) == 0) {
			ev->type = e->event;
			ev->status = e->status;
			ev->priv_len = e->param.conn.private_data ? e->param.conn.private_data_len : 0;
			memcpy(ev->priv, e->param.conn.private_data, ev->priv_len);
			rdma_ack_cm_event(e);
			return 0;
		}
		if (errno != EAGAIN)
			return -errno;
		int64_t left = (deadline - now_ns()) / 1000000;
		if (left <= 0)
			return -ETIMEDOUT;
		pollfd p{ch->fd, POLLIN, 0};
		poll(&p, 1, static_cast<int>(left));
	}
}

/* One connection attempt with `kind` of bad private data; returns the reject reason. */
int bad_connect(const CmAddr &local, const CmAddr &server, const std::string &kind, int timeout_ms,
		std::string *reason)
{
	int64_t deadline = deadline_after(timeout_ms);
	rdma_event_channel *ch = rdma_create_event_channel();
	rdma_cm_id *id = nullptr;
	int ret = 0;
	RawEvent ev;
	sockaddr_in src = local.sin, dst = server.sin;
	uint8_t priv[kCmParamsBytes];
	CmPrivate p;
	rdma_conn_param cp{};
	ibv_qp_init_attr qa{};
	if (ch == nullptr || fcntl(ch->fd, F_SETFL, O_NONBLOCK) != 0 || rdma_create_id(ch, &id, nullptr, RDMA_PS_TCP)) {
		*reason = std::string("event channel or id: ") + strerror(errno);
		ret = -1;
		goto out;
	}
	if (rdma_resolve_addr(id, reinterpret_cast<sockaddr *>(&src), reinterpret_cast<sockaddr *>(&dst), timeout_ms) ||
	    raw_wait(ch, deadline, &ev) || ev.type != RDMA_CM_EVENT_ADDR_RESOLVED ||
	    rdma_resolve_route(id, timeout_ms) || raw_wait(ch, deadline, &ev) || ev.type != RDMA_CM_EVENT_ROUTE_RESOLVED) {
		*reason = "address or route not resolved";
		ret = -1;
		goto out;
	}
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(id, nullptr, &qa)) {
		*reason = std::string("rdma_create_qp: ") + strerror(errno);
		ret = -1;
		goto out;
	}
	p.credit_addr = 4096;
	p.credit_rkey = 1;
	cm_private_encode(p, priv);
	cp.private_data = priv;
	cp.private_data_len = sizeof(priv);
	cp.responder_resources = cp.initiator_depth = 1;
	cp.retry_count = cp.rnr_retry_count = 7;
	if (kind == "magic") {
		priv[0] = 0xde, priv[1] = 0xad, priv[2] = 0xbe, priv[3] = 0xef;
	} else if (kind == "version") {
		priv[4] = 9;
	} else if (kind == "length") {
		priv[6] = 0, priv[7] = 20;   // an older, shorter layout, honestly labelled
		cp.private_data_len = 20;
	} else if (kind == "window") {   // 2^20 slots (and a chunk of 4095) of 4 GiB at the top of memory
		memset(priv + 12, 0xff, 8);
		memset(priv + 24, 0xff, 8);
	}
	if (rdma_connect(id, &cp)) {
		*reason = std::string("rdma_connect: ") + strerror(errno);
		ret = -1;
		goto out;
	}
	if (int w = raw_wait(ch, deadline, &ev); w || ev.type != RDMA_CM_EVENT_REJECTED) {
		*reason = w ? std::string("no answer: ") + strerror(-w)
			    : std::string("not rejected but ") + rdma_event_str(ev.type);
		ret = -1;
		goto out;
	}
	if (!cm_reject_decode(ev.priv, ev.priv_len, reason)) {
		*reason = "rejected without a reason (status " + std::to_string(ev.status) + ")";
		ret = -1;
	}
out:
	if (id && id->qp)
		rdma_destroy_qp(id);
	if (id)
		rdma_destroy_id(id);
	if (ch)
		rdma_destroy_event_channel(ch);
	return ret;
}

int run_bad_client(const Args &a)
{
	g_role = "cm_pair bad-client";
	std::string err;
	CmAddr local, server;
	if (client_ends(a, &local, &server, &err))
		return fail(err);
	struct {
		const char *kind, *expect;
	} cases[] = {{"magic", "wrong magic 0xdeadbeef"},
		     {"version", "version 9"},
		     {"length", "length field 20, want 56"},   // kCmParamsBytes
		     {"window", "wraps around the address space"}};
	unsigned ok = 0;
	for (auto &c : cases) {
		std::string reason;
		int ret = bad_connect(local, server, c.kind, a.timeout_ms, &reason);
		bool good = ret == 0 && reason.find(c.expect) != std::string::npos;
		say(std::string(good ? "ok" : "WRONG") + ": bad " + c.kind + ": " + (ret ? "" : "rejected: ") + reason);
		ok += good;
	}
	if (ok != 4)
		return fail(std::to_string(4 - ok) + " of 4 bad requests were not refused with the right reason");
	say("PASS: the server refused all 4 bad requests, each with its reason");
	return 0;
}

/* ---- a client that writes outside the windows it was given ---- */

constexpr unsigned kHostileQps = 4;

/* Connects kHostileQps QPs to an rdmapipe server of RDMA WRITE, saying what its own
 * client would (verb, sizes, messages per QP), then writes on each QP once: QP 0
 * inside its window (must arrive: the probes aim right), QP 1 just past the end of
 * the highest window, QP 2 just before the lowest, QP 3 inside its window with a
 * wrong rkey. Each of the last three must fail with a remote access error. */
int run_hostile_writer(const Args &a)
{
	g_role = "cm_pair hostile-writer";
	std::string err;
	CmAddr local, server;
	if (client_ends(a, &local, &server, &err))
		return fail(err);
	CmClient cli;
	Resources r;
	r.set = &cli;
	if (cli.resolve(local, server, kHostileQps, a.timeout_ms, &err) ||
	    cm_device_open(&r.dev, cli.verbs(), cli.port_num(), &err) ||
	    shared_io_context_create(r.dev, kHostileQps * 2, 1, 0, false, false, &r.io, &err))
		return fail(err);
	ibv_mr *src_mr;
	auto *src = static_cast<uint8_t *>(r.alloc_reg(a.size, IBV_ACCESS_LOCAL_WRITE, &src_mr, &err));
	if (src == nullptr)
		return fail(err);
	/* Each QP's word the server reads as keep-alive (and writes for credit), as
	 * rdmapipe's client offers it. */
	ibv_mr *words_mr;
	auto *words = static_cast<uint64_t *>(r.alloc_reg(kHostileQps * 8,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE, &words_mr, &err));
	if (words == nullptr)
		return fail(err);
	QpOptions qo;
	qo.sq_depth = 2;
	std::vector<CmQpSpec> specs(kHostileQps, cm_qp_spec(r.dev.pd, r.io, qo));
	std::vector<CmPrivate> locals(kHostileQps);
	for (unsigned i = 0; i < kHostileQps; i++) {
		specs[i].access = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
		locals[i].qp_index = static_cast<uint16_t>(i);
		locals[i].slots = a.slots;
		locals[i].slot_bytes = a.size;
		locals[i].verb = static_cast<uint8_t>(static_cast<unsigned>(Verb::write) + 1);   // the handshake's verb + 1
		locals[i].messages = a.messages;
		locals[i].credit_addr = reinterpret_cast<uintptr_t>(&words[i]);
		locals[i].credit_rkey = words_mr->rkey;
	}
	if (cli.connect(specs, locals, a.timeout_ms, &err))
		return fail(err);
	uint64_t lo = UINT64_MAX, hi = 0;
	for (unsigned i = 0; i < kHostileQps; i++) {
		const CmPrivate &w = cli.conn(i).peer;
		if (w.addr == 0 || w.slot_bytes != a.size || w.slots != a.slots)
			return fail(cli.conn(i).name + ": the server's reply has no window of " + std::to_string(a.slots) + " x " +
				    std::to_string(a.size) + " B");
		lo = std::min(lo, w.addr);
		hi = std::max(hi, w.addr + static_cast<uint64_t>(w.slots) * w.slot_bytes);
	}
	say(count(kHostileQps, "connection") + " established; the server's windows span " + std::to_string(hi - lo) + " B");
	const struct {
		const char *what;
		uint64_t addr;
		bool wrong_key;
	} probes[kHostileQps] = {{"inside its window", cli.conn(0).peer.addr, false},
				 {"just past the highest window", hi, false},
				 {"just before the lowest window", lo - a.size, false},
				 {"inside its window with a wrong rkey", cli.conn(3).peer.addr, true}};
	for (unsigned i = 0; i < kHostileQps; i++) {
		ibv_sge sge{reinterpret_cast<uintptr_t>(src), a.size, src_mr->lkey};
		ibv_send_wr wr{};
		wr.wr_id = i;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = probes[i].addr;
		wr.wr.rdma.rkey = cli.conn(i).peer.rkey ^ (probes[i].wrong_key ? 0x5a : 0);
		ibv_send_wr *bad = nullptr;
		if (int ret = ibv_post_send(cli.conn(i).qp, &wr, &bad))
			return fail(cli.conn(i).name + ": ibv_post_send: " + strerror(ret));
	}
	/* Completions only (not wait_for, which also reads the CM events): a refused write
	 * fails its QP, which may end its connection too. */
	ibv_wc_status got[kHostileQps];
	unsigned done = 0;
	for (const int64_t deadline = deadline_after(a.timeout_ms); done < kHostileQps && now_ns() < deadline;) {
		ibv_wc wc[kHostileQps];
		const int k = ibv_poll_cq(r.io.send_cq, kHostileQps, wc);
		for (int j = 0; j < k; j++, done++)
			got[wc[j].wr_id] = wc[j].status;
		if (k == 0)
			usleep(1000);
	}
	if (done < kHostileQps)
		return fail(std::to_string(done) + " of " + std::to_string(kHostileQps) + " writes completed within " +
			    std::to_string(a.timeout_ms) + " ms");
	unsigned right = 0;
	for (unsigned i = 0; i < kHostileQps; i++) {
		const bool ok = i == 0 ? got[i] == IBV_WC_SUCCESS : got[i] == IBV_WC_REM_ACCESS_ERR;
		say(std::string(ok ? "ok" : "WRONG") + ": QP " + std::to_string(i) + ", a write " + probes[i].what + ": " +
		    ibv_wc_status_str(got[i]));
		right += ok;
	}
	cli.close();
	if (right != kHostileQps)
		return fail(std::to_string(kHostileQps - right) + " of " + std::to_string(kHostileQps) +
			    " writes ended otherwise than they must");
	say("PASS: the write inside a window arrived; the 3 outside or with a wrong key failed at the server's NIC");
	return 0;
}

int usage()
{
	fprintf(stderr, "usage: cm_pair --server ADDR PORT N [--timeout-ms MS] [--stall] [--die-at K]\n"
			"       cm_pair --client ADDR PORT N --local ADDR [--timeout-ms MS] [--corrupt-qp Q]\n"
			"               [--wrong-device cm:DEV|ibv:DEV]\n"
			"       cm_pair --bad-client ADDR PORT --local ADDR [--timeout-ms MS]\n"
			"       cm_pair --hostile-writer ADDR PORT --local ADDR --size B --slots S --messages M\n");
	return 2;
}

bool to_int(const char *s, long lo, long hi, long *v)
{
	char *end = nullptr;
	errno = 0;
	*v = strtol(s, &end, 10);
	return *s && *end == '\0' && errno == 0 && *v >= lo && *v <= hi;
}

} // namespace

int main(int argc, char **argv)
{
	Args a;
	int i = 1;
	long v;
	if (argc < 4)
		return usage();
	a.mode = argv[i++];
	a.addr = argv[i++];
	a.port = argv[i++];
	if (a.mode == "--server" || a.mode == "--client") {
		if (i >= argc || !to_int(argv[i++], 1, kMaxQps, &v))
			return usage();
		a.n = static_cast<unsigned>(v);
	} else if (a.mode != "--bad-client" && a.mode != "--hostile-writer") {
		return usage();
	}
	for (; i < argc; i++) {
		std::string o = argv[i];
		bool has = i + 1 < argc;
		if (o == "--local" && has)
			a.local = argv[++i];
		else if (o == "--timeout-ms" && has && to_int(argv[i + 1], 1, 600000, &v))
			a.timeout_ms = static_cast<int>(v), i++;
		else if (o == "--die-at" && has && to_int(argv[i + 1], 0, kMaxQps, &v))
			a.die_at = static_cast<int>(v), i++;
		else if (o == "--corrupt-qp" && has && to_int(argv[i + 1], 0, kMaxQps, &v))
			a.corrupt_qp = static_cast<int>(v), i++;
		else if (o == "--wrong-device" && has)
			a.wrong_device = argv[++i];
		else if (o == "--size" && has && to_int(argv[i + 1], 8, 1 << 20, &v))
			a.size = static_cast<uint32_t>(v), i++;
		else if (o == "--slots" && has && to_int(argv[i + 1], 1, 1 << 20, &v))
			a.slots = static_cast<uint32_t>(v), i++;
		else if (o == "--messages" && has && to_int(argv[i + 1], 1, 1L << 40, &v))
			a.messages = static_cast<uint64_t>(v), i++;
		else if (o == "--stall")
			a.stall = true;
		else
			return usage();
	}
	if (a.mode == "--server")
		return run_server(a);
	if (a.local.empty())
		return usage();
	if (a.mode == "--hostile-writer")
		return a.size && a.slots && a.messages ? run_hostile_writer(a) : usage();
	return a.mode == "--client" ? run_client(a) : run_bad_client(a);
}
