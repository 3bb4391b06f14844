/* The report's rows of the flow shapes, in FlowShape's order (pipeline/flow_shape.h). */
#include "control/shape_report.h"

#include <iterator>

namespace rp {

namespace {

const Histogram *none(const GraphFlow &)
{
	return nullptr;
}

constexpr ShapeReport kLanes = {
	.shape = FlowShape::lanes,
	.tally = tally_lanes, .merge = merge_lanes, .wrs = wrs_ends,
	/* A lane's read result, else the far end's check. */
	.first_bad = [](Report &out, const GraphFlow &f, const std::string &who) {
		return first_bad_lanes(out, f, who) || first_bad_ends(out, f, who);
	},
	.ends = lanes_ends, .detail = detail_lanes, .failures = failures_ends, .reliability = print_ends_reliability,
	.completion_latency = none, .half_rtt = none,
	.view = view_lanes, .sampled = sampled_lanes, .results = results_lanes,
};
constexpr ShapeReport kPingPong = {
	.shape = FlowShape::pingpong, .pingpong = true,
	.tally = tally_pingpong, .merge = merge_pingpong, .wrs = wrs_pingpong,
	.first_bad = first_bad_pingpong, .ends = ends_of, .detail = detail_pingpong, .failures = failures_pingpong,
	.reliability = print_pingpong_reliability, .completion_latency = none, .half_rtt = pingpong_half_rtt,
	.view = view_pingpong, .sampled = sampled_pingpong, .results = results_pingpong,
};
/* A two-host end, and both ends here: a requester and a responder, those here. */
constexpr ShapeReport ends_row(FlowShape shape, FlowTally (*tally)(const GraphFlow &, const Graph &))
{
	return {
		.shape = shape,
		.tally = tally, .merge = merge_ends, .wrs = wrs_ends,
		.first_bad = first_bad_ends, .ends = ends_of, .detail = detail_ends, .failures = failures_ends,
		.reliability = print_ends_reliability, .completion_latency = ends_latency, .half_rtt = none,
		.view = view_ends, .sampled = sampled_ends, .results = results_ends,
	};
}
constexpr ShapeReport kServer = ends_row(FlowShape::server, tally_remote);
constexpr ShapeReport kClient = ends_row(FlowShape::client, tally_remote);
constexpr ShapeReport kLoopback = ends_row(FlowShape::loopback, tally_loopback);

constexpr const ShapeReport *kRows[] = {&kLanes, &kPingPong, &kServer, &kClient, &kLoopback};
/* Every shape has its row, at its index, with every hook. */
constexpr bool rows_whole()
{
	for (size_t i = 0; i < std::size(kRows); i++) {
		const ShapeReport &r = *kRows[i];
		if (static_cast<size_t>(r.shape) != i || !r.tally || !r.merge || !r.wrs || !r.first_bad || !r.ends || !r.detail ||
		    !r.failures || !r.reliability || !r.completion_latency || !r.half_rtt || !r.view || !r.sampled || !r.results)
			return false;
	}
	return std::size(kRows) == static_cast<size_t>(FlowShape::loopback) + 1;
}
static_assert(rows_whole(), "a row for every shape, in FlowShape's order, with every hook");

} // namespace

const ShapeReport &shape_report(const GraphFlow &f)
{
	return *kRows[static_cast<size_t>(f.form->shape)];
}

} // namespace rp
