/* Capture files of RoCE v2 packets: one record per message, as Ethernet / IPv4 / UDP
 * 4791 / BTH / RETH, AtomicETH or ImmDt / payload / pad / ICRC, which tshark's and
 * Wireshark's InfiniBand dissector decode. A capture stage opens one writer at setup
 * and records from its lcore; nothing here allocates after open.
 *
 * libpcap (pcap_dump_fopen, pcap_dump), not DPDK's rte_pcapng: rte_pcapng copies from
 * mbufs of a port (rte_pcapng_copy wants an mbuf and a port id), and our messages are
 * plain mempool buffers whose wire headers we write ourselves. */
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

struct pcap;
struct pcap_dumper;

namespace rp {

/* Headers a BTH opcode carries after the BTH (IBA 9.2-9.4), and whether the payload is
 * on the wire (not on a read request or an atomic, whose length is the RETH's). */
inline constexpr uint8_t kCaptureReth = 1u << 0;     // RDMA writes, read requests
inline constexpr uint8_t kCaptureAtomic = 1u << 1;   // compare-and-swap, fetch-and-add
inline constexpr uint8_t kCaptureImm = 1u << 2;      // ImmDt, after RETH when both
inline constexpr uint8_t kCaptureData = 1u << 3;     // payload follows the headers

/* IBA's headers for `opcode` (RC 0x00-0x14, UC 0x20-0x2b), -1 for the opcodes a record
 * cannot be (read responses, ACKs, UD, RD, invalidates). For setup: map a verb once. */
int capture_hdrs_of(uint8_t opcode);

/* Payload bytes a record keeps by default: a message's first 128 bytes show its
 * pattern and sequence number, and a record stays under 240 bytes (a million: 240 MB). */
inline constexpr uint32_t kCaptureSnaplenDefault = 128;
/* The most a record can keep: a whole message with the largest headers (AtomicETH's
 * 28 bytes, more than RETH and ImmDt's 20), pad and ICRC still fits IPv4's 65,535. */
inline constexpr uint32_t kCaptureHdrMaxBytes = 14 + 20 + 8 + 12 + 28;   // Eth IPv4 UDP BTH AtomicETH
inline constexpr uint32_t kCaptureSnaplenMax = 65535 - (kCaptureHdrMaxBytes - 14) - 3 - 4;

/* One message. A stage keeps one per flow and fills the fields that change. */
struct CaptureMsg {
	uint8_t opcode = 0;         // BTH opcode, e.g. 0x04 RC SEND_ONLY, 0x2a UC RDMA_WRITE_ONLY
	uint8_t hdrs = 0;           // kCapture* flags, usually capture_hdrs_of(opcode)
	uint32_t qpn = 0;           // destination QP (24 bits); the UDP source port derives from it
	uint64_t seq = 0;           // message sequence number; the PSN is seq mod 2^24
	const void *payload = nullptr;
	uint32_t len = 0;           // message bytes: the payload's and the RETH's DMA length
	uint32_t imm = 0;           // ImmDt, host order
	uint64_t remote_addr = 0;   // RETH or AtomicETH virtual address
	uint32_t rkey = 0;          // RETH or AtomicETH R_Key
	uint64_t swap_add = 0;      // AtomicETH swap (or add) data
	uint64_t compare = 0;       // AtomicETH compare data
	uint64_t time_ns = 0;       // record's time, ns since the epoch; 0: now (CLOCK_REALTIME)
};

/* Owned by the lcore that records: stdio's locking is off on its file. */
struct PcapWriter {
	std::string path;
	FILE *file = nullptr;
	pcap *dead = nullptr;
	pcap_dumper *dumper = nullptr;
	std::unique_ptr<uint8_t[]> frame;   // one record: headers, kept payload, pad, ICRC
	std::unique_ptr<char[]> iobuf;      // stdio's buffer, given at open
	in_addr src{}, dst{};
	uint32_t snaplen = 0;
	int error = 0;                      // errno of the first failed write, 0 while none
	uint64_t records = 0;               // records written (failed writes not counted)
	uint64_t truncated = 0;             // records that kept snaplen bytes of a longer payload
	uint64_t failed = 0;                // records not written: the file had failed
};

/* Creates (or truncates) `path` as a pcap file of nanosecond Ethernet records from
 * `src` to `dst` (network order, e.g. the flow's GIDs' IPv4 addresses). snaplen is at
 * most kCaptureSnaplenMax. Returns 0, or -errno with *err naming the file and the cause
 * ("capture file /x/y.pcap: No such file or directory"). */
int pcap_writer_open(PcapWriter *w, const char *path, in_addr src, in_addr dst, uint32_t snaplen,
		     std::string *err);

/* Writes `m` as one record: its headers, its first snaplen payload bytes and, when the
 * whole payload is kept, its pad and real ICRC; the record's length is always the
 * packet's. A message whose packet would exceed 65,535 IPv4 bytes keeps that length in
 * the record but IPv4's and UDP's length fields say their maximum. Wireshark 4.0 shows
 * a cut record's headers, but names it "Invalid Packet Length from LRH! [Malformed
 * Packet]" in its Info column, as it does any RoCE capture taken with a snaplen.
 * Copies at most snaplen bytes and computes the ICRC only over whole records; the only
 * system call is stdio's write(2) of each full MiB. Returns 0, or -1 once a write has
 * failed (w->error; the message is counted in w->failed). */
int pcap_writer_record(PcapWriter *w, const CaptureMsg &m);

/* Pushes buffered records to the file. Returns 0 or -errno with *err naming the file. */
int pcap_writer_flush(PcapWriter *w, std::string *err);

/* Flushes and closes; a writer never opened, or already closed, closes as 0. Returns 0
 * or -errno with *err naming the file when a record or the flush failed (libpcap's
 * pcap_dump_close does not return fclose's result: the flush before it does). */
int pcap_writer_close(PcapWriter *w, std::string *err);

/* RoCE v2's ICRC of an IPv4 packet, `ip` to the end of its pad: CRC-32 over 8 bytes of
 * ones (the LRH RoCE has not), the IPv4 header with TOS, TTL and checksum as ones, UDP
 * with its checksum as ones, the BTH with its reserved byte (FECN, BECN) as ones, then
 * the rest. The value goes on the wire least significant byte first. */
uint32_t roce_icrc(const uint8_t *ip, size_t len);

} // namespace rp
