/* The checks every received message gets before its payload, shared by the responder
 * and ping-pong's two sides: the completion opcode the verb produces (a plain receive,
 * or RECV_RDMA_WITH_IMM for WRITE_WITH_IMM), the sequence carried in the immediate, and
 * the length. */
#pragma once

#include "engine/types.h"
#include "engine/counters.h"
#include "engine/wr_chain.h"

#include <infiniband/verbs.h>
#include <arpa/inet.h>

#include <cstdint>

namespace rp {

/* Counts what fails in c. Returns true when all passed; *last says whether the
 * immediate flags the QP's last message. */
inline bool recv_header_ok(ResponderCounters &c, const ibv_wc &wc, Verb v, uint64_t seq, uint32_t msg_bytes, bool *last)
{
	bool ok = true;
	const bool want_imm = verb_has_imm(v);
	const ibv_wc_opcode want_op = verb_recv_wc_opcode(v);
	*last = false;
	if (wc.opcode != want_op || !!(wc.wc_flags & IBV_WC_WITH_IMM) != want_imm) {
		c.unexpected_opcodes++;
		ok = false;
	} else if (want_imm) {
		uint32_t imm = ntohl(wc.imm_data);
		if ((imm & kImmSeqMask) != (seq & kImmSeqMask)) {
			c.sequence_errors++;
			ok = false;
		}
		*last = (imm & kImmLast) != 0;
	}
	if (wc.byte_len != msg_bytes) {
		c.length_errors++;
		ok = false;
	}
	return ok;
}

} // namespace rp
