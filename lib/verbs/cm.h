/* Connection management for two-process runs: a server and a client on two hosts
 * connect N RC QPs with librdmacm (rdma_cm) and exchange, in the handshake, where each
 * side's memory is. Setup and control path only: nothing here runs per message.
 *
 * The QPs are made by rdma_create_qp on the caller's PD and the caller's shared CQs and
 * SRQ (an lcore's SharedIOContext). rdma_create_qp insists that the PD belongs to the
 * cm_id's verbs context, which librdmacm opened itself, so the caller's device must be
 * opened on that context (cm_device_open), not with ibv_open_device (device_open):
 *   client: resolve() -> cm_device_open(verbs()) -> CQs, SRQ, MRs -> connect()
 *   server: listen()  -> cm_device_open(verbs()) -> CQs, SRQ, MRs -> accept()
 * A PD, CQ or SRQ from another context is refused with an error naming both devices.
 *
 * Every wait is bounded: rdma_cm events are read from a non-blocking channel with
 * poll() against a deadline, never by a blocking rdma_get_cm_event. Errors are
 * returned as -errno with *err naming the connection and the cause, e.g.
 *   rdma_cm: connect to 10.2.0.9:18515: no route (RDMA_CM_EVENT_ADDR_ERROR: ...)
 * and every error path tears down what was made (ids, QPs, channel); the owner objects
 * (CmClient, CmServer) do the same when they go out of scope. */
#pragma once

#include "verbs/io_context.h"

#include <infiniband/verbs.h>
#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

struct rdma_cm_id;
struct rdma_event_channel;

namespace rp {

struct Device;

/* ---- The handshake's private data -------------------------------------------------
 * A fixed layout, big-endian on the wire whatever the hosts are, written and read
 * field by field (never a struct memcpy). The first 8 bytes are a header: magic,
 * version, kind and the message's own length: rdma_cm hands the receiver the whole
 * private-data area of the CM message (zero-padded to 56 or 196 bytes on IB/RoCE),
 * so only the length field says how much the sender wrote. */
inline constexpr uint32_t kCmMagic = 0x5250434d;   // "RPCM"
inline constexpr uint8_t kCmVersion = 7;   // 2: UC and control QP numbers; 3: chunk bytes; 4: kCmReliable;
                                           // 5: one-sided verbs' final counts; 6: kCmFlowWindow;
                                           // 7: the payload pattern's words (engine/pattern.h)
inline constexpr size_t kCmParamsBytes = 56;       // CmPrivate on the wire
inline constexpr size_t kCmRejectBytes = 148;      // header + a reason for the peer: all of an IB REJ
inline constexpr size_t kCmRejectTextBytes = kCmRejectBytes - 8;
/* RoCE/IB: the REQ carries 92 bytes of private data, rdma_cm takes 36 for its own
 * header (56 left); REP 196; REJ 148. */
static_assert(kCmParamsBytes <= 56, "connect private data must fit an IB CM REQ via rdma_cm");
static_assert(kCmRejectBytes <= 148, "reject private data must fit an IB CM REJ");

/* What one side tells the other about one connection, in host order. The memory
 * fields describe the sender's memory the peer may access through this QP. */
struct CmPrivate {
	uint8_t flow = 0;            // flow index (kMaxFlows fits)
	uint16_t qp_index = 0;       // QP index within the flow
	uint64_t addr = 0;           // window base address (0: no window)
	uint32_t rkey = 0;
	uint32_t slots = 0;          // window slots (at most kCmMaxSlots)
	uint32_t chunk = 0;          // reliable write_imm: the client's chunk bytes (0: whole messages), 12 bits
	uint32_t slot_bytes = 0;     // bytes per slot
	uint64_t credit_addr = 0;    // an 8-byte, 8-aligned credit word (0: none)
	uint32_t credit_rkey = 0;
	uint8_t verb = 0;            // the run's verb + 1 (0: not said), so both ends agree
	uint64_t messages = 0;       // this QP's messages (0: not said), at most kCmMaxMessages
	uint8_t flags = 0;           // kCmSelfDescribing, kCmReliable, kCmFlowWindow, kCmReceiver
	/* A UC flow: rdma_cm connects an RC QP, the service connection, and each end names
	 * beside it the UC QP the data goes over (0: an RC flow, the data goes over the
	 * connection's own QP), and the control QP its ACKs go to (0: none). */
	uint32_t uc_qpn = 0;         // 24 bits
	uint32_t ctrl_qpn = 0;       // 24 bits
	/* A client's request with kCmFlowWindow: its QPs share a window of this many
	 * messages, whose credit the server writes into the flow's word (same rkey as the
	 * credit word). On the wire they take the window's rkey and address fields, which a
	 * request does not use. */
	uint32_t flow_window = 0;
	uint64_t flow_credit_addr = 0;
};
inline constexpr uint64_t kCmMaxMessages = (1ull << 40) - 1;
inline constexpr uint32_t kCmMaxSlots = (1u << 20) - 1;   // the slots word's low 20 bits; chunk the high 12
inline constexpr uint32_t kCmQpnMask = (1u << 24) - 1;
/* The client's payloads were made upstream (a gen stage): each carries its own key, so
 * the server checks them as such rather than against the QP's sequence. */
inline constexpr uint8_t kCmSelfDescribing = 1;
/* The end runs UC with software reliability (a ping-pong one names no control QP: its
 * echoes are its acknowledgements). */
inline constexpr uint8_t kCmReliable = 2;
/* A request's QPs share a flow window (CmPrivate::flow_window, flow_credit_addr). */
inline constexpr uint8_t kCmFlowWindow = 4;
/* The word is a receiving end's (else a sending end's): whichever end dials, the two
 * must be one of each. */
inline constexpr uint8_t kCmReceiver = 8;

/* Writes exactly kCmParamsBytes. */
void cm_private_encode(const CmPrivate &p, uint8_t out[kCmParamsBytes]);
/* Validates and reads `len` bytes from the wire: magic, version, kind, length, the
 * reserved word, and that the memory fields are consistent (window size does not
 * overflow, credit word aligned). Returns 0 or -EPROTO with *why saying what is wrong. */
int cm_private_decode(const void *data, size_t len, CmPrivate *p, std::string *why);
/* A reject that tells the peer why (printable ASCII, cut to kCmRejectTextBytes). */
void cm_reject_encode(const std::string &reason, uint8_t out[kCmRejectBytes]);
/* The reason in a reject's private data; false when it is not ours (no magic). The
 * text is sanitised: it comes from the wire. */
bool cm_reject_decode(const void *data, size_t len, std::string *reason);

/* ---- Addresses ---------------------------------------------------------------------- */
struct CmAddr {
	sockaddr_in sin{};
	std::string str;             // "10.2.0.2:18515", for messages
};

/* IPv4 dotted quad ("" or "0.0.0.0": any) and a decimal port ("0": any). */
int cm_addr_parse(const std::string &ip, const std::string &port, CmAddr *a, std::string *err);

/* ---- The caller's device, on librdmacm's context --------------------------------------- */

/* Fills *dev from a context librdmacm opened (verbs() of a resolved client or a bound
 * server, or cm_device_context): attributes, port state (must be ACTIVE), GID (chosen
 * like device_open: RoCE v2 IPv4 first) and a new PD. librdmacm owns the context:
 * release with cm_device_close or device_close, which both leave the context alone. */
int cm_device_open(Device *dev, ibv_context *verbs, uint8_t port, std::string *err, int gid_index = -1);
void cm_device_close(Device *dev);
/* librdmacm's context for device `name` ("": the first), e.g. for a server listening
 * on 0.0.0.0 or a loopback run that connects through rdma_cm. */
/* Every rdma_cm wait in progress or to come ends within 100 ms with -EINTR and says
 * it was interrupted (async-signal-safe: SIGINT/SIGTERM during connection setup). */
void cm_cancel_waits();

int cm_device_context(const std::string &name, ibv_context **verbs, std::string *err);

/* ---- One connection's QP, from the caller --------------------------------------------- */
struct CmQpSpec {
	ibv_pd *pd = nullptr;
	ibv_cq *send_cq = nullptr;   // shared by the lcore's QPs
	ibv_cq *recv_cq = nullptr;
	ibv_srq *srq = nullptr;      // nullptr: the QP gets its own receive queue of rq_depth
	uint32_t rq_depth = 1;
	QpOptions qp;                // send depth, max inline, qp_ex, retries, RNR timer, traffic
	int access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	uint8_t ack_timeout = 14;    // 4.096 us * 2^14 = 67 ms, as in io_context; 0: rdma_cm's
};

/* A spec for a QP on an lcore's SharedIOContext. */
inline CmQpSpec cm_qp_spec(ibv_pd *pd, const SharedIOContext &io, const QpOptions &o)
{
	CmQpSpec s;
	s.pd = pd;
	s.send_cq = io.send_cq;
	s.recv_cq = io.recv_cq;
	s.srq = io.srq;
	s.rq_depth = o.rq_depth;
	s.qp = o;
	return s;
}

/* ---- Connections ------------------------------------------------------------------------ */
enum class CmState : uint8_t {
	kIdle,
	kResolving,      // client: address or route being resolved
	kRouted,         // client: ready for connect()
	kConnecting,     // REQ sent (client) or accepted, waiting for RTU (server)
	kEstablished,
	kDown,           // disconnected by the peer, failed or device gone: see cause
};

const char *cm_state_str(CmState s);

struct CmConn {
	rdma_cm_id *id = nullptr;
	CmState state = CmState::kIdle;
	CmPrivate local{};           // what we sent
	CmPrivate peer{};            // what the peer sent, validated
	std::string name;            // "connection 3 (flow 0 QP 3)" [+ " from 10.2.0.1:40123"]
	std::string cause;           // why it is down
	ibv_qp *qp = nullptr;        // ours (not rdma_create_qp's): its states are ours to set
	uint8_t min_rnr_timer = 0;   // set at RTR (rdma_cm's conn_param has none)
	int access = 0;
	Traffic traffic;             // the flow's, on the address vector at RTR
	uint32_t qp_index = 0;
};

/* The connections of one side, their rdma_cm ids and event channel. One thread uses
 * a set (the main lcore at setup, then the control thread); not copyable. close() (or
 * the destructor) disconnects and destroys everything and must run before the caller
 * destroys the CQs, SRQ or PD the QPs use. */
class CmConnSet {
public:
	CmConnSet(const CmConnSet &) = delete;
	CmConnSet &operator=(const CmConnSet &) = delete;

	/* rdma_disconnect the connected ones, destroy QPs, ids, the channel. Idempotent. */
	void close();

	unsigned size() const { return static_cast<unsigned>(conns_.size()); }
	const CmConn &conn(unsigned i) const { return conns_[i]; }
	/* The device every id is on (nullptr before resolve(), or listening on 0.0.0.0). */
	ibv_context *verbs() const { return verbs_; }
	uint8_t port_num() const { return port_num_; }
	/* "rdma_cm: connect to 10.2.0.2:18515" / "rdma_cm: listen on 10.2.0.2:18515" */
	const std::string &what() const { return what_; }
	/* Connections that are down. */
	unsigned down() const;
	/* The GID of connection i's peer, as rdma_cm resolved its path: for QPs made
	 * beside it (a UC QP, a control QP's address handle). 0 or -errno with *err. */
	int peer_gid(unsigned i, ibv_gid *gid, std::string *err) const;

	/* Never blocks (control thread or main lcore, off the data path): reads the pending
	 * CM events and marks the connections the peer disconnected, or that failed, kDown
	 * (their QPs go to the error state, so posted WRs flush). Late connection requests
	 * are rejected. Returns how many went down in this call (*why names the first and
	 * its cause, conn(i).cause has each), or -errno when the channel itself fails. */
	int poll_disconnects(std::string *why);

protected:
	CmConnSet() = default;
	~CmConnSet() { close(); }

	struct Event;
	int open_channel(std::string *err);
	/* 1: an event (copied and acked), 0: the deadline passed, -errno: error. */
	int next_event(int64_t deadline_ns, Event *ev, std::string *err);
	/* The same for a wait that must not pass its deadline: 1, or -errno with *err;
	 * at the deadline -ETIMEDOUT and "timed out after <timeout_ms> " + waiting(). */
	template <typename Waiting>
	int await_event(int64_t deadline_ns, int timeout_ms, Event *ev, Waiting waiting, std::string *err);
	int create_qp(CmConn &c, const CmQpSpec &s, std::string *err);
	/* The QP to INIT, RTR or RTS: rdma_init_qp_attr's attributes and ours. */
	int modify_qp(CmConn &c, ibv_qp_state state, std::string *err);
	/* RTR then RTS, once the peer's reply (client) or request (server) is in. */
	int ready_qp(CmConn &c, std::string *err);
	static void qp_to_error(CmConn &c);
	/* Handles an event for an up connection (disconnect, device removal). True if it was one. */
	bool note_down(const Event &ev, std::string *why);
	CmConn *conn_of(const rdma_cm_id *id);
	std::string conn_what(const CmConn &c) const { return what_ + ", " + c.name; }

	rdma_event_channel *channel_ = nullptr;
	rdma_cm_id *listen_id_ = nullptr;
	std::vector<CmConn> conns_;
	ibv_context *verbs_ = nullptr;
	uint8_t port_num_ = 0;
	std::string what_;
};

class CmClient : public CmConnSet {
public:
	CmClient() = default;

	/* Creates n ids (n >= 1) and resolves each one's address and route from `local`
	 * (its IP picks our device; port 0) to `server`, all within timeout_ms. After it,
	 * verbs() and port_num() say which device to open the PD and CQs on. */
	int resolve(const CmAddr &local, const CmAddr &server, unsigned n, int timeout_ms, std::string *err);
	/* The IP traffic class (DSCP, ECN) rdma_cm resolves the routes with (before
	 * resolve(); RDMA_OPTION_ID_TOS, and the SL it derives from it); -1: its default. */
	void set_tos(int tos) { tos_ = tos; }

	/* Creates connection i's QP from specs[i] and connects it sending locals[i], then
	 * waits until every connection is ESTABLISHED with a valid reply from the server
	 * (then in conn(i).peer), all within timeout_ms. Rejections, unreachable servers,
	 * invalid replies and the deadline fail the whole set (closed on return). */
	int connect(std::span<const CmQpSpec> specs, std::span<const CmPrivate> locals, int timeout_ms,
		    std::string *err);

private:
	/* Steps of resolve() and connect(): 0 or -errno with *err. */
	int start_resolve(unsigned i, const CmAddr &local, int64_t deadline_ns, std::string *err);
	int tos_ = -1;
	int await_routes(int64_t deadline_ns, int timeout_ms, std::string *err);
	int take_device(std::string *err);
	int start_connect(unsigned i, const CmQpSpec &spec, const CmPrivate &local, std::string *err);
	int await_established(int64_t deadline_ns, int timeout_ms, std::string *err);
	int on_connect_event(const Event &ev, CmConn &c, std::string *err);

	CmAddr server_;
};

/* What the server's chooser sees of a connection request; `peer` is validated. */
struct CmRequest {
	const CmPrivate &peer;
	const std::string &name;     // "connection from 10.2.0.1:40123 (flow 0 QP 3)"
	ibv_context *verbs;          // the device it arrived on
	unsigned index;              // its index in the set (arrival order)
};

inline constexpr int kCmAccept = 0;
inline constexpr int kCmReject = 1;
/* kCmAccept with *spec and *reply filled; kCmReject with *why (sent to the peer, the
 * server goes on waiting for others); -errno to abort accept() with *why as the error. */
using CmChooseFn = std::function<int(const CmRequest &req, CmQpSpec *spec, CmPrivate *reply, std::string *why)>;

class CmServer : public CmConnSet {
public:
	CmServer() = default;

	/* Binds `addr` and listens. With a specific IP, verbs() is its device after this. */
	int listen(const CmAddr &addr, int backlog, std::string *err);

	/* Accepts n connections within timeout_ms: each request's private data is
	 * validated (invalid ones and duplicates of a (flow, QP index) are rejected, with
	 * the reason sent back, and counted), `choose` gives its QP and reply, and the
	 * server waits for every connection to be ESTABLISHED. Then it stops listening:
	 * later clients are refused by the CM. On failure the set is closed. */
	int accept(unsigned n, int timeout_ms, const CmChooseFn &choose, std::string *err);

	unsigned rejected() const { return rejected_; }
	/* The port listened on (the one the system chose for port 0). */
	uint16_t bound_port() const { return bound_port_; }

private:
	int reject_request(rdma_cm_id *id, const std::string &who, const std::string &reason);
	/* Drops connection i, not established yet (its client asked again, or went away
	 * mid-handshake): its QP and id destroyed, the later ones renumbered. */
	void drop(size_t i, const std::string &why);
	/* Steps of accept(): 0 to wait on, or -errno with *err to fail it. */
	std::string waiting_for(unsigned n, unsigned established) const;
	int on_request(const Event &ev, unsigned n, const CmChooseFn &choose, std::string *err);
	bool make_room(rdma_cm_id *id, const std::string &who, const CmPrivate &peer, unsigned n);
	int accept_request(rdma_cm_id *id, const std::string &who, const CmPrivate &peer, const CmQpSpec &spec,
			   const CmPrivate &reply, std::string *err);
	int on_conn_event(const Event &ev, unsigned *established, std::string *err);

	CmAddr addr_;
	unsigned rejected_ = 0;
	uint16_t bound_port_ = 0;
	std::string last_reject_;
};

} // namespace rp
