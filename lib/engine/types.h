/* The engine's own vocabulary: the verbs a flow exercises (their table is
 * verbs_table.h), how work requests are posted and completions read, and the bounds
 * the fast path is sized by. Header only, no DPDK or verbs: the option and .conf
 * parsers (lib/conf) use it too. */
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/verbs_table.h"   // Verb and kVerbs

namespace rp {

/* Bounds the parsers check and the engine relies on. */
inline constexpr uint32_t kMaxBatch = 512;           // WRs per ibv_post_send chain
inline constexpr uint32_t kMaxMsgBytes = 1u << 30;   // one RDMA message (rxe allows 2^31)
inline constexpr size_t kMaxSweepSizes = 64;        // sizes in one size sweep (-s A,B,..., a flow's sizes list)
inline constexpr uint32_t kMaxSlots = (1u << 20) - 1;   // receive-window slots at the server (20 bits in the handshake)
inline constexpr uint32_t kMaxSqDepth = 1u << 15;

inline constexpr uint32_t kMaxQps = 1024;           // QPs of all flows (all share one context per lcore)
inline constexpr uint32_t kMaxFlows = 16;

/* Default send-queue depth: this many chains (or signalling periods, whichever is
 * longer). Selective signalling frees the queue in steps of signal_every, so the
 * queue must hold two periods for the sender never to wait on an unasked completion. */
inline constexpr uint32_t kSqDepthPerUnit = 4;
static_assert(kSqDepthPerUnit >= 2, "send queue depth must cover two signalling periods");
static_assert(kMaxSqDepth >= kSqDepthPerUnit * kMaxBatch, "the deepest default queue must be allowed");

/* How work requests reach the QP: chained ibv_post_send, or ibv_qp_ex's
 * ibv_wr_start ... ibv_wr_complete (one doorbell per chain either way). */
enum class PostApi : uint8_t {
	classic,
	wr,
};

/* How completions are read: ibv_poll_cq into an array, or the extended CQ's
 * ibv_start_poll / ibv_next_poll / ibv_end_poll (chosen once at setup). */
enum class CqApi : uint8_t {
	classic,
	ex,
};

/* How a UC flow recovers lost messages: not at all (losses counted, the run fails),
 * or in software (seed 000: per-QP sequence numbers, ACK + SACK on a UD control QP,
 * fast and timed retransmission). RC flows are reliable in the NIC. */
enum class Reliability : uint8_t {
	none,
	software,
};

/* Software reliability's defaults: an ACK every this many messages of a QP, or this
 * many microseconds after the first unacknowledged one, whichever comes first. */
inline constexpr uint32_t kDefaultAckEvery = 16;
inline constexpr uint32_t kDefaultAckUs = 100;
inline constexpr uint32_t kMaxAckEvery = 1024;
inline constexpr uint32_t kMaxAckUs = 1000000;
/* Software reliability cuts a write_imm message into chunks of this many bytes
 * (Chunking in engine/wr_chain.h): by default (kChunkAuto) the path MTU less the
 * retransmission header, when a message does not fit one packet; 0 never cuts. A
 * chunk is below 4096 B (RoCE's largest MTU), so that it and its header fit a packet. */
inline constexpr uint32_t kChunkAuto = UINT32_MAX;
inline constexpr uint32_t kMaxChunk = 4095;

} // namespace rp
