/* The stage kinds a pipeline may name, as each declares itself: its name, the rings it
 * takes, what it needs of a flow and an lcore, for the .conf reader, the validator, the
 * command line's pipeline, --help and docs/configuration.md's table. Plain data, no
 * DPDK or verbs: lib/conf knows no kind by name. Each kind is one file of lib/stages/,
 * which declares its StageKindInfo there, with its engine hooks (StageKindOps,
 * pipeline/stage_kind.h), and registers it at load time (RP_STAGE_KIND_REGISTER, a
 * constructor; the library is linked whole), as DPDK's RTE_NODE_REGISTER and grout's
 * GR_NODE_REGISTER do. Kinds are listed in the order they registered: lib/stages'
 * meson.build order, so a new kind goes at the end of its list. */
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rp {

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
inline constexpr RingCount kNoRing{0, 0}, kOneRing{1, 1}, kOptionalRing{0, 1};

struct StageKindOps;   // what it does in the engine (pipeline/stage_kind.h)

struct StageKindInfo {
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
	const StageKindOps *ops;    // its hooks into the builder and its burst
};

/* Adds a kind (its file's constructor): a second kind of the same name, or a kind with
 * no name or no hooks, is a bug of the program, which then stops at load. */
void stage_kind_register(const StageKindInfo *k);
/* Every kind, in the order they registered. */
const std::vector<const StageKindInfo *> &stage_kinds();
/* The kind spelled `name`; nullptr when there is none. */
const StageKindInfo *stage_kind_named(const std::string &name);
/* The kind that is this end of a flow (rdma_tx for its requester, ...); nullptr: none. */
const StageKindInfo *stage_kind_of_end(FlowEnd end);
/* "no input", "at most one input ring", ...: what a kind takes, for messages. */
std::string ring_count_text(RingCount c, bool input);

} // namespace rp

/* In a kind's file, at namespace scope: registers `info` (a StageKindInfo) at load. */
#define RP_STAGE_KIND_REGISTER(info)                                                  \
	__attribute__((constructor)) static void rp_stage_kind_register_##info()      \
	{                                                                             \
		::rp::stage_kind_register(&(info));                                   \
	}
