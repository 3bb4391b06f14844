/* The stage kinds, declared: what a pipeline file may name and what each kind takes.
 * One row per kind in kStageKinds (kinds.cpp), which the .conf reader, the command
 * line's pipeline, --help and docs/configuration.md's table read. Plain data, no DPDK
 * or verbs: `rdmapipe --check` runs it without a device. What a kind does in the
 * engine (its burst, plan and wire hooks, its summary) is its file in lib/stages/,
 * found through stage_kind_ops() (stage_kind.h), row for row.
 *
 * Adding a kind: its enum value, its row here, its file, its hooks' row
 * (stage_kind.cpp). */
#pragma once

#include <cstdint>
#include <string>

namespace rp {

enum class StageKind : uint8_t {
	gen,       // makes messages for a flow at a rate, onto its output ring
	rdma_tx,   // posts a flow's messages as chained WRs and reaps send completions
	rdma_rx,   // polls the receive side, replenishes the SRQ, emits received messages
	echo,      // returns what arrives on a flow (ping-pong's far side)
	verify,    // checks payload patterns and sequence
	sink,      // counts and frees
	forward,   // passes messages from its input ring to its output ring
	capture,   // writes each message as a RoCE v2 packet of a pcap file, passes it on
	count_
};
inline constexpr size_t kNumStageKinds = static_cast<size_t>(StageKind::count_);

/* Which end of its flow a stage is, if any. */
enum class FlowEnd : uint8_t {
	none,
	requester,   // posts the flow's messages (its lanes, when several)
	responder,   // receives them
	echo,        // receives them and sends each back (a ping-pong's far end)
};

/* Where the buffers a stage emits come from (and go back to). */
enum class BufferSource : uint8_t {
	upstream,    // its input's
	flow_pool,   // its flow's send pool (gen)
	lcore_pool,  // its lcore's receive pool (rdma_rx)
};

struct RingCount {
	uint8_t min = 0, max = 0;
	bool fits(size_t n) const { return n >= min && n <= max; }
};

struct StageKindInfo {
	StageKind kind;
	const char *name;           // as files spell it
	const char *article;        // "a", "an": for messages
	RingCount in, out;          // input and output rings
	bool needs_flow;            // names a flow (else takes none)
	bool needs_io;              // touches the NIC: its lcore needs an io context
	FlowEnd end;
	BufferSource source;
	bool checks_payload;        // reads every message's pattern (a verify)
	bool writes_file;           // takes `file` (required) and `snaplen`
	const char *what;           // one line for --help, --check and the docs
};

extern const StageKindInfo kStageKinds[kNumStageKinds];

inline const StageKindInfo &stage_kind(StageKind k)
{
	return kStageKinds[static_cast<size_t>(k)];
}
inline const char *stage_kind_name(StageKind k)
{
	return stage_kind(k).name;
}
/* The kind spelled `name`; false when there is none. */
bool stage_kind_from_name(const std::string &name, StageKind *k);
/* The kind that is this end of a flow (rdma_tx for its requester, ...). */
StageKind stage_kind_of_end(FlowEnd end);
/* "no input", "at most one input ring", ...: what a kind takes, for messages. */
std::string ring_count_text(RingCount c, bool input);

} // namespace rp
