/* The flow shapes' rows: each shape's hooks, written in the files of the builder's
 * phases they belong to (graph_plan, graph_io, graph_flows), gathered here, and the one
 * function that tells a flow's shape. */
#include "pipeline/graph_internal.h"

namespace rp {

namespace {

const FlowShapeOps kLanes = {
	.shape = FlowShape::lanes, .name = "lanes", .sender = FlowSender::lane,
	.placed = plan_lanes,
	.setup = lanes_shape_setup, .fit = fit_lanes,
};
const FlowShapeOps kPingPong = {
	.shape = FlowShape::pingpong, .name = "ping-pong", .sender = FlowSender::pinger,
	.plan = plan_pingpong,
	.no_flow_window = "a ping-pong keeps one message in flight per QP",
	.no_rate = "a ping-pong has no rate to cap",
	.check = check_pingpong, .rq_qps = pingpong_rq_qps,
	.setup = pingpong_shape_setup, .watch = watch_pingpong, .receive_pools = pingpong_pools,
};
const FlowShapeOps kServer = {
	.shape = FlowShape::server, .name = "two-host server",
	.rq_qps = responder_rq_qps,
	.setup = server_setup, .ready = roles_ready, .reliability = server_reliability, .ctrl_first = true,
	.watch = watch_server, .receive_pools = responder_pool,
};
const FlowShapeOps kClient = {
	.shape = FlowShape::client, .name = "two-host client",
	.no_default_flow_window = client_rq_per_qp,
	.setup = client_setup, .ready = roles_ready, .reliability = client_reliability, .ctrl_first = true,
	.watch = watch_client,
};
const FlowShapeOps kLoopback = {
	.shape = FlowShape::loopback, .name = "loopback",
	.rq_qps = responder_rq_qps,
	.setup = loopback_setup, .ready = roles_ready, .reliability = loopback_reliability,
	.receive_pools = responder_pool,
};

} // namespace

const FlowShapeOps *flow_shape_of(const GraphFlow &f, unsigned senders, bool echoed)
{
	if (senders > 1)
		return &kLanes;
	if (echoed)
		return &kPingPong;
	if (f.serves())
		return &kServer;
	return f.remote ? &kClient : &kLoopback;
}

} // namespace rp
