#include "stages/kinds.h"

namespace rp {

constexpr RingCount kNone{0, 0}, kOne{1, 1}, kOptional{0, 1};

constexpr StageKindInfo kStageKinds[kNumStageKinds] = {
	{StageKind::gen, "gen", "a", kNone, kOne, true, false, FlowEnd::none, BufferSource::flow_pool, false, false,
	 "makes a flow's messages (sequence and pattern) in its send pool, at its rate"},
	{StageKind::rdma_tx, "rdma_tx", "a", kOptional, kOptional, true, true, FlowEnd::requester, BufferSource::upstream, false, false,
	 "posts a flow's messages as chained WRs (its own, or its input ring's) and reaps their completions"},
	{StageKind::rdma_rx, "rdma_rx", "a", kNone, kOptional, true, true, FlowEnd::responder, BufferSource::lcore_pool, false, false,
	 "receives a flow: polls the shared receive CQ, refills the SRQ, returns credit, hands received buffers on"},
	{StageKind::echo, "echo", "an", kNone, kNone, true, true, FlowEnd::echo, BufferSource::upstream, false, false,
	 "sends back each message of a flow as it arrives (a ping-pong's far end)"},
	{StageKind::verify, "verify", "a", kOne, kOptional, false, false, FlowEnd::none, BufferSource::upstream, true, false,
	 "checks each message's pattern and sequence, then passes it on or frees it"},
	{StageKind::sink, "sink", "a", kOne, kNone, false, false, FlowEnd::none, BufferSource::upstream, false, false,
	 "counts and frees"},
	{StageKind::forward, "forward", "a", kOne, kOne, false, false, FlowEnd::none, BufferSource::upstream, false, false,
	 "passes messages from its input ring to its output ring"},
	{StageKind::capture, "capture", "a", kOne, kOptional, false, false, FlowEnd::none, BufferSource::upstream, false, true,
	 "writes each message as a RoCE v2 packet of a pcap file (tshark, Wireshark read it), then passes it on or frees it"},
};

constexpr bool rows_in_order()
{
	for (size_t i = 0; i < kNumStageKinds; i++)
		if (static_cast<size_t>(kStageKinds[i].kind) != i || kStageKinds[i].name == nullptr)
			return false;
	return true;
}
static_assert(rows_in_order(), "kStageKinds: one row per kind, in the enum's order");

bool stage_kind_from_name(const std::string &name, StageKind *k)
{
	for (const StageKindInfo &i : kStageKinds)
		if (name == i.name) {
			*k = i.kind;
			return true;
		}
	return false;
}

StageKind stage_kind_of_end(FlowEnd end)
{
	for (const StageKindInfo &i : kStageKinds)
		if (i.end == end)
			return i.kind;
	return StageKind::count_;
}

std::string ring_count_text(RingCount c, bool input)
{
	if (c.max == 0)
		return input ? "no input" : "no output";
	const std::string ring = input ? " input ring" : " output ring";
	return (c.min == 0 ? "at most one" : "exactly one") + ring;
}

} // namespace rp
