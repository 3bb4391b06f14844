/* The shapes a flow takes, as rows of hooks (like rdma-core's provider ops): each flow
 * gets its row once, before graph_plan places its stages (flow_shape_of), and the
 * builder and its stage kinds call the row's hooks or read its variants where their
 * phases differ by shape; the report's hooks (lib/control/shape_report.h) are a row of
 * the same shape. Told apart in this order: several rdma_tx stages (lanes), an echo
 * (a ping-pong, here or across two hosts), a two-host flow's server, its client, else
 * both ends here. */
#pragma once

#include <string>
#include <vector>

struct ibv_qp;

namespace rp {

struct Graph;
struct GraphFlow;
struct GraphLcore;
struct PipelineConf;

enum class FlowShape {
	lanes,      // several rdma_tx stages of one loopback flow of one-sided verbs
	pingpong,   // an echo stage (here, or the server's on another host)
	server,     // a two-host flow's receiving end
	client,     // a two-host flow's sending end
	loopback,   // both ends here
};

/* What a flow's rdma_tx stage is, chosen by the row (rdma_tx.cpp has a variant for
 * each). */
enum class FlowSender {
	requester,   // its flow's one requester
	pinger,      // a ping-pong's pinging side
	lane,        // one lane of several
};

struct FlowShapeOps {
	FlowShape shape;
	const char *name;
	FlowSender sender = FlowSender::requester;
	/* graph_plan, before its stages are placed: the shape's own settings and refusals
	 * (a ping-pong's round trips), and once they are placed (the lanes' shares). */
	int (*plan)(const PipelineConf &c, GraphFlow *f, std::string *err) = nullptr;
	int (*placed)(const PipelineConf &c, GraphFlow *f, std::string *err) = nullptr;
	/* graph_plan: why a flow window (a window shared by the flow's QPs) does not apply,
	 * and why a planted slowdown does not (nullptr: they do). */
	const char *no_flow_window = nullptr;
	const char *no_rate = nullptr;
	/* graph_plan: whether its flow window, left out, stays 0 where other flows get one
	 * (nullptr: never). */
	bool (*no_default_flow_window)(const GraphFlow &f) = nullptr;
	/* graph_plan, once the flows' messages are known: what the shape refuses. */
	int (*check)(const PipelineConf &c, GraphFlow &f, std::string *err) = nullptr;
	/* graph_io: the QPs with receive queues of their own (recv_queue = "qp") that
	 * lcore l fills for f (nullptr: none). */
	std::vector<ibv_qp *> (*rq_qps)(const GraphFlow &f, const GraphLcore *l) = nullptr;
	/* graph_build (flow_setup): its objects and roles on its lcores' io contexts. */
	int (*setup)(Graph *g, GraphFlow &f, std::string *err) = nullptr;
	/* Once its receive queues are filled: its roles take the lcore's ops, idler and
	 * refill (nullptr: its roles are its own, a ping-pong's or the lanes'). */
	void (*ready)(GraphFlow &f) = nullptr;
	/* Software reliability's ends (UC made reliable), the control QPs addressed
	 * (nullptr: none here, or set up with its roles). */
	int (*reliability)(Graph *g, GraphFlow &f, std::string *err) = nullptr;
	/* Its lcore's control QP made before any flow connects (two hosts: a server
	 * accepting on a thread beside a client connecting on the same lcore). */
	bool ctrl_first = false;
	/* After connecting: what the watch thread watches of it (two hosts). */
	void (*watch)(Graph *g, GraphFlow &f) = nullptr;
	/* Once the SRQs are filled: where its roles' receive buffers go back to. */
	void (*receive_pools)(GraphFlow &f) = nullptr;
	/* graph_size, after the lcores are fitted: its own fitting (the lanes' shares of
	 * lane 0's lcore's limits), said in *said. */
	int (*fit)(Graph *g, GraphFlow *f, std::string *said, std::string *err) = nullptr;
};

/* The row of f's shape (flow_shape.cpp): the one place that tells shapes apart, from
 * its rdma_tx stages (senders) and whether it is echoed (an echo stage here, or its
 * server's on another host). */
const FlowShapeOps *flow_shape_of(const GraphFlow &f, unsigned senders, bool echoed);

} // namespace rp
