/* Chains of pre-initialised send work requests (UCCL's WrExBuffPool idea, eRPC's "link
 * once at init"): setup links `batch` WR+SGE entries and sets the opcode once; a burst
 * fills only the fields that change, and the whole chain goes out in one ibv_post_send.
 * build<V>() is instantiated per verb and picked at setup: no per-WR branch on the verb. */
#pragma once

#include "engine/types.h"
#include "verbs/memory.h"

#include <infiniband/verbs.h>
#include <arpa/inet.h>

#include <cstdint>
#include <memory>

namespace rp {

/* Immediate data: the low 31 bits carry the message sequence number (mod 2^31), the top
 * bit marks the last message of the run on that QP. */
inline constexpr uint32_t kImmLast = 1u << 31;
inline constexpr uint32_t kImmSeqMask = kImmLast - 1;

/* Selective signalling: the WR with 0-based index i asks for a completion when
 * (i + 1) is a multiple of `every`. Its completion also retires every earlier WR of
 * the QP (completions are in order on an RC send queue). */
inline bool wr_signalled(uint64_t index, uint32_t every)
{
	return (index + 1) % every == 0;
}

/* m - 1 when m is a power of two, else 0: for seq_mod, taken once where m is fixed. */
inline uint32_t pow2_mask(uint32_t m)
{
	return (m & (m - 1)) == 0 ? m - 1 : 0;
}

/* x % m, a mask where m is a power of two (pm = pow2_mask(m)): no division per chain in
 * the common case. */
inline uint32_t seq_mod(uint64_t x, uint32_t m, uint32_t pm)
{
	return static_cast<uint32_t>(pm ? x & pm : x % m);
}

/* kVerbs keeps verbs.h's values without its header (lib/conf reads the table). */
static_assert(ibv::kWrRdmaWrite == IBV_WR_RDMA_WRITE && ibv::kWrRdmaWriteImm == IBV_WR_RDMA_WRITE_WITH_IMM &&
	      ibv::kWrSend == IBV_WR_SEND && ibv::kWrSendImm == IBV_WR_SEND_WITH_IMM &&
	      ibv::kWrRdmaRead == IBV_WR_RDMA_READ && ibv::kWrCmpSwap == IBV_WR_ATOMIC_CMP_AND_SWP &&
	      ibv::kWrFetchAdd == IBV_WR_ATOMIC_FETCH_AND_ADD, "kVerbs: ibv_wr_opcode values");
static_assert(ibv::kWcSend == IBV_WC_SEND && ibv::kWcRdmaWrite == IBV_WC_RDMA_WRITE &&
	      ibv::kWcRdmaRead == IBV_WC_RDMA_READ && ibv::kWcCmpSwap == IBV_WC_COMP_SWAP &&
	      ibv::kWcFetchAdd == IBV_WC_FETCH_ADD && ibv::kWcRecv == IBV_WC_RECV &&
	      ibv::kWcRecvRdmaImm == IBV_WC_RECV_RDMA_WITH_IMM, "kVerbs: ibv_wc_opcode values");
static_assert(ibv::kWcNone != IBV_WC_RECV && ibv::kWcNone != IBV_WC_RECV_RDMA_WITH_IMM && ibv::kWcNone != IBV_WC_SEND,
	      "kVerbs: 'no receive' is no completion opcode");
static_assert(ibv::kLocalWrite == IBV_ACCESS_LOCAL_WRITE && ibv::kRemoteWrite == IBV_ACCESS_REMOTE_WRITE &&
	      ibv::kRemoteRead == IBV_ACCESS_REMOTE_READ && ibv::kRemoteAtomic == IBV_ACCESS_REMOTE_ATOMIC,
	      "kVerbs: IBV_ACCESS_* values");

inline ibv_wr_opcode verb_wr_opcode(Verb v)
{
	return static_cast<ibv_wr_opcode>(verb_info(v).wr_opcode);
}

/* The opcode a successful send completion of the verb reports. */
inline ibv_wc_opcode verb_wc_opcode(Verb v)
{
	return static_cast<ibv_wc_opcode>(verb_info(v).wc_opcode);
}

/* The opcode of the receive completion the verb makes at the responder (two-sided). */
inline ibv_wc_opcode verb_recv_wc_opcode(Verb v)
{
	return static_cast<ibv_wc_opcode>(verb_info(v).recv_wc_opcode);
}

/* Where a QP's messages go on the responder: a window of `slots` message slots for
 * writes and reads, one 8-byte word for atomics, nothing for sends. */
struct RemoteTarget {
	uint64_t base;
	uint32_t rkey;
	uint32_t slots;
};

/* How a reliable write_imm message goes on the wire: whole (count 1), or cut into
 * chunks of `bytes` (the last one shorter), each a WRITE_WITH_IMM of its own with its
 * own sequence number (UCCL's chunking): a loss then costs one chunk and a QP never
 * carries a UC message of several packets, which rxe cannot recover from without a
 * restart. The sequence numbers chunks: s is chunk s % count of message s / count,
 * whose slot in the window is (s / count) % slots. Sends are never cut. */
struct Chunking {
	uint32_t msg_bytes = 0;
	uint32_t bytes = 0;    // a chunk's (msg_bytes when whole)
	uint32_t count = 1;    // chunks per message

	/* chunk_bytes 0, or not below msg_bytes: whole messages. */
	static Chunking of(uint32_t msg_bytes, uint32_t chunk_bytes)
	{
		if (chunk_bytes == 0 || chunk_bytes >= msg_bytes)
			return Chunking{msg_bytes, msg_bytes, 1};
		return Chunking{msg_bytes, chunk_bytes, (msg_bytes + chunk_bytes - 1) / chunk_bytes};
	}
	uint64_t msg(uint64_t s) const { return count == 1 ? s : s / count; }
	uint32_t index(uint64_t s) const { return count == 1 ? 0 : static_cast<uint32_t>(s % count); }
	uint32_t len(uint64_t s) const { return part_len(index(s)); }
	/* Chunk j of a message: all are `bytes` long but the last. */
	uint32_t part_len(uint32_t j) const { return j + 1 < count ? bytes : msg_bytes - j * bytes; }
	/* Where chunk s lies in a window of `slots` messages. */
	uint64_t offset(uint64_t s, uint32_t slots) const
	{
		return (msg(s) % slots) * static_cast<uint64_t>(msg_bytes) + static_cast<uint64_t>(index(s)) * bytes;
	}
};

class SendChain {
public:
	struct Entry {
		ibv_send_wr wr;
		ibv_sge sge;

		/* Setup: the fields every WR of a verb's chain shares (one SGE of msg_bytes). */
		void init(Verb verb, uint32_t msg_bytes)
		{
			sge.length = msg_bytes;
			wr.sg_list = &sge;
			wr.num_sge = 1;
			wr.opcode = verb_wr_opcode(verb);
		}
	};

	/* Setup: links the entries and fills the constant fields. `flags` go on every WR
	 * (IBV_SEND_INLINE); `fence` puts IBV_SEND_FENCE on the first WR of each chain.
	 * Returns 0 or -EINVAL. */
	int init(Verb verb, uint32_t batch, uint32_t signal_every, uint32_t msg_bytes, unsigned flags = 0,
		 bool fence = false)
	{
		if (batch == 0 || signal_every == 0 || msg_bytes == 0)
			return -EINVAL;
		flags_ = flags;
		fence_ = fence ? IBV_SEND_FENCE : 0;
		entries_.reset(new Entry[batch]());
		batch_ = batch;
		signal_every_ = signal_every;
		msg_bytes_ = msg_bytes;
		for (uint32_t i = 0; i < batch; i++) {
			Entry &e = entries_[i];
			e.init(verb, msg_bytes);
			e.wr.next = i + 1 < batch ? &entries_[i + 1].wr : nullptr;
		}
		return 0;
	}

	/* Fast path: fills n (1..batch) entries for messages first_seq.. of one QP, buffer
	 * bufs[i] for message first_seq + i, and returns the head of an n-long chain. The
	 * last WR is signalled when `ends_run` so the sender can drain. Call relink(n) after
	 * posting. */
	template <Verb V>
	ibv_send_wr *build(uint64_t first_seq, uint32_t n, void *const *bufs, const MrTable &mrs,
			   bool ends_run, const RemoteTarget &t, bool signal_end = false)
	{
		return fill<V>(first_seq, n, ends_run, t, signal_end, [&](uint32_t i, uint64_t, ibv_sge &sge) {
			sge.addr = reinterpret_cast<uintptr_t>(bufs[i]);
			sge.lkey = mrs.lkey_of(bufs[i]);
		});
	}

	/* The same with buffers bound to the QP: message seq's is ring[seq & mask], its
	 * lkey lkeys[seq & mask] (looked up once, when the buffer was bound). */
	template <Verb V>
	ibv_send_wr *build_bound(uint64_t first_seq, uint32_t n, void *const *ring, const uint32_t *lkeys, uint32_t mask,
				 bool ends_run, const RemoteTarget &t, bool signal_end = false)
	{
		return fill<V>(first_seq, n, ends_run, t, signal_end, [ring, lkeys, mask](uint32_t, uint64_t seq, ibv_sge &sge) {
			const uint32_t k = static_cast<uint32_t>(seq) & mask;
			sge.addr = reinterpret_cast<uintptr_t>(ring[k]);
			sge.lkey = lkeys[k];
		});
	}

	/* Fast path, reliable write_imm cut into chunks (Chunking above): n
	 * messages first_msg.. as n x ck.count WRITE_WITH_IMMs, chunk j of message m from
	 * bufs[i] + j x ck.bytes to its place in m's slot, the immediate its chunk sequence
	 * (the run's last chunk flagged when ends_run). The caller sets wr_id and signalling;
	 * init() was given batch x ck.count entries. */
	ibv_send_wr *build_chunks(uint64_t first_msg, uint32_t n, void *const *bufs, const MrTable &mrs, bool ends_run,
				  const RemoteTarget &t, const Chunking &ck)
	{
		uint64_t slot = first_msg % t.slots;
		uint32_t k = 0;
		for (uint32_t i = 0; i < n; i++) {
			const uintptr_t b = reinterpret_cast<uintptr_t>(bufs[i]);
			const uint32_t lkey = mrs.lkey_of(bufs[i]);
			const uint64_t base = t.base + slot * ck.msg_bytes;
			const uint64_t first = (first_msg + i) * ck.count;
			for (uint32_t j = 0; j < ck.count; j++, k++) {
				Entry &e = entries_[k];
				const uint64_t off = static_cast<uint64_t>(j) * ck.bytes;
				const bool last = ends_run && i == n - 1 && j + 1 == ck.count;
				e.sge.addr = b + off;
				e.sge.length = ck.part_len(j);
				e.sge.lkey = lkey;
				e.wr.send_flags = flags_;
				e.wr.imm_data = htonl(static_cast<uint32_t>((first + j) & kImmSeqMask) | (last ? kImmLast : 0));
				e.wr.wr.rdma.remote_addr = base + off;
				e.wr.wr.rdma.rkey = t.rkey;
			}
			if (++slot == t.slots)
				slot = 0;
		}
		entries_[k - 1].wr.next = nullptr;
		return &entries_[0].wr;
	}

	/* OR-ed into every wr_id: the lane of a requester whose QPs other lcores share. */
	void set_wr_tag(uint64_t tag) { wr_tag_ = tag; }

	/* After a caller re-linked entries 0..n-1 among themselves (dropping some). */
	void relink_all(uint32_t n)
	{
		for (uint32_t i = 0; i < n; i++)
			entries_[i].wr.next = i + 1 < batch_ ? &entries_[i + 1].wr : nullptr;
	}

	void relink(uint32_t n)
	{
		entries_[n - 1].wr.next = n < batch_ ? &entries_[n].wr : nullptr;
	}

private:
	/* Per WR only what changes with the message; the signalled WRs (every
	 * signal_every-th sequence, and the chain's last when it ends the run or is asked
	 * to) are found once per chain rather than tested per WR. */
	template <Verb V, typename SetSge>
	ibv_send_wr *fill(uint64_t first_seq, uint32_t n, bool ends_run, const RemoteTarget &t, bool signal_end,
			  SetSge set_sge)
	{
		/* Locals, not members: the stores into the entries could alias them, and the
		 * compiler would load them again for every WR. */
		const uint64_t tag = wr_tag_, base = t.base, bytes = msg_bytes_;
		const uint32_t rkey = t.rkey, slots = t.slots;
		const unsigned flags = flags_;
		uint64_t slot = slots ? first_seq % slots : 0;
		uint64_t raddr = base + slot * bytes;
		Entry *const ents = entries_.get();
		constexpr bool rdma = V == Verb::write || V == Verb::write_imm || V == Verb::read;
		/* In runs that do not wrap around the window, so that the loop tests nothing. */
		for (uint32_t i = 0; i < n;) {
			uint32_t end = n;
			if (rdma && slots - slot < n - i)
				end = i + static_cast<uint32_t>(slots - slot);
			const uint32_t start = i;
			for (; i < end; i++) {
				Entry &e = ents[i];
				const uint64_t seq = first_seq + i;
				set_sge(i, seq, e.sge);
				e.wr.wr_id = seq | tag;
				e.wr.send_flags = flags;
				if constexpr (verb_has_imm(V))
					e.wr.imm_data = htonl(static_cast<uint32_t>(seq & kImmSeqMask));
				if constexpr (rdma) {
					e.wr.wr.rdma.remote_addr = raddr;
					e.wr.wr.rdma.rkey = rkey;
					raddr += bytes;
				}
				if constexpr (verb_is_atomic(V)) {
					/* Both leave the word at seq + 1 and return seq: the check is the same. */
					e.wr.wr.atomic.remote_addr = base;
					e.wr.wr.atomic.rkey = rkey;
					e.wr.wr.atomic.compare_add = V == Verb::fetch_add ? 1 : seq;
					e.wr.wr.atomic.swap = seq + 1;
				}
			}
			if constexpr (rdma) {
				slot += end - start;
				if (slot == slots) {
					slot = 0;
					raddr = base;
				}
			}
		}
		entries_[0].wr.send_flags |= fence_;
		for (uint64_t i = signal_every_ - 1 - first_seq % signal_every_; i < n; i += signal_every_)
			entries_[i].wr.send_flags |= IBV_SEND_SIGNALED;
		Entry &end = entries_[n - 1];
		if (ends_run || signal_end)
			end.wr.send_flags |= IBV_SEND_SIGNALED;
		if constexpr (verb_has_imm(V))
			if (ends_run)
				end.wr.imm_data |= htonl(kImmLast);
		end.wr.next = nullptr;
		return &entries_[0].wr;
	}

	std::unique_ptr<Entry[]> entries_;
	uint32_t batch_ = 0;
	uint32_t signal_every_ = 1;
	uint32_t msg_bytes_ = 0;
	unsigned flags_ = 0;
	unsigned fence_ = 0;
	uint64_t wr_tag_ = 0;
};

/* Per QP prebuilt chains for the common rate run: buffers bound to the QP
 * (ring[seq & mask]), remote slots cycling with the sequence (seq % slots), a signalled
 * WR every signal_every. All three repeat with period = lcm(mask + 1, slots,
 * signal_every), so QP qi keeps `period` WRs linked in a circle, entry seq % period
 * being message seq's: its buffer, lkey, remote slot and periodic signal are written
 * when the QP first sends that entry, then never again. A chain of n from seq is the
 * circle from seq % period, cut after n (restore() closes it again). Per message only
 * what changes is written: the immediate, cmp_swap's operands; wr_id only where a
 * completion may name it (the signalled WRs; a failed one's: full_seq). The bare
 * loop's repost, with rdmapipe's sequences. */
class PrebuiltChains {
public:
	using Entry = SendChain::Entry;

	/* The period for send queues of `size` (a power of two, >= sq_depth) messages per
	 * QP, windows of `slots` (0: the verb has none) and a signal every `every`; 0 when
	 * it exceeds max_period. */
	static uint32_t period_for(uint32_t size, uint32_t slots, uint32_t every, uint32_t max_period)
	{
		uint64_t p = size;
		for (uint64_t v : {static_cast<uint64_t>(slots), static_cast<uint64_t>(every)}) {
			if (v == 0)
				continue;
			uint64_t a = p, b = v;
			while (b) {
				const uint64_t t = a % b;
				a = b;
				b = t;
			}
			p = p / a * v;
			if (p > max_period)
				return 0;
		}
		return p <= max_period ? static_cast<uint32_t>(p) : 0;
	}

	/* Setup: nqps circles of `period` WRs (a multiple of signal_every); the opcode,
	 * length, links and `flags` (IBV_SEND_INLINE) set once. Returns 0 or -EINVAL. */
	int init(Verb verb, uint32_t nqps, uint32_t period, uint32_t signal_every, uint32_t msg_bytes, unsigned flags = 0,
		 bool fence = false)
	{
		if (nqps == 0 || period == 0 || signal_every == 0 || period % signal_every || msg_bytes == 0)
			return -EINVAL;
		entries_.reset(new Entry[static_cast<size_t>(nqps) * period]());
		period_ = period;
		pmask_ = pow2_mask(period);
		signal_every_ = signal_every;
		smask_ = pow2_mask(signal_every);
		msg_bytes_ = msg_bytes;
		flags_ = flags;
		fence_ = fence ? IBV_SEND_FENCE : 0;
		for (uint32_t q = 0; q < nqps; q++) {
			Entry *ring = &entries_[static_cast<size_t>(q) * period];
			for (uint32_t k = 0; k < period; k++) {
				Entry &e = ring[k];
				e.init(verb, msg_bytes);
				e.wr.send_flags = periodic_flags(k);
				e.wr.next = &ring[k + 1 < period ? k + 1 : 0].wr;
			}
		}
		return 0;
	}

	uint32_t period() const { return period_; }

	/* Fast path: the chain of messages first_seq.. (n, 1..period) of QP qi, its last WR
	 * signalled when it ends the run or is asked to. Call restore() with the same
	 * arguments after posting. */
	template <Verb V>
	[[gnu::always_inline]] ibv_send_wr *build(uint32_t qi, uint64_t first_seq, uint32_t n, void *const *bufs, const uint32_t *lkeys,
			   uint32_t mask, bool ends_run, const RemoteTarget &t, bool signal_end = false)
	{
		Entry *const ring = &entries_[static_cast<size_t>(qi) * period_];
		const uint32_t P = period_;
		const uint32_t k0 = seq_mod(first_seq, P, pmask_);
		if (first_seq < P)   // the QP's first round: entries first_seq.. are new
			first_round<V>(ring, first_seq, n < P - first_seq ? n : static_cast<uint32_t>(P - first_seq), bufs,
				       lkeys, mask, t);
		per_message<V>(ring, k0, first_seq, n);
		/* Completions name the signalled WRs: theirs get the full sequence. An
		 * unsignalled WR keeps its first round's (seq % period: full_seq()). */
		for (uint64_t i = signal_every_ - 1 - seq_mod(first_seq, signal_every_, smask_); i < n; i += signal_every_)
			ring[at(k0, static_cast<uint32_t>(i))].wr.wr_id = first_seq + i;
		Entry &end = ring[at(k0, n - 1)];
		/* What restore() puts back: the circle's link and the periodic flags. */
		first_ = &ring[k0];
		end_ = &end;
		first_flags_ = first_->wr.send_flags;
		end_flags_ = end.wr.send_flags;
		end_next_ = end.wr.next;
		end.wr.wr_id = first_seq + n - 1;   // signalled when it ends the run, or asked to
		if (ends_run || signal_end)
			end.wr.send_flags |= IBV_SEND_SIGNALED;
		if constexpr (verb_has_imm(V))
			if (ends_run)
				end.wr.imm_data |= htonl(kImmLast);
		first_->wr.send_flags |= fence_;
		end.wr.next = nullptr;
		return &first_->wr;
	}

	/* The sequence of a completion's WR of a QP that has retired every message before
	 * `completed`: a flushed or failed WR may be unsignalled, its wr_id its sequence
	 * mod the period; what is outstanding spans less than a period. */
	uint64_t full_seq(uint64_t wr_id, uint64_t completed) const
	{
		const uint64_t P = period_;
		return completed + (wr_id % P + P - completed % P) % P;
	}

	/* After posting the last build()'s chain: the circle closed and the flags periodic
	 * again (its first WR's first: they are one WR in a chain of one). */
	void restore()
	{
		end_->wr.next = end_next_;
		end_->wr.send_flags = end_flags_;
		first_->wr.send_flags = first_flags_;
	}

private:
	unsigned periodic_flags(uint32_t k) const
	{
		return flags_ | (wr_signalled(k, signal_every_) ? IBV_SEND_SIGNALED : 0);
	}

	/* What changes with every message, in runs that do not wrap around: the
	 * immediate, cmp_swap's operands (nothing for the other verbs). */
	template <Verb V>
	void per_message(Entry *ring, uint32_t k0, uint64_t seq, uint32_t n)
	{
		if constexpr (!verb_has_imm(V) && V != Verb::cmp_swap)
			return;
		const uint32_t P = period_;
		for (uint32_t k = k0, left = n; left; k = 0) {
			const uint32_t run = left < P - k ? left : P - k;
			Entry *e = &ring[k];
			Entry *const stop = e + run;
			/* Unrolled: the loop's own count and branch cost as much as the store (callgrind). */
#pragma GCC unroll 4
			for (; e != stop; ++e, ++seq) {
				if constexpr (verb_has_imm(V))
					e->wr.imm_data = htonl(static_cast<uint32_t>(seq & kImmSeqMask));
				if constexpr (V == Verb::cmp_swap) {
					e->wr.wr.atomic.compare_add = seq;
					e->wr.wr.atomic.swap = seq + 1;
				}
			}
			left -= run;
		}
	}

	/* Entry k0 + i of the circle (i < period). */
	uint32_t at(uint32_t k0, uint32_t i) const
	{
		const uint32_t k = k0 + i;
		return k < period_ ? k : k - period_;
	}

	/* What stays for every round of entries first_seq.. (n, all below period): the
	 * buffer bound to the sequence, the remote slot, the atomics' word. */
	template <Verb V>
	void first_round(Entry *ring, uint64_t first_seq, uint32_t n, void *const *bufs, const uint32_t *lkeys, uint32_t mask,
			 const RemoteTarget &t)
	{
		constexpr bool rdma = V == Verb::write || V == Verb::write_imm || V == Verb::read;
		for (uint32_t i = 0; i < n; i++) {
			const uint64_t seq = first_seq + i;
			Entry &e = ring[seq];
			const uint32_t b = static_cast<uint32_t>(seq) & mask;
			e.sge.addr = reinterpret_cast<uintptr_t>(bufs[b]);
			e.sge.lkey = lkeys[b];
			e.wr.wr_id = seq;   // for good, unless signalled (build)
			if constexpr (rdma) {
				e.wr.wr.rdma.remote_addr = t.base + (seq % t.slots) * msg_bytes_;
				e.wr.wr.rdma.rkey = t.rkey;
			}
			if constexpr (verb_is_atomic(V)) {
				e.wr.wr.atomic.remote_addr = t.base;
				e.wr.wr.atomic.rkey = t.rkey;
				e.wr.wr.atomic.compare_add = 1;   // fetch_add's; cmp_swap's written per message
			}
		}
	}

	std::unique_ptr<Entry[]> entries_;
	uint32_t period_ = 0;
	uint32_t pmask_ = 0;   // period_ - 1 when a power of two
	uint32_t signal_every_ = 1;
	uint32_t smask_ = 0;   // signal_every_ - 1 when a power of two
	uint32_t msg_bytes_ = 0;
	unsigned flags_ = 0;
	unsigned fence_ = 0;
	Entry *first_ = nullptr, *end_ = nullptr;   // the last build()'s, for restore()
	unsigned first_flags_ = 0, end_flags_ = 0;
	ibv_send_wr *end_next_ = nullptr;
};

} // namespace rp
