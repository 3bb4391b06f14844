/* One end of a two-host flow: a flow with peer = "HOST:PORT" (this host dials) or
 * listen = "[ADDR:]PORT" (this host listens), and either way the sending end (its
 * rdma_tx stage posts: the requester) or the receiving end (its rdma_rx or echo stage:
 * the responder, called the server below, as it is whenever it listens). The builder
 * (graph.cpp) makes this end on the lcore's io context like a loopback flow's, and
 * connects its QPs over rdma_cm; each end says in each connection's private data what
 * its role has to say (its verb, size, window and QP's message count, both; the
 * sender where its credit word is, the receiver where its window and final-count word
 * are), the dialing end in its request, the listening one in its reply, and the
 * listening end checks the request against its own flow.
 * While the run goes on, the control plane watches the connections (remote_watch_*):
 * a disconnect ends the server's flow (nothing more will come) and fails the client's,
 * and a server of a one-sided verb, which sees nothing arrive, reads each client's word
 * once a second to learn that its host is still there. Errors come back as -1 with
 * *err; nothing here prints. */
#pragma once

#include "conf/config.h"
#include "conf/options.h"
#include "engine/requester.h"
#include "engine/responder.h"
#include "engine/run_control.h"
#include "pipeline/flow.h"
#include "verbs/cm.h"
#include "verbs/device.h"
#include "verbs/io_context.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace rp {

/* This host's end of a two-host flow, beside the flow's FlowObjects (its buffers, and
 * its rdma_cm connections in pairs.cm_client or pairs.cm_server). */
struct RemoteEnd {
	bool server = false;               // this end receives (a responder, or a ping-pong's echo)
	bool listens = false;              // this end listens (the other dials): the server, unless reversed
	CmAddr addr;                       // the listening end's (ours when listening)
	CmAddr local;                      // dialing: the address (and so the device) to connect from
	/* How long connecting waits for the other end (run.connect_timeout), and the
	 * setting's name as this run was given it, for the message when that runs out. */
	int connect_timeout_ms = static_cast<int>(kDefaultConnectTimeoutS * 1000);
	std::string connect_setting = "run.connect_timeout";
	std::vector<uint64_t> targets;     // per QP, the messages the client sends (0 each: a duration)
	/* A duration run has no count to announce: the client writes each QP's final count
	 * into a word of the server's (named in the server's reply) before it disconnects.
	 * So does the client of a one-sided verb, whose server sees nothing arrive: the
	 * count written is its proof that the client ended rather than died. */
	bool duration = false;
	bool final_counts = false;         // duration, or a one-sided verb
	RegisteredBuf counts;              // those words: the server's (UINT64_MAX: not told), the client's source
	std::vector<RemoteTarget> count_words;   // client: where the server takes them
	uint64_t counts_written = 0;       // client: final counts the server acknowledged
	bool counts_posted = false;        // client: its requester is done, the watch's early copy of its counts out
	uint32_t counts_early = 0;         // ... on that many QPs (a server that ended on them and went: written)
	/* Server of a one-sided verb: the keep-alive reads, on a CQ of their own that only
	 * the control plane polls (no lcore's completions are ever there). */
	ibv_cq *probe_cq = nullptr;
	std::vector<RemoteTarget> words;   // each QP's client word
	uint64_t *scratch = nullptr;       // registered, a word per QP
	uint32_t scratch_lkey = 0;
	std::vector<unsigned> posted_at;   // watch period a QP's read went out (0: none out)
	uint64_t probes_posted = 0, probes_answered = 0;
	/* The watch's (control thread: wo while it runs; main reads after remote_watch_finish). */
	unsigned down = 0;                 // connections down
	std::string why;                   // the first one down, or the keep-alive's verdict
	std::atomic<bool> role_done{false};   // main: wo once the flow's stage finished
	/* UC flows: each end names its control QP to the other (0: none), the client's for
	 * ACKs, the server's for restart requests; each keeps per QP the peer's UC and
	 * control QP numbers, and its GID, to address them (reliability_setup). */
	uint32_t ctrl_qpn = 0;
	std::vector<uint32_t> peer_uc_qpn, peer_ctrl_qpn;
	ibv_gid peer_gid{};
	~RemoteEnd();
};

/* The end's addresses, from flow fc, and how long it waits to connect, from c's run.
 * Returns 0 or -1 with *err naming the key. */
int remote_end_init(const PipelineConf &c, const FlowConf &fc, RemoteEnd *e, std::string *err);

/* The device rdma_cm puts flow fc's connections on (the client: the one its local
 * address, or the route to the server, is on, resolved within c's connect timeout;
 * the server: its listen address's). Returns 0 or -1 with *err (a server on any
 * address names no device). */
int remote_device_name(const PipelineConf &c, const FlowConf &fc, std::string *name, std::string *err);

/* Server: binds and listens (never blocks) with room for qps requests, checking the
 * address is on dev. */
int remote_listen(RemoteEnd *e, uint32_t qps, const Device &dev, FlowObjects *f, std::string *err);

/* The sending end: makes the requester's buffers, connects o.qps QPs on io (dialing:
 * asking again while no server listens; listening: accepting them, each checked
 * against o; all within e->connect_timeout_ms), announcing the counts and whether its
 * payloads are made upstream, each with its key, and sets up q on them with the
 * receiving end's windows. */
int remote_client_setup(const FlowParams &o, const char *tag, Device &dev, const VerbsOps *ops, bool use_wr,
			SharedIOContext &io, bool made_upstream, RunControl *ctl, RemoteEnd *e, FlowObjects *f, Requester *q,
			std::string *err);

/* The receiving end: makes the responder's buffers, connects o.qps QPs (listening:
 * accepting them, each checked against o; dialing: asking again while the sending end
 * does not listen; all within e->connect_timeout_ms) and sets up v on them; ctl gets
 * the announced counts. hand_on: its rdma_rx stage hands messages to stages that check
 * each alone (the sender is asked for payloads that carry their key). The receive pool
 * and SRQ are the lcore's (f->srq_by_lcore). */
int remote_server_setup(const FlowParams &o, const char *tag, Device &dev, const VerbsOps *ops, SharedIOContext &io,
			bool hand_on, RunControl *ctl, RemoteEnd *e, FlowObjects *f, Responder *v, std::string *err);

/* Server: the messages its client sends over qps QPs: the counts it announced, or in a
 * duration run the final counts it told (*told: on how many QPs it did). */
uint64_t remote_sent(const RemoteEnd &e, uint32_t qps, unsigned *told);

/* The handshake alone, for roles that bind the QPs themselves (ping-pong), and under
 * the roles above. Each end's word for QP qi is the counts and shape both must agree
 * on, completed by its role (say: its fields, and its QP's access and CQs in spec);
 * take reads the other end's word, or refuses it (-1 with *why). Dialing: connects
 * o.qps QPs made from qo on io; the replies in f->pairs.cm_client. Listening: accepts
 * o.qps connections, each checked against o (the fields the other end's role states),
 * answering each request with this end's word. The QPs in the end's side of f->pairs
 * (a: sending, b: receiving), in QP index order. */
struct RemoteWords {
	std::function<void(uint32_t qi, CmPrivate *mine, CmQpSpec *spec)> say;
	std::function<int(const CmPrivate &peer, std::string *why)> take;
};
int remote_join(const FlowParams &o, Device &dev, SharedIOContext &io, const QpOptions &qo, RemoteEnd *e, FlowObjects *f,
		const RemoteWords &w, std::string *err);

/* The control plane's watch over every remote end of a run, on a control thread. */
struct RemoteWatchEnd {
	RemoteEnd *end;
	CmConnSet *cm;
	RunControl *ctl;                  // the flow's
	const Requester *q = nullptr;     // a client's: its final counts
	ibv_cq *send_cq = nullptr;        // ... and where their writes complete (its lcore's, done by then)
};
struct RemoteWatch {
	std::vector<RemoteWatchEnd> ends;
	std::atomic<bool> stop{false};
	pthread_t thread{};
	bool running = false;
};
int remote_watch_start(RemoteWatch *w, std::string *err);
/* After the lcores are done: a client of a duration run writes its final counts to the
 * server, the clients' connections close (the servers see them go),
 * then each server waits (up to stall_s) for its client to disconnect, since the
 * client's last completions need our QPs; the thread stops. */
void remote_watch_finish(RemoteWatch *w, double stall_s);

} // namespace rp
