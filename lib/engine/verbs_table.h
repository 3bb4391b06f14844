/* The verbs a flow exercises, one row each: what the parsers, the builder, the
 * engine's setup and the report know of a verb is read here, and only the fast
 * path's per-verb template arms name a verb besides. Header only and free of
 * <infiniband/verbs.h> (lib/conf uses it): opcodes and access flags are plain
 * numbers, tied to verbs.h by the static_asserts in engine/wr_chain.h. */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace rp {

/* Two-sided verbs consume receives from the SRQ; one-sided ones touch the
 * responder's memory only. The order is kVerbs' (one row per value). */
enum class Verb : uint8_t {
	send,
	send_imm,
	write,
	write_imm,
	read,
	fetch_add,
	cmp_swap,
};

/* verbs.h's values, by their names there (checked against it in wr_chain.h). */
namespace ibv {
inline constexpr uint8_t kWrRdmaWrite = 0, kWrRdmaWriteImm = 1, kWrSend = 2, kWrSendImm = 3, kWrRdmaRead = 4,
			 kWrCmpSwap = 5, kWrFetchAdd = 6;
inline constexpr uint8_t kWcSend = 0, kWcRdmaWrite = 1, kWcRdmaRead = 2, kWcCmpSwap = 3, kWcFetchAdd = 4,
			 kWcRecv = 128, kWcRecvRdmaImm = 129;
inline constexpr uint8_t kWcNone = 0xff;   // not an ibv_wc_opcode: the verb completes no receive
inline constexpr uint8_t kLocalWrite = 1, kRemoteWrite = 2, kRemoteRead = 4, kRemoteAtomic = 8;
} // namespace ibv

/* How the far end of a ping-pong of the verb learns a message came: a receive
 * completion (sends), or the last byte of its slot changing in memory (writes, as
 * ib_write_lat polls); none: the verb is not echoed. */
enum class PingWait : uint8_t { none, receive, memory };

struct VerbInfo {
	Verb verb;
	const char *name;               // as the options and .conf files spell it
	const char *opcode_name;        // as the summary names it
	uint8_t wr_opcode;              // ibv_wr_opcode
	uint8_t wc_opcode;              // ibv_wc_opcode of its send completion
	uint8_t bth_opcode;             // IBA's RC opcode of a one-packet message ("only"); UC's is 0x20 | it
	uint8_t recv_wc_opcode = ibv::kWcNone;   // of the receive it consumes at the responder
	uint8_t local_access = 0;       // IBV_ACCESS_* the requester's buffers need (what comes back)
	uint8_t remote_access = 0;      // the responder's memory, least rights (0: it takes no rkey)
	bool payload = false;           // sends data of the requester's: a gen stage or a ring can feed it
	bool inlinable = false;         // that payload can go inline in the WR
	bool fills_receive = false;     // the payload lands in a receive buffer: it can be echoed, handed on
	bool consumes_receive = false;  // the responder sees a completion per message (and returns credit)
	bool has_imm = false;           // the sequence travels in the immediate
	bool atomic = false;
	bool self_checked = false;      // the requester checks what comes back
	bool responder_checks = false;  // the responder checks what arrived or what the verb left
	bool uc = false;                // allowed over UC (no reads, no atomics there)
	bool chunkable = false;         // software reliability may cut it: chunks placed by offset in the window
	Verb reliable_as;               // on the wire under software reliability (sequence in the immediate)
	uint32_t fixed_bytes = 0;       // its only message size (atomics' 8-byte word); 0: any
	const char *verified_how = "";  // the summary's note on how its messages were verified
	PingWait ping_wait = PingWait::none;   // how a ping-pong of it waits for each message
};

inline constexpr VerbInfo kVerbs[] = {
	{.verb = Verb::send, .name = "send", .opcode_name = "SEND", .wr_opcode = ibv::kWrSend,
	 .wc_opcode = ibv::kWcSend, .bth_opcode = 0x04, .recv_wc_opcode = ibv::kWcRecv,
	 .payload = true, .inlinable = true, .fills_receive = true, .consumes_receive = true,
	 .responder_checks = true, .uc = true, .reliable_as = Verb::send_imm, .ping_wait = PingWait::receive},
	{.verb = Verb::send_imm, .name = "send_imm", .opcode_name = "SEND_WITH_IMM", .wr_opcode = ibv::kWrSendImm,
	 .wc_opcode = ibv::kWcSend, .bth_opcode = 0x05, .recv_wc_opcode = ibv::kWcRecv,
	 .payload = true, .inlinable = true, .fills_receive = true, .consumes_receive = true, .has_imm = true,
	 .responder_checks = true, .uc = true, .reliable_as = Verb::send_imm, .ping_wait = PingWait::receive},
	{.verb = Verb::write, .name = "write", .opcode_name = "RDMA_WRITE", .wr_opcode = ibv::kWrRdmaWrite,
	 .wc_opcode = ibv::kWcRdmaWrite, .bth_opcode = 0x0a, .remote_access = ibv::kLocalWrite | ibv::kRemoteWrite,
	 .payload = true, .inlinable = true, .responder_checks = true, .uc = true, .reliable_as = Verb::write,
	 .verified_how = " (acknowledged, window's final state checked)", .ping_wait = PingWait::memory},
	{.verb = Verb::write_imm, .name = "write_imm", .opcode_name = "RDMA_WRITE_WITH_IMM",
	 .wr_opcode = ibv::kWrRdmaWriteImm, .wc_opcode = ibv::kWcRdmaWrite, .bth_opcode = 0x0b, .recv_wc_opcode = ibv::kWcRecvRdmaImm,
	 .remote_access = ibv::kLocalWrite | ibv::kRemoteWrite,
	 .payload = true, .inlinable = true, .consumes_receive = true, .has_imm = true, .responder_checks = true,
	 .uc = true, .chunkable = true, .reliable_as = Verb::write_imm},
	{.verb = Verb::read, .name = "read", .opcode_name = "RDMA_READ", .wr_opcode = ibv::kWrRdmaRead,
	 .wc_opcode = ibv::kWcRdmaRead, .bth_opcode = 0x0c, .local_access = ibv::kLocalWrite, .remote_access = ibv::kRemoteRead,
	 .self_checked = true, .reliable_as = Verb::read, .verified_how = " (read results)"},
	{.verb = Verb::fetch_add, .name = "fetch_add", .opcode_name = "ATOMIC_FETCH_AND_ADD",
	 .wr_opcode = ibv::kWrFetchAdd, .wc_opcode = ibv::kWcFetchAdd, .bth_opcode = 0x14, .local_access = ibv::kLocalWrite,
	 .remote_access = ibv::kLocalWrite | ibv::kRemoteAtomic,
	 .atomic = true, .self_checked = true, .responder_checks = true, .reliable_as = Verb::fetch_add,
	 .fixed_bytes = 8, .verified_how = " (return values, final words checked)"},
	{.verb = Verb::cmp_swap, .name = "cmp_swap", .opcode_name = "ATOMIC_CMP_AND_SWP",
	 .wr_opcode = ibv::kWrCmpSwap, .wc_opcode = ibv::kWcCmpSwap, .bth_opcode = 0x13, .local_access = ibv::kLocalWrite,
	 .remote_access = ibv::kLocalWrite | ibv::kRemoteAtomic,
	 .atomic = true, .self_checked = true, .responder_checks = true, .reliable_as = Verb::cmp_swap,
	 .fixed_bytes = 8, .verified_how = " (return values, final words checked)"},
};
inline constexpr size_t kNumVerbs = sizeof(kVerbs) / sizeof(kVerbs[0]);

/* Row i is verb i: verb_info() indexes, it does not search. */
constexpr bool verbs_in_order()
{
	for (size_t i = 0; i < kNumVerbs; i++)
		if (static_cast<size_t>(kVerbs[i].verb) != i)
			return false;
	return true;
}
static_assert(verbs_in_order(), "kVerbs: one row per Verb, in the enum's order");

constexpr const VerbInfo &verb_info(Verb v) { return kVerbs[static_cast<size_t>(v)]; }

constexpr bool verb_is_atomic(Verb v) { return verb_info(v).atomic; }
constexpr bool verb_consumes_receive(Verb v) { return verb_info(v).consumes_receive; }
constexpr bool verb_has_imm(Verb v) { return verb_info(v).has_imm; }
/* Software reliability carries its sequence in the immediate (as UCCL does): a reliable
 * send goes on the wire as SEND_WITH_IMM, and the application's data is the same. */
constexpr Verb reliable_wire_verb(Verb v) { return verb_info(v).reliable_as; }

/* "send, send_imm or write": the verbs a ping-pong echoes, as errors list them. */
inline std::string verb_echoed_list()
{
	std::string all, last;
	for (const VerbInfo &n : kVerbs)
		if (n.ping_wait != PingWait::none) {
			if (!last.empty())
				all += (all.empty() ? "" : ", ") + last;
			last = n.name;
		}
	return all.empty() ? last : all + " or " + last;
}

/* "?" for a value no row has: a peer's handshake can carry one. */
inline const char *verb_name(Verb v)   // "send", "write_imm", ...
{
	return static_cast<size_t>(v) < kNumVerbs ? verb_info(v).name : "?";
}

inline const char *verb_opcode_name(Verb v)   // "SEND", "RDMA_WRITE_WITH_IMM", ...
{
	return static_cast<size_t>(v) < kNumVerbs ? verb_info(v).opcode_name : "?";
}

inline bool verb_from_name(const char *s, Verb *v)
{
	for (const VerbInfo &n : kVerbs)
		if (strcmp(n.name, s) == 0) {
			*v = n.verb;
			return true;
		}
	return false;
}

/* "send, send_imm, ...": the names as an error lists them. */
inline std::string verb_names_list()
{
	std::string all;
	for (const VerbInfo &n : kVerbs)
		all += (all.empty() ? "" : ", ") + std::string(n.name);
	return all;
}

} // namespace rp
