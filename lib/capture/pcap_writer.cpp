/* RoCE v2 records into a pcap file: the frame's fixed bytes are laid out at open, a
 * record fills the rest and hands the frame to pcap_dump (stdio, buffered). */
#include "capture/pcap_writer.h"

#include <pcap/pcap.h>
#include <stdio_ext.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>

namespace rp {

namespace {

constexpr uint32_t kEthBytes = 14, kIpBytes = 20, kUdpBytes = 8, kBthBytes = 12;
constexpr uint32_t kRethBytes = 16, kAtomicBytes = 28, kImmBytes = 4, kIcrcBytes = 4;
constexpr uint32_t kBthAt = kEthBytes + kIpBytes + kUdpBytes;
constexpr uint16_t kRoceV2Port = 4791;
constexpr uint32_t kIpMaxBytes = 65535;
/* Fewer write(2)s from the recording lcore: one per MiB of records. */
constexpr size_t kIoBufBytes = 1 << 20;

static_assert(kCaptureHdrMaxBytes == kBthAt + kBthBytes + kAtomicBytes);
static_assert(kRethBytes + kImmBytes <= kAtomicBytes);

/* CRC-32 as Ethernet's (reflected 0x04c11db7), which the ICRC is. */
constexpr std::array<uint32_t, 256> crc32_table()
{
	std::array<uint32_t, 256> t{};
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		t[i] = c;
	}
	return t;
}
constexpr auto kCrc32 = crc32_table();

constexpr uint32_t crc32_update(uint32_t crc, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		crc = kCrc32[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc;
}

/* rxe's seed (rxe_icrc.c): the CRC of the 8 bytes of ones that stand for the LRH. */
constexpr uint8_t kOnes[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static_assert(crc32_update(0xffffffffu, kOnes, 8) == 0xdebb20e3u);

inline uint8_t *put16(uint8_t *p, uint32_t v)
{
	p[0] = static_cast<uint8_t>(v >> 8);
	p[1] = static_cast<uint8_t>(v);
	return p + 2;
}

inline uint8_t *put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	return put16(p + 2, v);
}

inline uint8_t *put64(uint8_t *p, uint64_t v)
{
	put32(p, static_cast<uint32_t>(v >> 32));
	return put32(p + 4, static_cast<uint32_t>(v));
}

uint16_t ipv4_checksum(const uint8_t *h)
{
	uint32_t sum = 0;
	for (uint32_t i = 0; i < kIpBytes; i += 2)
		sum += static_cast<uint32_t>(h[i] << 8 | h[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return static_cast<uint16_t>(~sum);
}

/* RoCE v2's entropy: the QP number folded into the 14 bits above 0xc000, as rdma-core
 * folds a flow label into a source port (rdma_flow_label_to_udp_sport). */
inline uint16_t udp_sport(uint32_t qpn)
{
	return static_cast<uint16_t>(0xc000 | ((qpn ^ (qpn >> 14)) & 0x3fff));
}

/* The bytes that no record changes: MACs, EtherType, IPv4's constants, UDP's port. */
void frame_init(uint8_t *f, in_addr src, in_addr dst)
{
	static const uint8_t macs[12] = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01};   // locally administered
	memcpy(f, macs, sizeof(macs));
	put16(f + 12, 0x0800);
	uint8_t *ip = f + kEthBytes;
	ip[0] = 0x45;                  // IPv4, 20-byte header
	ip[1] = 0;                     // TOS
	put16(ip + 4, 0);              // identification
	put16(ip + 6, 0x4000);         // don't fragment
	ip[8] = 64;                    // TTL
	ip[9] = 17;                    // UDP
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	uint8_t *udp = ip + kIpBytes;
	put16(udp + 2, kRoceV2Port);
	put16(udp + 6, 0);             // no UDP checksum (RoCE v2 over IPv4 sends none)
}

/* BTH and the extended headers; returns where the payload goes. */
uint8_t *put_transport(uint8_t *p, const CaptureMsg &m, uint32_t pad)
{
	*p++ = m.opcode;
	*p++ = static_cast<uint8_t>(pad << 4);   // SE 0, MigReq 0, PadCnt, TVer 0
	p = put16(p, 0xffff);                      // default P_Key
	p = put32(p, m.qpn & 0xffffff);            // reserved byte 0, DestQP
	p = put32(p, static_cast<uint32_t>(m.seq & 0xffffff));   // AckReq 0, PSN
	if (m.hdrs & kCaptureReth) {
		p = put64(p, m.remote_addr);
		p = put32(p, m.rkey);
		p = put32(p, m.len);
	}
	if (m.hdrs & kCaptureAtomic) {
		p = put64(p, m.remote_addr);
		p = put32(p, m.rkey);
		p = put64(p, m.swap_add);
		p = put64(p, m.compare);
	}
	if (m.hdrs & kCaptureImm)
		p = put32(p, m.imm);
	return p;
}

void put_lengths(uint8_t *f, uint64_t ip_len, uint32_t qpn)
{
	uint8_t *ip = f + kEthBytes;
	put16(ip + 2, static_cast<uint32_t>(std::min<uint64_t>(ip_len, kIpMaxBytes)));
	put16(ip + 10, 0);
	put16(ip + 10, ipv4_checksum(ip));
	uint8_t *udp = ip + kIpBytes;
	put16(udp, udp_sport(qpn));
	put16(udp + 4, static_cast<uint32_t>(std::min<uint64_t>(ip_len, kIpMaxBytes) - kIpBytes));
}

int fail(std::string *err, const std::string &path, const char *what, int e)
{
	if (err)
		*err = "capture file " + path + ": " + (what ? std::string(what) + ": " : "") + strerror(e);
	return -e;
}

} // namespace

int capture_hdrs_of(uint8_t opcode)
{
	if (opcode > 0x3f)   // RC 0x00-0x1f and UC 0x20-0x3f only
		return -1;
	bool uc = opcode >= 0x20;
	switch (opcode & 0x1f) {
	case 0x00: case 0x01: case 0x02: case 0x04:    // SEND first, middle, last, only
		return kCaptureData;
	case 0x03: case 0x05:                           // SEND last, only with immediate
		return kCaptureData | kCaptureImm;
	case 0x06: case 0x0a:                           // RDMA WRITE first, only
		return kCaptureReth | kCaptureData;
	case 0x07: case 0x08:                           // RDMA WRITE middle, last
		return kCaptureData;
	case 0x09:                                      // RDMA WRITE last with immediate
		return kCaptureData | kCaptureImm;
	case 0x0b:                                      // RDMA WRITE only with immediate
		return kCaptureReth | kCaptureImm | kCaptureData;
	}
	if (uc)   // UC has neither reads nor atomics
		return -1;
	switch (opcode) {
	case 0x0c:                                      // RDMA READ request
		return kCaptureReth;
	case 0x13: case 0x14:                           // compare-and-swap, fetch-and-add
		return kCaptureAtomic;
	}
	return -1;   // read responses and ACKs (AETH), UD (DETH), invalidates, CNPs
}

uint32_t roce_icrc(const uint8_t *ip, size_t len)
{
	uint8_t masked[kIpBytes + kUdpBytes + kBthBytes];
	memcpy(masked, ip, sizeof(masked));
	masked[1] = 0xff;                          // TOS
	masked[8] = 0xff;                          // TTL
	masked[10] = masked[11] = 0xff;            // header checksum
	masked[kIpBytes + 6] = masked[kIpBytes + 7] = 0xff;   // UDP checksum
	masked[kIpBytes + kUdpBytes + 4] = 0xff;   // BTH: FECN, BECN, reserved
	uint32_t crc = crc32_update(0xffffffffu, kOnes, sizeof(kOnes));
	crc = crc32_update(crc, masked, sizeof(masked));
	crc = crc32_update(crc, ip + sizeof(masked), len - sizeof(masked));
	return ~crc;
}

int pcap_writer_open(PcapWriter *w, const char *path, in_addr src, in_addr dst, uint32_t snaplen,
		     std::string *err)
{
	w->path = path;
	if (snaplen > kCaptureSnaplenMax) {
		if (err)
			*err = "capture file " + w->path + ": snaplen " + std::to_string(snaplen) +
			       " above the most a record keeps (" + std::to_string(kCaptureSnaplenMax) + ")";
		return -EINVAL;
	}
	uint32_t frame_bytes = kCaptureHdrMaxBytes + snaplen + 3 + kIcrcBytes;
	w->frame = std::make_unique<uint8_t[]>(frame_bytes);
	w->iobuf = std::make_unique<char[]>(kIoBufBytes);
	w->snaplen = snaplen;
	w->src = src;
	w->dst = dst;
	w->error = 0;
	w->records = w->truncated = w->failed = 0;
	frame_init(w->frame.get(), src, dst);

	w->file = fopen(path, "wb");
	if (!w->file)
		return fail(err, w->path, nullptr, errno);
	__fsetlocking(w->file, FSETLOCKING_BYCALLER);   // one lcore writes
	if (setvbuf(w->file, w->iobuf.get(), _IOFBF, kIoBufBytes) != 0) {
		int e = errno;
		fclose(w->file);
		w->file = nullptr;
		return fail(err, w->path, "setvbuf", e);
	}
	w->dead = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, static_cast<int>(frame_bytes),
							PCAP_TSTAMP_PRECISION_NANO);
	if (!w->dead) {
		fclose(w->file);
		w->file = nullptr;
		return fail(err, w->path, "pcap_open_dead", ENOMEM);
	}
	w->dumper = pcap_dump_fopen(w->dead, w->file);
	if (!w->dumper) {
		/* libpcap closed the file when it could not write the header. */
		if (err)
			*err = "capture file " + w->path + ": " + pcap_geterr(w->dead);
		w->file = nullptr;
		pcap_close(w->dead);
		w->dead = nullptr;
		return -EIO;
	}
	/* A full disk or a read-only file shows now rather than at the first MiB. */
	if (pcap_dump_flush(w->dumper) != 0) {
		int e = errno;
		std::string again;
		pcap_writer_close(w, &again);   // fails the same way: the flush's errno is the cause
		return fail(err, w->path, nullptr, e);
	}
	return 0;
}

int pcap_writer_record(PcapWriter *w, const CaptureMsg &m)
{
	if (w->error) {
		w->failed++;
		return -1;
	}
	uint8_t *f = w->frame.get();
	uint32_t paylen = (m.hdrs & kCaptureData) ? m.len : 0;
	uint32_t pad = (4 - (paylen & 3)) & 3;
	uint8_t *p = put_transport(f + kBthAt, m, pad);
	uint32_t hdr_bytes = static_cast<uint32_t>(p - f);
	uint64_t wire = uint64_t{hdr_bytes} + paylen + pad + kIcrcBytes;
	put_lengths(f, wire - kEthBytes, m.qpn);

	uint32_t kept = std::min(paylen, w->snaplen);
	if (kept)
		memcpy(p, m.payload, kept);
	uint32_t caplen;
	if (kept == paylen) {
		memset(p + paylen, 0, pad);
		uint8_t *icrc = p + paylen + pad;
		uint32_t c = roce_icrc(f + kEthBytes, static_cast<size_t>(icrc - f) - kEthBytes);
		for (int i = 0; i < 4; i++)
			icrc[i] = static_cast<uint8_t>(c >> (8 * i));
		caplen = static_cast<uint32_t>(wire);
	} else {
		caplen = hdr_bytes + kept;
		w->truncated++;
	}

	pcap_pkthdr h{};
	uint64_t ns = m.time_ns;
	if (ns == 0) {
		timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
	}
	h.ts.tv_sec = static_cast<time_t>(ns / 1000000000u);
	h.ts.tv_usec = static_cast<suseconds_t>(ns % 1000000000u);   // ns: the file's precision
	h.caplen = caplen;
	h.len = static_cast<uint32_t>(std::min<uint64_t>(wire, UINT32_MAX));
	pcap_dump(reinterpret_cast<u_char *>(w->dumper), &h, f);
	if (ferror_unlocked(w->file)) {
		w->error = errno ? errno : EIO;
		w->failed++;
		return -1;
	}
	w->records++;
	return 0;
}

int pcap_writer_flush(PcapWriter *w, std::string *err)
{
	if (w->error)
		return fail(err, w->path, "write", w->error);
	if (pcap_dump_flush(w->dumper) != 0) {
		w->error = errno ? errno : EIO;
		return fail(err, w->path, "write", w->error);
	}
	return 0;
}

int pcap_writer_close(PcapWriter *w, std::string *err)
{
	int ret = 0;
	if (w->dumper) {
		ret = pcap_writer_flush(w, err);
		pcap_dump_close(w->dumper);   // fclose; what it could lose, the flush wrote
		w->dumper = nullptr;
		w->file = nullptr;
	}
	if (w->dead) {
		pcap_close(w->dead);
		w->dead = nullptr;
	}
	if (ret == 0 && w->failed)
		ret = fail(err, w->path, "write", w->error);
	return ret;
}

} // namespace rp
