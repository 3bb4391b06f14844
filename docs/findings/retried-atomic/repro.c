/* docs/findings/retried-atomic.md: explorer finding 4: RC fetch_add over 512 QPs of rxe0, fenced chains of 4, every WR signalled (docs/repro/retried-atomic.conf); cc -DRP_QP_TIMEOUT=1 to make it retry. */
#define RP_POINT { .name = "point", .verb = V_FETCH_ADD, .uc = 0, .size = 8, .batch = 4, .signal_every = 1, .sq_depth = 16, .window = 4, .inline_send = 0, .fence = 1, .srq = 1, .post_wr = 0, .adaptive_poll = 0, .rate = 0, .flow_window = 0, .cq_ex = { 0, 0 }, .srq_depth = { 0, 0 }, .srq_refill = { 0, 0 }, .reversed = 0x0, .dev_a = "rxe0", .dev_b = "rxe0", .qps = 512, .flows = 1 }
#define RP_SECONDS 5
#define RP_STALL_S 5
#define RP_KIND K_CORRECTNESS

/* A standalone reproducer of an rdmapipe-explore finding (issue 49): plain libibverbs,
 * two QPs of one process per connection (requester on device A, responder on device B,
 * or the other way for a flow that crosses), the point's traffic with every message
 * verified. rdmapipe-explore writes repro.c as a
 * block of #defines (the point, and for a performance finding its reference) followed by
 * this file; compiled alone it runs its defaults (RC write_imm of 64 B on rxe0).
 *   cc -std=c11 -O2 -Wall -Wextra -o repro repro.c -libverbs
 * Exit: 0 the anomaly did not show, 1 it did (one line on stdout, "KIND: what", KIND one of
 * data, completion, stall, error, counter, slow), 2 a setup error (the call named).
 * RP_KIND K_BENCH measures instead each point of RP_BENCH (rdmapipe-explore's bare-verbs
 * reference): one line each, "bench K ok: RATE msg/s GBPS Gbit/s MESSAGES messages" or
 * "bench K failed: LINE"; exit 0. */
#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum verb { V_WRITE, V_WRITE_IMM, V_SEND, V_SEND_IMM, V_READ, V_FETCH_ADD, V_CMP_SWAP };
enum kind { K_CORRECTNESS, K_COUNTERS, K_PERFORMANCE, K_BENCH };

struct params {
	const char *name;      /* "point" or "reference" */
	enum verb verb;
	int uc;
	uint32_t size, qps, flows, batch, signal_every, sq_depth, window;   /* qps: all flows' (flows x the flow's) */
	uint32_t flow_window;  /* messages in flight over each flow's QPs, not yet credited (0: per-QP windows alone) */
	int inline_send, fence, srq;
	/* srq: each end's SRQ (0: dev_a's io context, 1: dev_b's): receives it holds, and
	 * how many must be missing before they are posted again in one chain (0: none there). */
	uint32_t srq_depth[2], srq_refill[2];
	uint64_t reversed;     /* bit f: flow f runs from dev_b to dev_a (placement = crossing) */
	int post_wr;           /* ibv_wr_* on an ibv_qp_ex; else chained ibv_post_send */
	int cq_ex[2];          /* per end (dev_a's io context, dev_b's): ibv_create_cq_ex, read by
				* ibv_start_poll/ibv_next_poll/ibv_end_poll; else ibv_poll_cq */
	int adaptive_poll;     /* after a run of empty polls, sleep on a completion channel; else busy polling */
	double rate;           /* messages a second per flow (0: as fast as it goes) */
	const char *dev_a, *dev_b;
	/* A list of sizes: the pipeline once per size, in turn (rdmapipe's size sweep,
	 * lib/pipeline/graph_sweep.cpp), each step set up afresh. 0: size alone. */
	uint32_t steps, sweep[64];
};

#ifndef RP_POINT
#define RP_POINT { .name = "point", .verb = V_WRITE_IMM, .size = 64, .qps = 1, .flows = 1, .batch = 32, \
		   .signal_every = 32, .sq_depth = 128, .window = 1024, .srq = 1, .srq_depth = { 0, 1152 }, \
		   .srq_refill = { 0, 128 }, .dev_a = "rxe0", .dev_b = "rxe0" }
#endif
#ifndef RP_REFERENCE
#define RP_REFERENCE RP_POINT
#endif
#ifndef RP_KIND
#define RP_KIND K_CORRECTNESS
#endif
#ifndef RP_SECONDS
#define RP_SECONDS 1.0
#endif
#ifndef RP_STALL_S
#define RP_STALL_S 5.0
#endif
#ifndef RP_COUNTER
#define RP_COUNTER ""          /* counters: the hw_counter ... */
#endif
#ifndef RP_COUNTER_FLAG
#define RP_COUNTER_FLAG 0.0    /* ... and its threshold per message */
#endif
#ifndef RP_BENCH
#define RP_BENCH RP_POINT      /* bench: the points measured, each RP_SECONDS */
#endif
#ifndef RP_POINT_TIMEOUT_S
#define RP_POINT_TIMEOUT_S 60  /* bench: a point that takes longer is killed (a hang) */
#endif
#ifndef RP_QP_TIMEOUT
#define RP_QP_TIMEOUT 14       /* RC's local ACK timeout, 4.096 us x 2^N: rdmapipe's 67 ms; a
				* smaller one makes the requester retry more (cc -DRP_QP_TIMEOUT=N) */
#endif
#ifndef RP_PERF_FLAG
#define RP_PERF_FLAG 0.5       /* performance: slow under this x the reference (rate AND Gbit/s) */
#endif

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void setup_fail(const char *call, const char *what)
{
	printf("setup error: %s (%s): %s\n", call, what, strerror(errno ? errno : EINVAL));
	exit(2);
}

/* The payload of message seq of a QP: every byte checked. */
static uint8_t pattern(uint32_t qp, uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131u + qp * 7u + i);
}

static void fill(uint8_t *p, uint32_t qp, uint64_t seq, uint32_t size)
{
	for (uint32_t i = 0; i < size; i++)
		p[i] = pattern(qp, seq, i);
}

/* The first byte that differs, or -1. */
static long check(const uint8_t *p, uint32_t qp, uint64_t seq, uint32_t size)
{
	for (uint32_t i = 0; i < size; i++)
		if (p[i] != pattern(qp, seq, i))
			return (long)i;
	return -1;
}

/* One end's io context, as an rdmapipe lcore's: its device, a send CQ and a receive CQ,
 * its SRQ (with its receive buffers and the chain that reposts them). */
struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq[2];               /* CQ_SEND, CQ_RECV */
	struct ibv_cq_ex *cqx[2];           /* cq_ex: the same CQs, extended */
	/* Chosen once at setup, as the side's cq_api: poll_classic or poll_ex; the count or -1. */
	int (*poll)(struct side *s, int which, int n, struct ibv_wc *wc);
	struct ibv_comp_channel *channel;   /* adaptive polling: both CQs report here */
	int next_poll_ends_batch;           /* rxe: ibv_next_poll's ENOENT already ended the batch */
	struct ibv_srq *srq;
	uint8_t *rpool;                     /* srq, sends: a buffer per receive (wr_id: its index) */
	struct ibv_mr *rpool_mr;
	uint32_t depth, refill;             /* receives held; reposted once refill are missing */
	uint32_t missing;                   /* consumed, not yet posted again: ids[0..missing) */
	uint64_t *ids;
	struct ibv_recv_wr *rwr;            /* the repost chain, linked at setup */
	struct ibv_sge *rsge;
	uint8_t port;
	int gid_index;
	union ibv_gid gid;
	uint16_t lid;
	enum ibv_mtu mtu;
};

enum { CQ_SEND, CQ_RECV };

struct conn {
	struct side *rs, *ds;         /* the requester's end, the responder's */
	uint32_t flow;
	struct ibv_qp *req, *resp;
	struct ibv_qp_ex *reqx;       /* post_wr: the requester's ibv_qp_ex */
	uint8_t *sbuf, *rbuf;         /* window slots of size (atomics: 8-byte results / the target word) */
	struct ibv_mr *smr, *rmr;
	uint64_t posted, acked, received;   /* messages: posted, completed at the requester, consumed at the responder */
	uint64_t unsignalled;
	uint64_t signalled_to;        /* messages up to here end in a signalled WR */
};

struct run;
typedef int (*post_fn)(struct conn *c, struct ibv_send_wr *wr);

struct run {
	const struct params *p;
	struct side s[2];             /* dev_a's io context, dev_b's */
	struct conn *c;
	struct ibv_send_wr *wr;       /* a chain of up to batch WRs, allocated at setup */
	struct ibv_sge *sge;
	post_fn post;                 /* chosen once at setup: post_classic or post_wr */
	uint32_t empty_loops;         /* adaptive polling: loops in a row that did nothing */
	uint32_t cursor;              /* the QP the next round of posts starts at */
	uint64_t *flow_sent;          /* rate: messages posted per flow, ... */
	uint64_t *flow_sent0;         /* ... those when the pacing began (pace_t0) */
	uint64_t *flow_received;      /* flow window: messages the flow's responder consumed, ... */
	uint64_t *flow_credit;        /* ... those it credited (every flow_step) */
	uint32_t flow_step;           /* lib/pipeline/flow.cpp: a quarter of the flow window, at least 1 */
	int whole_chains_flow;        /* the flow window holds a chain back until a whole one fits */
	double pace_t0;
	uint64_t messages;
	/* CQEs that can be pending: sends not yet completed plus receives not yet polled,
	 * kept under the CQ's size (a device caps it: rxe at 32767, below 512 QPs' needs). */
	uint64_t posted_total, acked_total, received_total, cqe;
	double elapsed, last_progress;
	char anomaly[512];
};

/* A CQ as the engine makes it: classic or extended (the fields the checks read), on the
 * side's completion channel for adaptive polling. */
static void create_cq(struct side *s, int which, int ex, const char *dev, int cqe)
{
	if (!ex) {
		s->cq[which] = ibv_create_cq(s->ctx, cqe, NULL, s->channel, 0);
		if (!s->cq[which])
			setup_fail("ibv_create_cq", dev);
		return;
	}
	struct ibv_cq_init_attr_ex ca;
	memset(&ca, 0, sizeof(ca));
	ca.cqe = (uint32_t)cqe;
	ca.channel = s->channel;
	ca.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM;
	/* One thread polls it: the provider may skip its CQ lock (else made without the hint). */
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	ca.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	s->cqx[which] = ibv_create_cq_ex(s->ctx, &ca);
	if (!s->cqx[which]) {
		ca.comp_mask = 0;
		ca.flags = 0;
		s->cqx[which] = ibv_create_cq_ex(s->ctx, &ca);
	}
	if (!s->cqx[which])
		setup_fail("ibv_create_cq_ex", dev);
	s->cq[which] = ibv_cq_ex_to_cq(s->cqx[which]);
}

static int open_side(struct side *s, const struct params *p, int i, const char *dev, int *cqe)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);
	if (!l)
		setup_fail("ibv_get_device_list", dev);
	for (int i = 0; i < n && !s->ctx; i++)
		if (!strcmp(ibv_get_device_name(l[i]), dev))
			s->ctx = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	if (!s->ctx)
		setup_fail("ibv_open_device", dev);
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		setup_fail("ibv_alloc_pd", dev);
	struct ibv_device_attr da;
	if (ibv_query_device(s->ctx, &da))
		setup_fail("ibv_query_device", dev);
	if (*cqe > da.max_cqe)
		*cqe = da.max_cqe;
	if (p->adaptive_poll) {
		s->channel = ibv_create_comp_channel(s->ctx);
		if (!s->channel)
			setup_fail("ibv_create_comp_channel", dev);
	}
	create_cq(s, CQ_SEND, p->cq_ex[i], dev, *cqe);
	create_cq(s, CQ_RECV, p->cq_ex[i], dev, *cqe);
	s->next_poll_ends_batch = da.vendor_id == 0xffffff;   /* soft-RoCE (rdma_rxe) */
	s->port = 1;
	struct ibv_port_attr pa;
	if (ibv_query_port(s->ctx, s->port, &pa))
		setup_fail("ibv_query_port", dev);
	s->lid = pa.lid;
	s->mtu = pa.active_mtu;
	/* RoCE: the interface's IPv4 GID (::ffff:a.b.c.d, as rdmapipe picks it), else the
	 * first GID that is set (rxe's index 0 is the IPv6 link-local one). */
	s->gid_index = -1;
	for (int pass = 0; pass < 2 && s->gid_index < 0; pass++)
		for (int i = 0; i < pa.gid_tbl_len && s->gid_index < 0; i++) {
			union ibv_gid g;
			static const uint8_t v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
			if (ibv_query_gid(s->ctx, s->port, i, &g) != 0 || !(g.global.subnet_prefix || g.global.interface_id))
				continue;
			if (pass == 1 || !memcmp(g.raw, v4, sizeof(v4))) {
				s->gid = g;
				s->gid_index = i;
			}
		}
	return 0;
}

/* post_wr: a QP with the ibv_wr_* send operations of its transport (as the engine asks). */
static struct ibv_qp *create_qp_ex(struct side *s, const struct ibv_qp_init_attr *a, int uc)
{
	struct ibv_qp_init_attr_ex x;
	memset(&x, 0, sizeof(x));
	x.send_cq = a->send_cq;
	x.recv_cq = a->recv_cq;
	x.srq = a->srq;
	x.cap = a->cap;
	x.qp_type = a->qp_type;
	x.pd = s->pd;
	x.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	x.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
			   IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM;
	if (!uc)
		x.send_ops_flags |= IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;
	return ibv_create_qp_ex(s->ctx, &x);
}

static struct ibv_qp *make_qp(const struct run *r, struct side *s, int requester)
{
	const struct params *p = r->p;
	struct ibv_qp_init_attr a;
	memset(&a, 0, sizeof(a));
	a.send_cq = s->cq[CQ_SEND];
	a.recv_cq = s->cq[CQ_RECV];
	a.qp_type = p->uc ? IBV_QPT_UC : IBV_QPT_RC;
	a.cap.max_send_wr = requester ? p->sq_depth : 1;
	a.cap.max_recv_wr = requester ? 1 : p->window;
	a.cap.max_send_sge = 1;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = requester && p->inline_send ? p->size : 0;
	a.srq = !requester && p->srq ? s->srq : NULL;
	const int ex = requester && p->post_wr;
	struct ibv_qp *qp = ex ? create_qp_ex(s, &a, p->uc) : ibv_create_qp(s->pd, &a);
	if (!qp) {
		char what[128];
		snprintf(what, sizeof(what), "%s: max_send_wr %u, max_recv_wr %u, max_inline_data %u",
			 requester ? "requester" : "responder", a.cap.max_send_wr, a.cap.max_recv_wr, a.cap.max_inline_data);
		setup_fail(ex ? "ibv_create_qp_ex" : "ibv_create_qp", what);
	}
	return qp;
}

static void connect_qp(struct ibv_qp *qp, const struct side *local, const struct side *remote, uint32_t dest, int uc)
{
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = local->port;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		(uc ? 0 : IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		setup_fail("ibv_modify_qp", "INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = local->mtu < remote->mtu ? local->mtu : remote->mtu;
	a.dest_qp_num = dest;
	a.ah_attr.port_num = local->port;
	a.ah_attr.dlid = remote->lid;
	if (remote->gid_index >= 0) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = remote->gid;
		a.ah_attr.grh.sgid_index = (uint8_t)local->gid_index;
		a.ah_attr.grh.hop_limit = 64;
	}
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (!uc) {
		a.max_dest_rd_atomic = 16;
		a.min_rnr_timer = 12;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	if (ibv_modify_qp(qp, &a, mask))
		setup_fail("ibv_modify_qp", "RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (!uc) {
		a.timeout = RP_QP_TIMEOUT;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 16;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (ibv_modify_qp(qp, &a, mask))
		setup_fail("ibv_modify_qp", "RTS");
}

static int has_recv(enum verb v)
{
	return v == V_WRITE_IMM || v == V_SEND || v == V_SEND_IMM;
}

static int atomic(enum verb v)
{
	return v == V_FETCH_ADD || v == V_CMP_SWAP;
}

static int fills_receive(enum verb v)
{
	return v == V_SEND || v == V_SEND_IMM;
}

static uint32_t slot_bytes(const struct params *p)
{
	return atomic(p->verb) ? 8 : p->size;
}

/* A requester's buffers: a send's is free again once completed (a send queue's worth,
 * as the engine binds them); the other verbs' mirror the window's slots. */
static uint32_t local_slots(const struct params *p)
{
	return fills_receive(p->verb) && p->sq_depth < p->window ? p->sq_depth : p->window;
}

/* A responder's memory per QP: the window's slots (atomics: the target word); a word for
 * sends through an SRQ, which land in the SRQ's own buffers. */
static size_t remote_bytes(const struct params *p)
{
	return fills_receive(p->verb) && p->srq ? 64 : (size_t)slot_bytes(p) * p->window;
}

/* wr_id: the QP in the top 24 bits, the message's sequence below. */
static uint64_t wr_id(uint32_t q, uint64_t seq)
{
	return ((uint64_t)q << 40) | seq;
}

/* A QP's own receive queue (recv_queue = "qp"): message seq's receive. */
static void post_recv(struct run *r, uint32_t q, uint64_t seq)
{
	struct conn *c = &r->c[q];
	const struct params *p = r->p;
	struct ibv_sge sge = { (uintptr_t)(c->rbuf + (seq % p->window) * p->size), p->size, c->rmr->lkey };
	struct ibv_recv_wr wr, *bad;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id(q, seq);
	wr.sg_list = &sge;
	wr.num_sge = p->verb == V_WRITE_IMM ? 0 : 1;
	int e = ibv_post_recv(c->resp, &wr, &bad);
	if (e) {
		errno = e;
		setup_fail("ibv_post_recv", "responder");
	}
}

/* Posts a side's missing SRQ receives in one chain; 0 or an errno. */
static int srq_post(struct side *s, uint32_t bytes)
{
	for (uint32_t k = 0; k < s->missing; k++) {
		s->rwr[k].wr_id = s->ids[k];
		s->rwr[k].next = k + 1 < s->missing ? &s->rwr[k + 1] : NULL;
		if (s->rpool)
			s->rsge[k].addr = (uintptr_t)(s->rpool + s->ids[k] * bytes);
	}
	struct ibv_recv_wr *bad;
	int e = s->missing ? ibv_post_srq_recv(s->srq, s->rwr, &bad) : 0;
	if (!e)
		s->missing = 0;
	return e;
}

/* An io context's SRQ as the engine keeps it (lib/engine/recv_refill.h): depth receives
 * posted at setup (sends: each with a buffer; write_imm: zero-SGE), reposted in one
 * chain once refill of them are missing. */
static void srq_setup(struct side *s, const struct params *p, int i, const char *dev)
{
	s->depth = p->srq_depth[i];
	s->refill = p->srq_refill[i] ? p->srq_refill[i] : 1;
	if (!s->depth)
		return;
	struct ibv_srq_init_attr sa;
	memset(&sa, 0, sizeof(sa));
	sa.attr.max_wr = s->depth;
	sa.attr.max_sge = 1;
	s->srq = ibv_create_srq(s->pd, &sa);
	if (!s->srq)
		setup_fail("ibv_create_srq", dev);
	s->ids = calloc(s->depth, sizeof(*s->ids));
	s->rwr = calloc(s->depth, sizeof(*s->rwr));
	s->rsge = calloc(s->depth, sizeof(*s->rsge));
	if (!s->ids || !s->rwr || !s->rsge)
		setup_fail("calloc", "SRQ receives");
	if (fills_receive(p->verb)) {
		size_t n = (size_t)s->depth * p->size;
		s->rpool = aligned_alloc(64, (n + 63) / 64 * 64);
		if (!s->rpool)
			setup_fail("aligned_alloc", "SRQ buffers");
		memset(s->rpool, 0, n);
		s->rpool_mr = ibv_reg_mr(s->pd, s->rpool, n, IBV_ACCESS_LOCAL_WRITE);
		if (!s->rpool_mr)
			setup_fail("ibv_reg_mr", "SRQ buffers");
	}
	for (uint32_t k = 0; k < s->depth; k++) {
		s->rwr[k].sg_list = &s->rsge[k];
		s->rwr[k].num_sge = s->rpool ? 1 : 0;
		s->rsge[k].length = p->size;
		s->rsge[k].lkey = s->rpool ? s->rpool_mr->lkey : 0;
		s->ids[k] = k;
	}
	s->missing = s->depth;
	int e = srq_post(s, p->size);
	if (e) {
		errno = e;
		setup_fail("ibv_post_srq_recv", dev);
	}
}

/* The two ways to post a chain of WRs; 0 or an errno. */
static int post_classic(struct conn *c, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	return ibv_post_send(c->req, wr, &bad);
}

/* The same chain built in the send queue by ibv_wr_*, one doorbell at ibv_wr_complete. */
static int post_wr(struct conn *c, struct ibv_send_wr *wr)
{
	struct ibv_qp_ex *x = c->reqx;
	ibv_wr_start(x);
	for (; wr; wr = wr->next) {
		x->wr_id = wr->wr_id;
		x->wr_flags = wr->send_flags;
		switch (wr->opcode) {
		case IBV_WR_RDMA_WRITE: ibv_wr_rdma_write(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr); break;
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			ibv_wr_rdma_write_imm(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr, wr->imm_data);
			break;
		case IBV_WR_SEND: ibv_wr_send(x); break;
		case IBV_WR_SEND_WITH_IMM: ibv_wr_send_imm(x, wr->imm_data); break;
		case IBV_WR_RDMA_READ: ibv_wr_rdma_read(x, wr->wr.rdma.rkey, wr->wr.rdma.remote_addr); break;
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
			ibv_wr_atomic_fetch_add(x, wr->wr.atomic.rkey, wr->wr.atomic.remote_addr, wr->wr.atomic.compare_add);
			break;
		case IBV_WR_ATOMIC_CMP_AND_SWP:
			ibv_wr_atomic_cmp_swp(x, wr->wr.atomic.rkey, wr->wr.atomic.remote_addr, wr->wr.atomic.compare_add,
					      wr->wr.atomic.swap);
			break;
		default: ibv_wr_abort(x); return EINVAL;
		}
		if (wr->send_flags & IBV_SEND_INLINE)
			ibv_wr_set_inline_data(x, (void *)(uintptr_t)wr->sg_list[0].addr, wr->sg_list[0].length);
		else
			ibv_wr_set_sge(x, wr->sg_list[0].lkey, wr->sg_list[0].addr, wr->sg_list[0].length);
	}
	return ibv_wr_complete(x);
}

/* The two ways to read completions, each into struct ibv_wc; the count or -1. */
static int poll_classic(struct side *s, int which, int n, struct ibv_wc *wc)
{
	return ibv_poll_cq(s->cq[which], n, wc);
}

static void read_wc_ex(struct ibv_cq_ex *x, struct ibv_wc *w)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = x->wr_id;
	w->status = x->status;
	w->qp_num = ibv_wc_read_qp_num(x);
	if (w->status != IBV_WC_SUCCESS) {
		w->vendor_err = ibv_wc_read_vendor_err(x);
		return;   /* the other fields are undefined on an error */
	}
	w->opcode = ibv_wc_read_opcode(x);
	w->byte_len = ibv_wc_read_byte_len(x);
	w->wc_flags = ibv_wc_read_wc_flags(x);
	if (w->wc_flags & IBV_WC_WITH_IMM)
		w->imm_data = ibv_wc_read_imm_data(x);
}

/* ibv_start_poll .. ibv_next_poll .. ibv_end_poll. On rxe (next_poll_ends_batch) an
 * ENOENT from ibv_next_poll has already stored the consumer index and unlocked the CQ,
 * and ibv_end_poll after it would step past the producer: the engine skips it there. */
static int poll_ex(struct side *s, int which, int n, struct ibv_wc *wc)
{
	struct ibv_cq_ex *x = s->cqx[which];
	struct ibv_poll_cq_attr attr;
	memset(&attr, 0, sizeof(attr));
	int e = ibv_start_poll(x, &attr);
	if (e == ENOENT)
		return 0;
	if (e)
		return -1;
	int i = 0;
	for (;;) {
		read_wc_ex(x, &wc[i]);
		if (++i == n)
			break;
		e = ibv_next_poll(x);
		if (e == ENOENT && s->next_poll_ends_batch)
			return i;
		if (e == ENOENT)
			break;
		if (e) {
			ibv_end_poll(x);
			return -1;
		}
	}
	ibv_end_poll(x);
	return i;
}

static void setup(struct run *r)
{
	const struct params *p = r->p;
	int cqe = (int)(p->qps * (p->sq_depth + p->window) + 16);
	open_side(&r->s[0], p, 0, p->dev_a, &cqe);
	open_side(&r->s[1], p, 1, p->dev_b, &cqe);
	for (int i = 0; i < 2 && p->srq; i++)
		srq_setup(&r->s[i], p, i, i ? p->dev_b : p->dev_a);
	r->cqe = (uint64_t)cqe;
	if (r->cqe < 4 * (uint64_t)p->batch)
		setup_fail("ibv_create_cq", "the device's max_cqe is under 4 x batch");
	r->c = calloc(p->qps, sizeof(*r->c));
	r->flow_sent = calloc(p->flows, sizeof(*r->flow_sent));
	r->flow_sent0 = calloc(p->flows, sizeof(*r->flow_sent0));
	r->flow_received = calloc(p->flows, sizeof(*r->flow_received));
	r->flow_credit = calloc(p->flows, sizeof(*r->flow_credit));
	r->wr = calloc(p->batch, sizeof(*r->wr));
	r->sge = calloc(p->batch, sizeof(*r->sge));
	if (!r->c || !r->flow_sent || !r->flow_sent0 || !r->flow_received || !r->flow_credit || !r->wr || !r->sge)
		setup_fail("calloc", "connections");
	/* lib/pipeline/flow.cpp (flow_credit_step, requester_params' whole_chains_flow). */
	r->flow_step = p->flow_window / 4 ? p->flow_window / 4 : 1;
	r->whole_chains_flow = p->flow_window >= p->batch + r->flow_step - 1;
	r->post = p->post_wr ? post_wr : post_classic;
	for (int i = 0; i < 2; i++)
		r->s[i].poll = p->cq_ex[i] ? poll_ex : poll_classic;
	for (uint32_t q = 0; q < p->qps; q++) {
		struct conn *c = &r->c[q];
		c->flow = q / (p->qps / p->flows);
		const int rev = (int)((p->reversed >> c->flow) & 1);
		c->rs = &r->s[rev];
		c->ds = &r->s[!rev];
		size_t ln = (size_t)slot_bytes(p) * local_slots(p), rn = remote_bytes(p);
		c->sbuf = aligned_alloc(64, (ln + 63) / 64 * 64);
		c->rbuf = aligned_alloc(64, (rn + 63) / 64 * 64);
		if (!c->sbuf || !c->rbuf)
			setup_fail("aligned_alloc", "buffers");
		memset(c->sbuf, 0, ln);
		memset(c->rbuf, 0, rn);
		int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | (p->uc ? 0 : IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
		c->smr = ibv_reg_mr(c->rs->pd, c->sbuf, ln, acc);
		c->rmr = ibv_reg_mr(c->ds->pd, c->rbuf, rn, acc);
		if (!c->smr || !c->rmr)
			setup_fail("ibv_reg_mr", "buffers");
		c->req = make_qp(r, c->rs, 1);
		c->resp = make_qp(r, c->ds, 0);
		if (p->post_wr && !(c->reqx = ibv_qp_to_qp_ex(c->req)))
			setup_fail("ibv_qp_to_qp_ex", "requester");
		connect_qp(c->req, c->rs, c->ds, c->resp->qp_num, p->uc);
		connect_qp(c->resp, c->ds, c->rs, c->req->qp_num, p->uc);
		if (has_recv(p->verb) && !p->srq)
			for (uint64_t s = 0; s < p->window; s++)
				post_recv(r, q, s);
	}
}

/* What failed, the first word of the line printed (rdmapipe-explore matches it to the
 * finding's own failure): a message's content or order, a completion's status, a stall,
 * or a call that failed. */
static const char *const KIND_DATA = "data", *const KIND_COMPLETION = "completion", *const KIND_STALL = "stall",
		  *const KIND_ERROR = "error";

/* The first anomaly, as "KIND: what" (fmt takes up to three numbers). */
static void anomaly(struct run *r, const char *kind, const char *fmt, unsigned long long a, unsigned long long b,
		    unsigned long long c)
{
	if (r->anomaly[0])
		return;
	int n = snprintf(r->anomaly, sizeof(r->anomaly), "%s: ", kind);
	snprintf(r->anomaly + n, sizeof(r->anomaly) - (size_t)n, fmt, a, b, c);
}

/* What of n messages flow f's window lets it send now: the window less the flow's
 * messages not yet credited; where the credit steps leave room for a whole chain (want),
 * none until one fits (lib/engine/requester_burst.h, flow_window_room). */
static uint32_t flow_room(const struct run *r, uint32_t f, uint32_t n, uint32_t want)
{
	const uint64_t out = r->flow_sent[f] - r->flow_credit[f];
	const uint64_t room = out < r->p->flow_window ? r->p->flow_window - out : 0;
	if (room < want && r->whole_chains_flow)
		return 0;
	return room < n ? (uint32_t)room : n;
}

/* Posts one chain of n WRs on QP q (one ibv_post_send), cut to its flow's window; 0
 * when there was no room. close: its last WR signalled (the drain's, so that every
 * message completes). */
static int post_chain(struct run *r, uint32_t q, uint32_t n, int close)
{
	const struct params *p = r->p;
	struct conn *c = &r->c[q];
	if (p->flow_window && !(n = flow_room(r, c->flow, n, close ? 1 : p->batch)))
		return 0;
	uint64_t done = has_recv(p->verb) ? (c->received < c->acked ? c->received : c->acked) : c->acked;
	if (c->posted + n - done > p->window || c->posted + n - c->acked > p->sq_depth)
		return 0;
	uint64_t pending = r->posted_total + n - r->acked_total;
	if (has_recv(p->verb))
		pending += r->posted_total + n - r->received_total;
	if (pending > r->cqe)
		return 0;
	struct ibv_send_wr *wr = r->wr;
	struct ibv_sge *sge = r->sge;
	if (n > p->batch)
		n = p->batch;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t seq = c->posted + i;
		uint32_t slot = fills_receive(p->verb) && p->srq ? 0 : (uint32_t)(seq % p->window);
		uint8_t *local = c->sbuf + (size_t)(seq % local_slots(p)) * slot_bytes(p);
		uint8_t *remote = c->rbuf + (size_t)slot * slot_bytes(p);
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = wr_id(q, seq);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		sge[i].addr = (uintptr_t)local;
		sge[i].length = slot_bytes(p);
		sge[i].lkey = c->smr->lkey;
		c->unsignalled++;
		/* Signalled every signal_every WRs, and before the SQ could fill with unsignalled ones. */
		if (c->unsignalled >= p->signal_every || seq + 1 - c->acked >= p->sq_depth || (close && i + 1 == n)) {
			wr[i].send_flags |= IBV_SEND_SIGNALED;
			c->unsignalled = 0;
			c->signalled_to = seq + 1;
		}
		if (p->fence && i == 0)
			wr[i].send_flags |= IBV_SEND_FENCE;
		if (p->inline_send)
			wr[i].send_flags |= IBV_SEND_INLINE;
		wr[i].imm_data = htobe32((uint32_t)seq);
		wr[i].wr.rdma.remote_addr = (uintptr_t)remote;
		wr[i].wr.rdma.rkey = c->rmr->rkey;
		switch (p->verb) {
		case V_WRITE: wr[i].opcode = IBV_WR_RDMA_WRITE; fill(local, q, seq, p->size); break;
		case V_WRITE_IMM: wr[i].opcode = IBV_WR_RDMA_WRITE_WITH_IMM; fill(local, q, seq, p->size); break;
		case V_SEND: wr[i].opcode = IBV_WR_SEND; fill(local, q, seq, p->size); break;
		case V_SEND_IMM: wr[i].opcode = IBV_WR_SEND_WITH_IMM; fill(local, q, seq, p->size); break;
		case V_READ: wr[i].opcode = IBV_WR_RDMA_READ; fill(remote, q, seq, p->size); memset(local, 0, p->size); break;
		case V_FETCH_ADD:
		case V_CMP_SWAP:
			/* One target word per QP (the responder's slot 0): message seq expects seq there. */
			wr[i].opcode = p->verb == V_FETCH_ADD ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
			wr[i].wr.atomic.remote_addr = (uintptr_t)c->rbuf;
			wr[i].wr.atomic.rkey = c->rmr->rkey;
			wr[i].wr.atomic.compare_add = p->verb == V_FETCH_ADD ? 1 : seq;
			wr[i].wr.atomic.swap = seq + 1;
			memset(local, 0xff, 8);
			break;
		}
	}
	int e = r->post(c, wr);
	if (e) {
		anomaly(r, KIND_ERROR, p->post_wr ? "ibv_wr_complete failed on QP %llu: errno %llu (posted %llu)"
				      : "ibv_post_send failed on QP %llu: errno %llu (posted %llu)",
			q, (unsigned long long)e, c->posted);
		return 0;
	}
	c->posted += n;
	r->posted_total += n;
	r->flow_sent[c->flow] += n;
	return 1;
}

/* How many of n messages QP q may post now: with a rate, what is due to its flow by now
 * (a batch ahead, so that chains stay whole) less what the flow sent, as the engine
 * paces (lib/engine/requester_burst.h); without one, all n. */
static uint32_t paced(const struct run *r, uint32_t q, uint32_t n)
{
	const struct params *p = r->p;
	if (p->rate <= 0)
		return n;
	uint32_t f = q / (p->qps / p->flows);
	uint64_t due = r->flow_sent0[f] + (uint64_t)((now_s() - r->pace_t0) * p->rate) + p->batch;
	uint64_t budget = due > r->flow_sent[f] ? due - r->flow_sent[f] : 0;
	return budget < n ? (uint32_t)budget : n;
}

/* Adaptive polling, as the engine's (lib/engine/idle.h): after 256 loops in a row that
 * did nothing, arm the CQs and sleep on the completion channel for at most 1 ms (an
 * event that came before the arming is found by the next poll). */
static void idle(struct run *r, int progress)
{
	if (!r->p->adaptive_poll)
		return;
	if (progress || ++r->empty_loops < 256) {
		if (progress)
			r->empty_loops = 0;
		return;
	}
	r->empty_loops = 0;
	struct pollfd pfd[2];
	for (int i = 0; i < 2; i++) {
		for (int w = CQ_SEND; w <= CQ_RECV; w++)
			if (ibv_req_notify_cq(r->s[i].cq[w], 0))
				anomaly(r, KIND_ERROR, "ibv_req_notify_cq failed on side %llu", (unsigned long long)i, 0, 0);
		pfd[i] = (struct pollfd){ r->s[i].channel->fd, POLLIN, 0 };
	}
	if (poll(pfd, 2, 1) <= 0)
		return;
	for (int i = 0; i < 2; i++) {
		struct ibv_cq *cq;
		void *ctx;
		if ((pfd[i].revents & POLLIN) && ibv_get_cq_event(r->s[i].channel, &cq, &ctx) == 0)
			ibv_ack_cq_events(cq, 1);
	}
}

/* A requester's completion: every message up to seq is done; its result checked. */
static void requester_done(struct run *r, uint32_t q, uint64_t seq)
{
	const struct params *p = r->p;
	struct conn *c = &r->c[q];
	for (uint64_t s = c->acked; s <= seq; s++) {
		const uint8_t *local = c->sbuf + (size_t)(s % local_slots(p)) * slot_bytes(p);
		long bad = -1;
		uint64_t got = 0;
		switch (p->verb) {
		case V_WRITE:
			/* RC: the completion means it was placed; UC promises nothing, checked at the end. */
			if (!p->uc && (bad = check(c->rbuf + (size_t)(s % p->window) * p->size, q, s, p->size)) >= 0)
				anomaly(r, KIND_DATA, "payload mismatch: write of QP %llu message %llu at byte %llu", q, s, (unsigned long long)bad);
			break;
		case V_READ:
			if ((bad = check(local, q, s, p->size)) >= 0)
				anomaly(r, KIND_DATA, "payload mismatch: read of QP %llu message %llu at byte %llu", q, s, (unsigned long long)bad);
			break;
		case V_FETCH_ADD:
		case V_CMP_SWAP:
			memcpy(&got, local, 8);
			if (got != s)
				anomaly(r, KIND_DATA, "atomic result mismatch: QP %llu message %llu returned %llu", q, s, got);
			break;
		default:
			break;
		}
	}
	r->acked_total += seq + 1 - c->acked;
	c->acked = seq + 1;
}

/* A responder's completion on side s: the immediate (sequence) and the payload checked. */
static void responder_done(struct run *r, struct side *s, const struct ibv_wc *wc)
{
	const struct params *p = r->p;
	uint32_t q = (uint32_t)(wc->wr_id >> 40);
	if (p->srq) {   /* an SRQ's receive is any of its QPs': the QP by its number on this end */
		for (q = 0; q < p->qps && (r->c[q].ds != s || r->c[q].resp->qp_num != wc->qp_num); q++)
			;
		if (q == p->qps) {
			anomaly(r, KIND_DATA, "receive on an unknown QP %llu", wc->qp_num, 0, 0);
			return;
		}
	}
	struct conn *c = &r->c[q];
	uint64_t seq = c->received;
	int imm = p->verb != V_SEND;
	if (imm && (!(wc->wc_flags & IBV_WC_WITH_IMM) || be32toh(wc->imm_data) != (uint32_t)seq)) {
		anomaly(r, KIND_DATA, "sequence error (lost or reordered messages): QP %llu expected %llu, immediate %llu", q, seq,
			(wc->wc_flags & IBV_WC_WITH_IMM) ? be32toh(wc->imm_data) : 0xffffffffull);
		return;
	}
	if (wc->byte_len != p->size)
		anomaly(r, KIND_DATA, "wrong length: QP %llu message %llu received %llu bytes", q, seq, wc->byte_len);
	/* A write_imm lands in this QP's slot for seq; a send in the buffer its receive named
	 * (an SRQ's, by index; a QP's own receive's, the slot of the sequence it was posted for). */
	uint64_t rseq = wc->wr_id & ((1ull << 40) - 1);
	const uint8_t *data = p->verb == V_WRITE_IMM ? c->rbuf + (seq % p->window) * p->size
			      : p->srq		     ? s->rpool + wc->wr_id * p->size
						     : c->rbuf + (rseq % p->window) * p->size;
	long bad = check(data, q, seq, p->size);
	if (bad >= 0)
		anomaly(r, KIND_DATA, "payload mismatch: QP %llu message %llu at byte %llu", q, seq, (unsigned long long)bad);
	c->received = seq + 1;
	r->received_total++;
	r->flow_received[c->flow]++;
	if (p->srq)   /* reposted with the side's next chain */
		s->ids[s->missing++] = wc->wr_id;
	else          /* on its own buffer (the same slot, window messages on) */
		post_recv(r, q, rseq + p->window);
}

/* After a burst of receives: each flow's consumed count credited where it moved a step
 * (lib/engine/responder_credit.cpp, send_flow_credit), the SRQ's missing receives
 * reposted once a refill's worth are (RecvRefill::refill). */
static void responder_burst_done(struct run *r, struct side *s)
{
	const struct params *p = r->p;
	for (uint32_t f = 0; p->flow_window && f < p->flows; f++)
		if (r->flow_received[f] - r->flow_credit[f] >= r->flow_step)
			r->flow_credit[f] = r->flow_received[f];
	if (!s->srq || s->missing < s->refill)
		return;
	int e = srq_post(s, p->size);
	if (e)
		anomaly(r, KIND_ERROR, "ibv_post_srq_recv failed: errno %llu (%llu receives)", (unsigned long long)e, s->missing, 0);
}

/* One burst of a CQ's completions, dispatched; how many. */
static int poll_cq(struct run *r, struct side *s, int which)
{
	struct ibv_wc wc[32];
	int n = s->poll(s, which, 32, wc);
	if (n < 0) {
		anomaly(r, KIND_ERROR, s->cqx[which] ? "ibv_start_poll/ibv_next_poll failed" : "ibv_poll_cq failed", 0, 0, 0);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			char m[128];
			snprintf(m, sizeof(m), "%s (status %%llu, vendor_err %%llu) on opcode %%llu",
				 ibv_wc_status_str(wc[i].status));
			anomaly(r, KIND_COMPLETION, m, wc[i].status, wc[i].vendor_err, wc[i].opcode);
			continue;
		}
		if (wc[i].opcode & IBV_WC_RECV) {
			responder_done(r, s, &wc[i]);
		} else {
			uint32_t q = (uint32_t)(wc[i].wr_id >> 40);
			requester_done(r, q, wc[i].wr_id & ((1ull << 40) - 1));
		}
		r->last_progress = now_s();
	}
	if (n > 0 && which == CQ_RECV)
		responder_burst_done(r, s);
	return n;
}

static uint64_t completed(const struct run *r)
{
	uint64_t m = 0;
	for (uint32_t q = 0; q < r->p->qps; q++)
		m += has_recv(r->p->verb) ? r->c[q].received : r->c[q].acked;
	return m;
}

static int all_done(const struct run *r)
{
	for (uint32_t q = 0; q < r->p->qps; q++) {
		const struct conn *c = &r->c[q];
		if (c->acked < c->posted || (has_recv(r->p->verb) && c->received < c->posted))
			return 0;
	}
	return 1;
}

/* Final words: an atomic's target holds the number of its messages; UC writes' last window. */
static void final_checks(struct run *r)
{
	const struct params *p = r->p;
	for (uint32_t q = 0; q < p->qps; q++) {
		struct conn *c = &r->c[q];
		if (atomic(p->verb)) {
			uint64_t w;
			memcpy(&w, c->rbuf, 8);
			if (w != c->posted)
				anomaly(r, KIND_DATA, "atomic final word: QP %llu holds %llu after %llu messages", q, w, c->posted);
		}
	}
}

/* A chain on each QP that has room (and, paced, is due one), from where the last post
 * ended, as the engine: a rate shared by a flow's QPs goes round them all. Draining
 * (!sending): one more message, signalled, on each QP with an unsignalled tail. The
 * chains posted. */
static int post_round(struct run *r, int sending)
{
	int chains = 0;
	for (uint32_t k = 0, q = r->cursor; k < r->p->qps; k++, q = q + 1 == r->p->qps ? 0 : q + 1) {
		uint32_t n = paced(r, q, sending ? r->p->batch : 1), posted = 0;
		if (n && sending)
			posted = (uint32_t)post_chain(r, q, n, 0);
		else if (n && r->c[q].signalled_to < r->c[q].posted)
			posted = (uint32_t)post_chain(r, q, 1, 1);
		if (posted)
			r->cursor = q + 1 == r->p->qps ? 0 : q + 1;
		chains += (int)posted;
	}
	return chains;
}

/* Runs the traffic for `seconds` (then drains): messages, elapsed time, any anomaly. */
static void traffic(struct run *r, double seconds)
{
	double start = now_s(), end = start + seconds;
	r->last_progress = start;
	r->pace_t0 = start;
	memcpy(r->flow_sent0, r->flow_sent, r->p->flows * sizeof(*r->flow_sent));
	int sending = 1;
	while (!r->anomaly[0]) {
		double t = now_s();
		int progress = 0;
		if (t >= end)
			sending = 0;
		progress += post_round(r, sending);
		for (int i = 0; i < 2; i++)
			progress += poll_cq(r, &r->s[i], CQ_SEND) + poll_cq(r, &r->s[i], CQ_RECV);
		if (!sending && all_done(r))
			break;
		idle(r, progress);
		if (t - r->last_progress > RP_STALL_S) {
			anomaly(r, KIND_STALL, "no completion for %llu s (%llu messages completed, %llu posted)", (unsigned long long)RP_STALL_S,
				completed(r), r->c[0].posted);
			break;
		}
	}
	r->elapsed = now_s() - start;
	r->messages = completed(r);
	if (!r->anomaly[0])
		final_checks(r);
}

/* hw_counters: the sum over the run's devices (one, or requester's and responder's). */
static double counter_value(const struct params *p)
{
	double sum = 0;
	const char *devs[2] = { p->dev_a, p->dev_b };
	for (int i = 0; i < (strcmp(p->dev_a, p->dev_b) ? 2 : 1); i++) {
		char path[512];
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s", devs[i], RP_COUNTER);
		FILE *f = fopen(path, "r");
		unsigned long long v = 0;
		if (!f)
			setup_fail("fopen", path);
		if (fscanf(f, "%llu", &v) != 1)
			setup_fail("fscanf", path);
		fclose(f);
		sum += (double)v;
	}
	return sum;
}

/* Everything setup() made, released in reverse order (the next step of a sweep sets up afresh). */
static void teardown(struct run *r)
{
	const struct params *p = r->p;
	for (uint32_t q = 0; q < p->qps; q++) {
		struct conn *c = &r->c[q];
		ibv_destroy_qp(c->req);
		ibv_destroy_qp(c->resp);
		ibv_dereg_mr(c->smr);
		ibv_dereg_mr(c->rmr);
		free(c->sbuf);
		free(c->rbuf);
	}
	for (int i = 0; i < 2; i++) {
		struct side *sd = &r->s[i];
		if (sd->srq)
			ibv_destroy_srq(sd->srq);
		if (sd->rpool_mr)
			ibv_dereg_mr(sd->rpool_mr);
		free(sd->rpool);
		free(sd->ids);
		free(sd->rwr);
		free(sd->rsge);
		for (int w = CQ_SEND; w <= CQ_RECV; w++)
			ibv_destroy_cq(sd->cq[w]);
		if (sd->channel)
			ibv_destroy_comp_channel(sd->channel);
		ibv_dealloc_pd(sd->pd);
		ibv_close_device(sd->ctx);
	}
	free(r->c);
	free(r->flow_sent);
	free(r->flow_sent0);
	free(r->flow_received);
	free(r->flow_credit);
	free(r->wr);
	free(r->sge);
}

/* The traffic of one step (or of the point, without a sweep); 1 with the anomaly's line
 * printed. Its messages and time added to *messages, *elapsed. */
static int run_step(const struct params *p, double seconds, uint64_t *messages, double *elapsed)
{
	struct run r;
	memset(&r, 0, sizeof(r));
	r.p = p;
	setup(&r);
	traffic(&r, seconds);
	if (r.anomaly[0]) {
		if (p->steps)
			printf("%s (size sweep: the step of %u B)\n", r.anomaly, p->size);
		else
			printf("%s\n", r.anomaly);
		return 1;
	}
	*messages += r.messages;
	*elapsed += r.elapsed;
	teardown(&r);
	return 0;
}

static int run_kind_correctness(const struct params *point, double seconds)
{
	double before = RP_KIND == K_COUNTERS ? counter_value(point) : 0, elapsed = 0;
	uint64_t messages = 0;
	struct params step = *point;
	for (uint32_t k = 0; k < (point->steps ? point->steps : 1); k++) {
		if (point->steps)
			step.size = point->sweep[k];
		if (run_step(&step, seconds, &messages, &elapsed))
			return 1;
	}
	if (RP_KIND == K_COUNTERS) {
		double per = (counter_value(point) - before) / (double)(messages ? messages : 1);
		if (per > RP_COUNTER_FLAG) {
			printf("counter: %s moved %.4f per message (threshold %.4f) over %llu messages\n", RP_COUNTER, per,
			       RP_COUNTER_FLAG, (unsigned long long)messages);
			return 1;
		}
		printf("ok: counter %s moved %.4f per message (threshold %.4f)\n", RP_COUNTER, per, RP_COUNTER_FLAG);
		return 0;
	}
	printf("ok: %llu messages in %.2f s verified\n", (unsigned long long)messages, elapsed);
	return 0;
}

/* Performance: the point and its reference, each set up once, run in turns (three
 * rounds each) and compared as rdmapipe-explore's judge does: slow when the rate AND
 * the Gbit/s are both under perf_flag x the reference's. */
static int run_kind_performance(struct run *pt, struct run *ref, double seconds)
{
	setup(pt);
	setup(ref);
	double m[2] = { 0, 0 }, s[2] = { 0, 0 };
	for (int round = 0; round < 3; round++)
		for (int i = 0; i < 2; i++) {
			struct run *r = i ? ref : pt;
			uint64_t before = completed(r);
			traffic(r, seconds / 3);
			if (r->anomaly[0]) {
				printf("%s (the %s)\n", r->anomaly, r->p->name);
				return 1;
			}
			m[i] += (double)(completed(r) - before);
			s[i] += r->elapsed;
		}
	double rate = m[0] / s[0], rrate = m[1] / s[1];
	double gbps = rate * pt->p->size * 8 / 1e9, rgbps = rrate * ref->p->size * 8 / 1e9;
	if (rate < RP_PERF_FLAG * rrate && gbps < RP_PERF_FLAG * rgbps) {
		printf("slow: %.0f msg/s %.3f Gbit/s, %.2fx its reference's %.0f msg/s %.3f Gbit/s (perf_flag %.2f)\n", rate, gbps,
		       rate / rrate, rrate, rgbps, RP_PERF_FLAG);
		return 1;
	}
	printf("ok: %.0f msg/s %.3f Gbit/s against the reference's %.0f msg/s %.3f Gbit/s\n", rate, gbps, rrate, rgbps);
	return 0;
}

/* Bench point k in a process of its own (its resources go with it; a hang or a crash
 * is its own): its last line, read through a pipe, said after "bench K ". */
static void bench_one(uint32_t k, const struct params *p)
{
	int fd[2];
	if (pipe(fd) != 0)
		setup_fail("pipe", "bench");
	pid_t pid = fork();
	if (pid < 0)
		setup_fail("fork", "bench");
	if (pid == 0) {
		struct run r;
		memset(&r, 0, sizeof(r));
		r.p = p;
		close(fd[0]);
		dup2(fd[1], 1);
		alarm(RP_POINT_TIMEOUT_S);
		setup(&r);
		traffic(&r, RP_SECONDS);
		if (r.anomaly[0]) {
			printf("%s\n", r.anomaly);
			exit(1);
		}
		double rate = (double)r.messages / r.elapsed;
		printf("ok: %.0f msg/s %.4f Gbit/s %llu messages\n", rate, rate * p->size * 8 / 1e9, (unsigned long long)r.messages);
		exit(0);
	}
	close(fd[1]);
	char buf[4096], line[512] = "";
	size_t have = 0;
	ssize_t n;
	while ((n = read(fd[0], buf + have, sizeof(buf) - 1 - have)) > 0)
		have = have + (size_t)n < sizeof(buf) - 1 ? have + (size_t)n : 0;   /* a full buffer: start again (the last line counts) */
	close(fd[0]);
	buf[have] = 0;
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n"))
		snprintf(line, sizeof(line), "%s", l);
	int st = 0;
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
		printf("bench %u failed: hang: no end within %d s\n", k, (int)RP_POINT_TIMEOUT_S);
	else if (WIFSIGNALED(st))
		printf("bench %u failed: crash: signal %d\n", k, WTERMSIG(st));
	else if (WEXITSTATUS(st) == 0)
		printf("bench %u %s\n", k, line);
	else
		printf("bench %u failed: %s\n", k, line[0] ? line : "no output");
}

static int run_kind_bench(void)
{
	static const struct params bench[] = { RP_BENCH };
	for (uint32_t k = 0; k < sizeof(bench) / sizeof(bench[0]); k++)
		bench_one(k, &bench[k]);
	return 0;
}

int main(void)
{
	static const struct params point = RP_POINT, reference = RP_REFERENCE;
	struct run pt, ref;
	memset(&pt, 0, sizeof(pt));
	memset(&ref, 0, sizeof(ref));
	pt.p = &point;
	ref.p = &reference;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (RP_KIND == K_BENCH)
		return run_kind_bench();
	if (RP_KIND == K_PERFORMANCE)
		return run_kind_performance(&pt, &ref, RP_SECONDS);
	return run_kind_correctness(&point, RP_SECONDS);
}
