/* Software reliability for UC flows (seed 000): what goes on the wire and the
 * bookkeeping of each end, as plain functions the fast path inlines and the unit tests
 * drive directly.
 *   - The sender numbers messages per QP (the immediate's low 31 bits), keeps every
 *     one tracked until a cumulative ACK passes it, and retransmits: a hole at once
 *     when a message sent after it is acknowledged (fast), the rest when the timeout
 *     from the measured RTT expires.
 *   - The receiver keeps per QP the next expected sequence and a bitmap of what arrived
 *     beyond it, drops duplicates, and answers with AckMsg on the UD control QP.
 *   - A retransmitted WRITE_WITH_IMM goes as one SEND of two SGEs, a RetxHeader and the
 *     original chunk; the receiver checks the header before it copies anything. */
#pragma once

#include "engine/wr_chain.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace rp {

/* A retransmitted write: where it belongs in the QP's window, and its immediate as
 * first sent (network order). Host order for the offset: both ends are one build. */
struct __attribute__((packed)) RetxHeader {
	uint64_t target_offset;
	uint32_t imm;
};
static_assert(sizeof(RetxHeader) == 12, "the retransmission header is 12 bytes on the wire");

/* What a QP's receiver tells its sender. sack bit i (word i / 64) says that sequence
 * cum + 1 + i arrived; cum itself has not (everything below it has). */
inline constexpr uint16_t kAckMagic = 0xac4b;
inline constexpr uint8_t kAckVersion = 2;
inline constexpr uint32_t kSackWords = 4;
inline constexpr uint32_t kSackBits = 64 * kSackWords;

/* AckMsg.flags. A UC QP that a loss left broken (see VerbsOps::stop_qp) is restarted
 * by its receiver only when the sender has stopped sending on it, so that rxe resets
 * a quiet QP: the receiver's ACK says the QP is broken (kAckBroken), or the sender's
 * timeouts came twice in a row; the sender pauses the QP and asks for the restart (a
 * kCtrlRestartRequest, from sender to receiver, naming the receiver's QP; cum, credit
 * and sack zero); the receiver's ACK after the restart (kAckRestarted) resumes it,
 * and what was in flight goes again. A lost request or ACK: the next timeout asks
 * again. Each pause has its epoch (AckMsg.epoch, counted by the sender): the receiver
 * restarts once per epoch and answers a repeated request with kAckRestarted again,
 * never restarting twice, and the sender resumes only on the ACK of its current epoch,
 * so a request or ACK that comes late never restarts a QP that is sending again. */
inline constexpr uint8_t kAckRestarted = 0x01;
inline constexpr uint8_t kCtrlRestartRequest = 0x02;
inline constexpr uint8_t kAckBroken = 0x04;

struct AckMsg {
	uint16_t magic;
	uint8_t version;
	uint8_t flags;
	uint32_t qpn;          // the sender's data QP (its number on the sender's device)
	uint64_t cum;          // next expected sequence
	uint64_t credit;       // messages consumed: the sender may have window more in flight
	uint64_t sack[kSackWords];
	uint64_t epoch;        // restart requests and kAckRestarted: the sender's pause
};

/* A received control message is an ACK only if it is whole and says so. */
inline bool ack_valid(const void *p, uint32_t len, AckMsg *out)
{
	if (len != sizeof(AckMsg))
		return false;
	memcpy(out, p, sizeof(*out));
	return out->magic == kAckMagic && out->version == kAckVersion && out->credit <= out->cum;
}

/* The full sequence an immediate's 31 bits name, relative to the receiver's cum:
 * in [cum, cum + window) it is a message of the window; just below cum (within a
 * window) an old duplicate; anything else is outside. */
enum class SeqClass : uint8_t { in_window, old, outside };

inline SeqClass seq_from_imm(uint64_t cum, uint32_t imm_seq, uint32_t window, uint64_t *seq)
{
	const uint32_t ahead = (imm_seq - static_cast<uint32_t>(cum)) & kImmSeqMask;
	if (ahead < window) {
		*seq = cum + ahead;
		return SeqClass::in_window;
	}
	const uint32_t behind = (static_cast<uint32_t>(cum) - imm_seq) & kImmSeqMask;
	if (behind <= window && behind <= cum) {
		*seq = cum - behind;
		return SeqClass::old;
	}
	return SeqClass::outside;
}

/* A retransmission header is taken only if its immediate is a chunk (or message) of
 * the window and its target is exactly that one's place: nothing is ever written
 * elsewhere. */
inline bool retx_header_ok(const RetxHeader &h, uint64_t cum, uint32_t window, uint32_t slots, const Chunking &ck,
			   uint64_t *seq)
{
	uint32_t imm = ntohl(h.imm);
	if (seq_from_imm(cum, imm & kImmSeqMask, window, seq) == SeqClass::outside)
		return false;
	return h.target_offset == ck.offset(*seq, slots);
}

/* The receiver's view of one QP: cum and a bitmap over the window beyond it (bit of
 * sequence s at s & mask; bits below cum are clear). */
struct RxWindow {
	uint64_t cum = 0;
	uint64_t *bits = nullptr;   // (mask + 1) / 64 words, setup's
	uint32_t mask = 0;          // a power of two less one, >= window - 1, >= 63
	uint32_t window = 0;

	bool has(uint64_t s) const { return s >= cum && (bits[(s & mask) >> 6] >> (s & 63) & 1); }

	/* Records s (in [cum, cum + window), not yet had) and moves cum past what is now
	 * contiguous. Returns how far cum moved. */
	uint64_t mark(uint64_t s)
	{
		bits[(s & mask) >> 6] |= 1ull << (s & 63);
		const uint64_t from = cum;
		while (bits[(cum & mask) >> 6] >> (cum & 63) & 1) {
			bits[(cum & mask) >> 6] &= ~(1ull << (cum & 63));
			cum++;
		}
		return cum - from;
	}

	/* The 64 bits of s .. s + 63 in the circular bitmap (two words' shifts). */
	uint64_t bits64(uint64_t s) const
	{
		const uint32_t i = static_cast<uint32_t>(s & mask), w = i >> 6, sh = i & 63;
		const uint32_t last = mask >> 6;   // words - 1, a power of two less one
		const uint64_t lo = bits[w] >> sh;
		return sh == 0 ? lo : lo | bits[(w + 1) & last] << (64 - sh);
	}

	/* The bits of cum + 1 .. cum + kSackBits within the window, a word at a time (an
	 * ACK goes every few messages; bit by bit it was most of the receiver's work). */
	void sack(uint64_t out[kSackWords]) const
	{
		const uint32_t valid = window == 0 ? 0 : window - 1 < kSackBits ? window - 1 : kSackBits;
		for (uint32_t w = 0; w < kSackWords; w++) {
			const uint32_t n = valid > 64 * w ? std::min(valid - 64 * w, 64u) : 0;
			out[w] = n == 0 ? 0 : bits64(cum + 1 + 64 * w) & (n == 64 ? ~0ull : (1ull << n) - 1);
		}
	}
};

/* Bitmap words a window needs (RxWindow::bits), and its mask. */
inline uint32_t rx_window_mask(uint32_t window)
{
	uint32_t p = 64;
	while (p < window)
		p <<= 1;
	return p - 1;
}

/* The highest sequence an ACK says arrived (cum - 1 when its bitmap is empty). */
inline uint64_t ack_highest(const AckMsg &a)
{
	for (uint32_t w = kSackWords; w-- > 0;)
		if (a.sack[w])
			return a.cum + 1 + 64 * w + (63 - static_cast<uint32_t>(__builtin_clzll(a.sack[w])));
	return a.cum - 1;
}

inline bool ack_has(const AckMsg &a, uint64_t s)
{
	if (s < a.cum)
		return true;
	if (s == a.cum || s - a.cum - 1 >= kSackBits)
		return false;
	const uint64_t i = s - a.cum - 1;
	return a.sack[i >> 6] >> (i & 63) & 1;
}

/* The retransmission timeout (RFC 6298, in TSC cycles): smoothed RTT and its
 * variation from samples of messages sent once (Karn), doubled per timeout that
 * brings no progress, within [min, max]. */
struct Rto {
	uint64_t srtt = 0, rttvar = 0;
	uint64_t min = 0, max = 0, initial = 0;
	uint32_t backoff = 0;

	void sample(uint64_t rtt)
	{
		if (srtt == 0) {
			srtt = rtt ? rtt : 1;
			rttvar = rtt / 2;
			return;
		}
		uint64_t d = rtt > srtt ? rtt - srtt : srtt - rtt;
		rttvar = (3 * rttvar + d) / 4;
		srtt = (7 * srtt + rtt) / 8;
	}
	uint64_t current() const
	{
		uint64_t base = srtt ? srtt + 4 * rttvar : initial;
		if (base < min)
			base = min;
		uint64_t t = backoff >= 20 ? max : base << backoff;
		return t > max ? max : t;
	}
	void timed_out() { backoff += backoff < 20; }
	void progressed() { backoff = 0; }
};

} // namespace rp
