/* rdma_cm's private data on the wire: the handshake's parameters and a reject's reason,
 * big-endian and field by field (the layout is in cm.h). No device needed: the unit
 * tests and the fuzzer call these alone. */
#include "verbs/cm_internal.h"

#include <cerrno>
#include <cstring>

namespace rp {

using cm_detail::hex;

namespace {

/* ---- wire helpers: big-endian, byte by byte ---- */
void put16(uint8_t *p, uint16_t v)
{
	p[0] = static_cast<uint8_t>(v >> 8);
	p[1] = static_cast<uint8_t>(v);
}
void put32(uint8_t *p, uint32_t v)
{
	put16(p, static_cast<uint16_t>(v >> 16));
	put16(p + 2, static_cast<uint16_t>(v));
}
void put64(uint8_t *p, uint64_t v)
{
	put32(p, static_cast<uint32_t>(v >> 32));
	put32(p + 4, static_cast<uint32_t>(v));
}
uint16_t get16(const uint8_t *p)
{
	return static_cast<uint16_t>(p[0] << 8 | p[1]);
}
uint32_t get32(const uint8_t *p)
{
	return static_cast<uint32_t>(get16(p)) << 16 | get16(p + 2);
}
uint64_t get64(const uint8_t *p)
{
	return static_cast<uint64_t>(get32(p)) << 32 | get32(p + 4);
}

/* Header: magic(4) version(1) kind(1) length(2). */
constexpr uint8_t kKindParams = 1;
constexpr uint8_t kKindReject = 2;

void put_header(uint8_t *p, uint8_t kind, size_t len)
{
	put32(p, kCmMagic);
	p[4] = kCmVersion;
	p[5] = kind;
	put16(p + 6, static_cast<uint16_t>(len));
}

bool is_printable(char c)
{
	return c >= 0x20 && c < 0x7f;
}

} // namespace

/* ---- private data ---- */

void cm_private_encode(const CmPrivate &p, uint8_t out[kCmParamsBytes])
{
	memset(out, 0, kCmParamsBytes);
	put_header(out, kKindParams, kCmParamsBytes);
	out[8] = static_cast<uint8_t>(p.flow);
	out[9] = p.verb;
	put16(out + 10, p.qp_index);
	put32(out + 12, (p.chunk & 0xfff) << 20 | (p.slots & kCmMaxSlots));
	put32(out + 16, p.slot_bytes);
	const bool fw = (p.flags & kCmFlowWindow) != 0;   // a request: no window of its own to describe
	put32(out + 20, fw ? p.flow_window : p.rkey);
	put64(out + 24, fw ? p.flow_credit_addr : p.addr);
	put64(out + 32, p.credit_addr);
	put32(out + 40, p.credit_rkey);
	put32(out + 44, static_cast<uint32_t>(p.flags) << 24 | (p.uc_qpn & kCmQpnMask));
	put64(out + 48, static_cast<uint64_t>(p.ctrl_qpn & kCmQpnMask) << 40 | (p.messages & kCmMaxMessages));
}

static int check_header(const uint8_t *b, size_t len, uint8_t kind, size_t want, std::string *why)
{
	if (len < 8) {
		*why = std::to_string(len) + " bytes of private data, need " + std::to_string(want);
		return -EPROTO;
	}
	uint32_t magic = get32(b);
	if (magic != kCmMagic) {
		*why = "wrong magic " + hex(magic) + " (want " + hex(kCmMagic) + ": not an rdmapipe peer)";
		return -EPROTO;
	}
	if (b[4] != kCmVersion) {
		*why = "private data version " + std::to_string(b[4]) + " (this build speaks " +
		       std::to_string(kCmVersion) + ")";
		return -EPROTO;
	}
	if (b[5] != kind) {
		*why = "private data of kind " + std::to_string(b[5]) + ", want " + std::to_string(kind);
		return -EPROTO;
	}
	size_t stated = get16(b + 6);
	if (stated != want) {
		*why = "private data length field " + std::to_string(stated) + ", want " + std::to_string(want);
		return -EPROTO;
	}
	if (len < want) {
		*why = std::to_string(len) + " bytes of private data, need " + std::to_string(want);
		return -EPROTO;
	}
	return 0;
}

int cm_private_decode(const void *data, size_t len, CmPrivate *p, std::string *why)
{
	auto *b = static_cast<const uint8_t *>(data);
	if (b == nullptr)
		len = 0;
	int ret = check_header(b, len, kKindParams, kCmParamsBytes, why);
	if (ret)
		return ret;
	CmPrivate q;
	q.flow = b[8];
	q.verb = b[9];
	q.qp_index = get16(b + 10);
	const uint32_t slots = get32(b + 12);
	q.slots = slots & kCmMaxSlots;
	q.chunk = slots >> 20;
	q.slot_bytes = get32(b + 16);
	q.rkey = get32(b + 20);
	q.addr = get64(b + 24);
	q.credit_addr = get64(b + 32);
	q.credit_rkey = get32(b + 40);
	const uint32_t shape = get32(b + 44);
	q.flags = static_cast<uint8_t>(shape >> 24);
	if (q.flags & ~(kCmSelfDescribing | kCmReliable | kCmFlowWindow | kCmReceiver)) {
		*why = "unknown flags " + hex(q.flags);
		return -EPROTO;
	}
	if (q.flags & kCmFlowWindow) {
		q.flow_window = q.rkey;
		q.flow_credit_addr = q.addr;
		q.rkey = 0;
		q.addr = 0;
		if (q.flow_window == 0 || q.flow_window > kCmMaxSlots || q.flow_credit_addr == 0 || q.flow_credit_addr % 8 != 0) {
			*why = "flow window of " + std::to_string(q.flow_window) + " messages with its credit word at " + hex(q.flow_credit_addr) +
			       " (want 1.." + std::to_string(kCmMaxSlots) + ", an 8-byte aligned word)";
			return -EPROTO;
		}
	}
	q.uc_qpn = shape & kCmQpnMask;
	const uint64_t tail = get64(b + 48);
	q.ctrl_qpn = static_cast<uint32_t>(tail >> 40);
	q.messages = tail & kCmMaxMessages;
	/* The memory fields are addresses the peer will RDMA into: make sure they describe
	 * one window that does not wrap, before anyone uses them. */
	/* A window without an address is a request's shape (what the client expects the
	 * server's window to be), not memory anyone may touch. */
	if ((q.slots == 0) != (q.slot_bytes == 0)) {
		*why = "inconsistent window: " + std::to_string(q.slots) + " slots of " + std::to_string(q.slot_bytes) +
		       " B at " + hex(q.addr);
		return -EPROTO;
	}
	uint64_t window = static_cast<uint64_t>(q.slots) * q.slot_bytes;
	if (window > UINT64_MAX - q.addr) {
		*why = "window of " + std::to_string(q.slots) + " x " + std::to_string(q.slot_bytes) + " B at " +
		       hex(q.addr) + " wraps around the address space";
		return -EPROTO;
	}
	if (q.credit_addr % 8 != 0) {
		*why = "credit word address " + hex(q.credit_addr) + " is not 8-byte aligned";
		return -EPROTO;
	}
	*p = q;
	return 0;
}

void cm_reject_encode(const std::string &reason, uint8_t out[kCmRejectBytes])
{
	memset(out, 0, kCmRejectBytes);
	put_header(out, kKindReject, kCmRejectBytes);
	size_t n = reason.size() < kCmRejectTextBytes - 1 ? reason.size() : kCmRejectTextBytes - 1;
	for (size_t i = 0; i < n; i++)
		out[8 + i] = is_printable(reason[i]) ? static_cast<uint8_t>(reason[i]) : '?';
}

bool cm_reject_decode(const void *data, size_t len, std::string *reason)
{
	auto *b = static_cast<const uint8_t *>(data);
	std::string why;
	if (b == nullptr || check_header(b, len, kKindReject, kCmRejectBytes, &why) != 0)
		return false;
	reason->clear();
	for (size_t i = 0; i < kCmRejectTextBytes && b[8 + i] != 0; i++)
		*reason += is_printable(static_cast<char>(b[8 + i])) ? static_cast<char>(b[8 + i]) : '?';
	return true;
}

} // namespace rp
