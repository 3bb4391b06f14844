/* A responder set up: its QPs' state and windows (init), its QP table and read
 * windows' patterns (add_qps), its variants chosen at start. */
#include "engine/responder_internal.h"

#include "log/log.h"

#include <rte_cycles.h>

#include <algorithm>
#include <cerrno>

namespace rp {

/* A window of slots, one word for a verb of fixed size, nothing when it takes no rkey. */
uint64_t responder_memory_per_qp(Verb v, uint32_t msg_bytes, uint32_t slots)
{
	const VerbInfo &i = verb_info(v);
	if (i.remote_access == 0)
		return 0;
	return i.fixed_bytes ? i.fixed_bytes : static_cast<uint64_t>(slots) * msg_bytes;
}

int responder_init(Responder *r, uint32_t nqps, std::string *err)
{
	if (nqps == 0 || nqps > kMaxQps) {
		*err = "responder: " + std::to_string(nqps) + " QPs is outside 1.." + std::to_string(kMaxQps);
		return -EINVAL;
	}
	if (r->p.slices == 0 || r->p.slices > kMaxQps || (r->p.slices > 1 && verb_consumes_receive(r->p.verb))) {
		*err = "responder: " + std::to_string(r->p.slices) + " slices per QP (lanes sharing QPs of a one-sided verb)";
		return -EINVAL;
	}
	r->nqps = nqps;
	r->two_sided = verb_consumes_receive(r->p.verb);
	r->has_imm = verb_has_imm(r->p.verb);
	r->qps.reset(new ResponderQp[nqps]);
	uint64_t window = static_cast<uint64_t>(nqps) * r->p.slots;   // what the sender may have unconsumed here
	if (r->p.flow_window && r->p.flow_window < window)
		window = r->p.flow_window;
	r->held_cap = static_cast<uint32_t>(std::min<uint64_t>(window + kRxPollBurst, UINT32_MAX));
	r->held.reset(new void *[r->held_cap]);
	r->held_qp.reset(new uint32_t[r->held_cap]);
	r->rx_live.reliable = r->p.reliable;
	if (r->p.reliable) {
		if (!verb_has_imm(r->p.verb)) {
			*err = "responder: software reliability takes write_imm or send_imm";
			return -EINVAL;
		}
		/* The window counts sequences: slots messages, in chunks if cut. */
		r->ck = Chunking::of(r->p.msg_bytes, verb_info(r->p.verb).chunkable ? r->p.chunk_bytes : 0);
		const uint32_t window = r->p.slots * r->ck.count;
		const uint32_t mask = rx_window_mask(window);
		const size_t words = (static_cast<size_t>(mask) + 1) / 64;
		r->win_bits.reset(new uint64_t[words * nqps]());
		if (r->ck.count > 1)
			r->chunks_in_mem.reset(new uint32_t[static_cast<size_t>(r->p.slots) * nqps]());
		for (uint32_t i = 0; i < nqps; i++) {
			r->qps[i].win = RxWindow{0, &r->win_bits[words * i], mask, window};
			if (r->ck.count > 1)
				r->qps[i].chunks_in = &r->chunks_in_mem[static_cast<size_t>(r->p.slots) * i];
		}
	}
	if (r->p.flow_window && (r->p.reliable || r->p.flow_step == 0 || r->p.flow_step > r->p.flow_window)) {
		*err = "responder: a flow window needs a credit step in 1..window and no software reliability";
		return -EINVAL;
	}
	RP_LOG(DEBUG, ENGINE, "rdmapipe: responder: %u QP%s, %s, %u B, %u slots per QP%s, flow window %u\n", nqps, nqps == 1 ? "" : "s",
	       verb_name(r->p.verb), r->p.msg_bytes, r->p.slots, r->p.reliable ? ", reliable in software" : "", r->p.flow_window);
	return 0;
}

int responder_add_qps(Responder *r, std::string *err)
{
	if (r->p.flow_window && r->flow_credit_addr == 0) {
		*err = "responder: a flow window but no flow credit word to write";
		return -EINVAL;
	}
	r->table.init(r->nqps);
	for (uint32_t i = 0; i < r->nqps; i++) {
		if (r->qps[i].qp == nullptr || !r->table.insert(r->qps[i].qp->qp_num, i)) {
			*err = "responder: QP " + std::to_string(i) + " is missing or its qp_num is a duplicate";
			return -EINVAL;
		}
	}
	/* Reads fetch slot seq % slots of their QP's slice: give each slot its pattern (no
	 * memory: another responder holds the far end's, lanes_setup). */
	const uint32_t nslices = r->nqps * r->p.slices;
	if (r->p.verb == Verb::read && r->memory)
		for (uint32_t v = 0; v < nslices; v++)
			for (uint32_t k = 0; k < r->p.slots; k++)
				pattern_fill(r->memory + (static_cast<uint64_t>(v) * r->p.slots + k) * r->p.msg_bytes,
					     r->p.msg_bytes, msg_key(v, k));
	return 0;
}

void responder_start(Responder *r)
{
	r->payload_check = !r->p.verify || r->payload_downstream ? Responder::PayloadCheck::none
			   : r->self_describing			  ? Responder::PayloadCheck::self_describing
								  : Responder::PayloadCheck::pattern;
	r->two_sided = verb_consumes_receive(r->p.verb);
	r->has_imm = verb_has_imm(r->p.verb);
	using RB = Responder::RecvBurst;
	r->recv_burst = r->p.reliable || !r->two_sided ? RB::per_message
			: r->p.verb == Verb::write_imm	 ? RB::plain_window_imm
			: r->has_imm			 ? RB::plain_buffer_imm
							 : RB::plain_buffer;
	r->checked_bytes = r->payload_check == Responder::PayloadCheck::self_describing ? r->p.msg_bytes - 8 : r->p.msg_bytes;
	r->matcher = pattern_matcher(r->checked_bytes);
	r->credit_every_burst = r->send_peer.on_wc || r->p.reliable || r->p.flow_window;
	r->busy = responder_busy_for(r);
	r->published = 0;
	r->last_progress = rte_rdtsc();
	r->lasts = 0;
	r->nheld = 0;
	r->arrived_qps = 0;
	r->finished = false;
}

bool responder_passive(const Responder *r)
{
	return !verb_consumes_receive(r->p.verb) && !r->p.reliable && r->port == nullptr && r->out == nullptr;
}

} // namespace rp
