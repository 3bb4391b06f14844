/* Setting up a flow's objects (not the fast path): the sizes a verb implies, buffer
 * pools registered as MRs, QP pairs connected through rdma_cm or directly, and the
 * two roles on them (or, for a two-host flow, the half of them on this host:
 * remote_flow.h). Used by the pipeline builder. Errors come back as -1 with *err naming the
 * object and the cause; nothing here prints or exits. */
#pragma once

#include "pipeline/flow_params.h"
#include "engine/requester.h"
#include "engine/responder.h"
#include "verbs/device.h"
#include "verbs/cm.h"
#include "verbs/io_context.h"
#include "verbs/memory.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>
#include <vector>

struct rte_mempool;

namespace rp {

/* The sizes and access rights a verb implies, computed once from the options. */
struct RoleShape {
	bool two_sided = false;      // the responder sees a completion per message
	int local_access = 0;        // the requester's buffers: written by the NIC for reads, atomics
	int mem_access = 0;          // the responder's memory, least rights the verb needs
	uint64_t mem_per_qp = 0;     // responder memory per QP (0: none)
	uint32_t srq_depth = 0;
	uint64_t req_send_cq = 0;    // every WR of every QP: a failed QP flushes them all
	unsigned tx_pool_n = 0;
	unsigned rx_pool_n = 0;      // 0: no receive buffers (write_imm has zero-SGE receives)
};
RoleShape role_shape(const FlowParams &o);

/* Messages a flow may have in flight unconsumed at its receiver: every QP's window, or
 * the flow's window where its QPs share one (FlowParams::flow_window). */
inline uint64_t flow_inflight(const FlowParams &o)
{
	const uint64_t per_qp = static_cast<uint64_t>(o.slots) * o.qps;
	return o.flow_window && o.flow_window < per_qp ? o.flow_window : per_qp;
}

/* Under a flow window, whether each QP still needs credit of its own: only where its
 * window is smaller than the flow's (write_imm's slots, which the sender must not
 * overwrite before the receiver checked them). */
inline bool qp_credit(const FlowParams &o)
{
	return o.flow_window == 0 || o.slots < o.flow_window;
}

/* A registered pool of n buffers; *err names it and what to do when memory runs out.
 * The first takes the buffer size, burst and cache from a flow's options. */
rte_mempool *make_registered_pool(const char *name, const char *what, unsigned n, const FlowParams &o,
				  const Device &dev, int access, MrTable *mrs, std::string *err);
rte_mempool *make_registered_pool(const char *name, const char *what, unsigned n, uint32_t elt_bytes, uint32_t burst,
				  uint32_t cache, const Device &dev, int access, MrTable *mrs, std::string *err);

/* Software reliability: the largest retransmission timeout, after backing off (s). */
inline constexpr double kRtoMaxS = 200e-3;
/* A UC QP stopped after a broken message waits this long before its reset: time for
 * rxe to finish a packet it had taken before the stop (ResponderParams). Measured on
 * rxe (8 KiB send_imm, 1% loss): 2 ms cost 1.7x the run time of 200 us, which costs
 * little more than none. */
inline constexpr double kRestartSettleS = 200e-6;
/* A flow credit write not landed after this long goes again through the next QP
 * (ResponderParams::credit_retry_tsc): far above a live path's, rxe's retransmissions
 * included, so that a late write seldom lands after the one that replaced it. */
inline constexpr double kCreditRetryS = 0.2;

RequesterParams requester_params(const FlowParams &o, bool use_wr, uint64_t tsc_hz);
ResponderParams responder_params(const FlowParams &o, uint64_t tsc_hz);

/* The SRQ filled with every receive, and armed with a limit of one chain (an async event
 * says the responder is close to RNR). Returns 0 or -1 with *err. */
int responder_fill_srq(Responder *v, const FlowParams &o, const RoleShape &r, rte_mempool *rx_pool,
		       const MrTable *rx_mrs, const Device &dev, std::string *err);

/* n QP pairs, end a on device dev_a and io context io_a, end b on dev_b and io_b (one
 * device, or two: rxeA -> rxeB across a wire), connected as o.connect says: through
 * rdma_cm (a server on dev_b's IPv4 address accepts the b ends while a client on
 * dev_a's connects the a ends, in this process: the handshake two hosts make) or
 * directly (each QP given the other's number and GID). The destructor
 * destroys them, through rdma_cm when it made them, and must run before the io
 * contexts are destroyed. */
struct QpPairs {
	std::vector<ibv_qp *> a, b;
	std::unique_ptr<CmServer> cm_server;   // rdma_cm: b's ends
	std::unique_ptr<CmClient> cm_client;   // ... and a's
	/* A two-host UC flow's data QPs, made here beside rdma_cm's RC ones (in a or b). */
	std::vector<ibv_qp *> uc;
	std::string connected;                 // how, for the summary
	void destroy();                        // idempotent
	~QpPairs() { destroy(); }
};

/* Returns 0, or -1 with *err naming what failed. */
/* A QP of flow o: its send depth, inline bytes, send API and receive depth here, the
 * rest (retries, RNR timer, transport, traffic parameters) the flow's. */
QpOptions flow_qp_options(const FlowParams &o, uint32_t sq_depth, uint32_t max_inline, bool use_wr, uint32_t rq_depth = 1);

int qp_pairs_connect(const FlowParams &o, uint32_t n, Device &dev_a, Device &dev_b, SharedIOContext &io_a,
		     SharedIOContext &io_b, const QpOptions &qo_a, const QpOptions &qo_b, int access_a, int access_b,
		     QpPairs *p, std::string *err);

/* One flow's objects: its QP pairs (a: the requester's, b: the responder's; a
 * two-host flow's end holds only its own side), the buffer pools, the responder's
 * memory and the credit words. The destructor tears
 * them down (QPs first); the io contexts and the device are the caller's and outlive
 * it. */
struct FlowObjects {
	RoleShape shape;
	QpPairs pairs;
	rte_mempool *tx_pool = nullptr, *rx_pool = nullptr;
	MrTable tx_mrs, rx_mrs;
	RegisteredBuf memory, credit_words, credit_src;
	/* A ping-pong of writes: the slots each end here polls, a QP's each
	 * (ping_slot_stride apart), that the other end writes into. */
	RegisteredBuf ping_slots, echo_slots;
	/* The responder's lcore owns the SRQ's receives and their pool (shared by the flows
	 * received there): no receive pool here, the SRQ is not filled here. */
	bool srq_by_lcore = false;
	/* A ring feeds the requester buffers of another pool (requester_set_input): no
	 * send pool of its own. */
	bool fed = false;
	/* Where the requester's QPs write or read, given: the far end's memory is another
	 * object's (a lane's QPs into its flow's; then shape.mem_per_qp is 0 here). */
	std::vector<RemoteTarget> far;
	~FlowObjects();
};

/* A write ping-pong's slots: a cache line apart at least, so that no QP's share one. */
inline uint32_t ping_slot_stride(uint32_t msg_bytes)
{
	return (msg_bytes + 63u) & ~63u;
}

/* Credit word k of flow f's requester: QP k's, or with a flow window (k = qps) the
 * flow's, which follows its QPs' (cm.h: kCmFlowWindow). */
inline uint64_t *credit_word_at(const FlowObjects &f, uint32_t k)
{
	return static_cast<uint64_t *>(f.credit_words.addr) + k;
}

/* Creates flow f of options o (its shape already in f->shape) between req_io (on
 * req_dev) and rsp_io (on rsp_dev: the same device or another), each object on the
 * device of the end that uses it, its QP pairs connected as o.connect says, and sets
 * up both roles on it: q
 * posts o's messages, v receives and checks them; both report to ctl. `tag` keeps
 * object names unique ("" for a single flow). Returns 0, or -1 with *err. */
int loopback_flow_setup(const FlowParams &o, const char *tag, Device &req_dev, Device &rsp_dev, const VerbsOps *ops,
			bool use_wr, SharedIOContext &req_io, SharedIOContext &rsp_io, RunControl *ctl, FlowObjects *f,
			Requester *q, Responder *v, std::string *err);

/* The halves of a flow, for a flow with one end here and the other on another host
 * (lib/pipeline/remote_flow) as for one with both here. Buffers: the requester's send
 * pool (unless fed) and credit words; the responder's receive pool (unless its lcore's
 * SRQ has one), memory and credit sources. `remote`: the far end is another host, and
 * the credit words double as keep-alive words it reads. Returns 0 or -1 with *err. */
int requester_buffers(const FlowParams &o, const std::string &tag, Device &dev, bool remote, FlowObjects *f,
		      std::string *err);
int responder_buffers(const FlowParams &o, const std::string &tag, Device &dev, bool remote, FlowObjects *f,
		      std::string *err);

/* Where a responder writes one QP's credit. */
struct CreditTarget {
	uint64_t addr = 0;
	uint32_t rkey = 0;
};

/* q set up on QPs f->pairs.a (targets[i]: QP i's window or word at the far end, none
 * for two-sided verbs), v on QPs f->pairs.b (credits[i]: QP i's credit word there).
 * Returns 0 or -1 with *err. */
int requester_bind(const FlowParams &o, const char *tag, const VerbsOps *ops, bool use_wr, SharedIOContext &io,
		   RunControl *ctl, FlowObjects *f, const std::vector<RemoteTarget> &targets, Requester *q, std::string *err);
int responder_bind(const FlowParams &o, const VerbsOps *ops, SharedIOContext &io, RunControl *ctl, FlowObjects *f,
		   const std::vector<CreditTarget> &credits, Responder *v, std::string *err);

/* An rte_mempool of n buffers on this socket, with a per-lcore cache sized for bursts
 * (or of cache_given buffers), none when a cache would strand most of the pool. */
rte_mempool *make_pool(const char *name, unsigned n, uint32_t elt_bytes, uint32_t burst,
		       uint32_t cache_given = UINT32_MAX);

} // namespace rp
