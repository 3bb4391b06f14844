/* The capture writer: its ICRC against a packet a NIC sent, a file of records of every
 * opcode kind read back by tshark (each record's BTH, RETH, ImmDt, AtomicETH, lengths
 * and ICRC, and no malformed packet or warning) and by libpcap, and the files it
 * refuses, each named with its cause. Without tshark the test fails under CI, else
 * skips. */
#include "capture/pcap_writer.h"

#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cmocka_cpp.h"

namespace {

using rp::CaptureMsg;
using rp::PcapWriter;

/* A RoCE v2 CNP a ConnectX-4 Lx sent (as scapy's RoCE tests quote it): IPv4 TOS 0xc2,
 * TTL 64, no UDP checksum; its last 4 bytes are the ICRC the NIC computed. */
const uint8_t kCnp[] = {
	0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00, 0x45, 0xc2,
	0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00, 0x11, 0x01, 0x0a, 0x00,
	0x12, 0x01, 0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x81, 0x00, 0xff, 0xff, 0x40, 0x00,
	0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x82, 0xfd, 0x00, 0x2a,
};

void icrc_matches_a_nic(void **)
{
	const size_t ip_len = sizeof(kCnp) - 14 - 4;
	uint32_t c = rp::roce_icrc(kCnp + 14, ip_len);
	const uint8_t *wire = kCnp + sizeof(kCnp) - 4;
	for (int i = 0; i < 4; i++)
		assert_int_equal((c >> (8 * i)) & 0xff, wire[i]);
	/* Fields the ICRC leaves out (TOS, TTL, FECN/BECN) do not change it; the PSN does. */
	uint8_t p[sizeof(kCnp)];
	memcpy(p, kCnp, sizeof(p));
	p[14 + 1] = 0x00;
	p[14 + 8] = 3;
	p[42 + 4] = 0x00;
	assert_int_equal(rp::roce_icrc(p + 14, ip_len), c);
	p[42 + 11] ^= 1;
	assert_int_not_equal(rp::roce_icrc(p + 14, ip_len), c);
}

void headers_follow_the_opcode(void **)
{
	using namespace rp;
	assert_int_equal(capture_hdrs_of(0x04), kCaptureData);                               // RC SEND only
	assert_int_equal(capture_hdrs_of(0x05), kCaptureData | kCaptureImm);
	assert_int_equal(capture_hdrs_of(0x0a), kCaptureReth | kCaptureData);                // RC WRITE only
	assert_int_equal(capture_hdrs_of(0x0b), kCaptureReth | kCaptureImm | kCaptureData);
	assert_int_equal(capture_hdrs_of(0x0c), kCaptureReth);                               // READ request
	assert_int_equal(capture_hdrs_of(0x13), kCaptureAtomic);
	assert_int_equal(capture_hdrs_of(0x14), kCaptureAtomic);
	assert_int_equal(capture_hdrs_of(0x24), kCaptureData);                               // UC SEND only
	assert_int_equal(capture_hdrs_of(0x2b), kCaptureReth | kCaptureImm | kCaptureData);  // UC WRITE only imm
	for (uint8_t op : {0x11, 0x12, 0x10, 0x2c, 0x33, 0x34, 0x64, 0x81})   // ACKs, read responses, UC read/atomics, UD, CNP
		assert_int_equal(capture_hdrs_of(op), -1);
}

bool have_tshark()
{
	if (system("command -v tshark >/dev/null 2>&1") == 0)
		return true;
	const char *ci = getenv("CI");
	if (ci && *ci)
		fail_msg("tshark missing (tools/install-deps installs it)");
	return false;
}

/* stdout of `cmd`, which must exit 0; its stderr is shown when it does not. */
std::string run(const std::string &cmd)
{
	std::string errf = std::string(P_tmpdir) + "/rp_pcap_stderr." + std::to_string(getpid());
	FILE *p = popen((cmd + " 2>" + errf).c_str(), "r");
	assert_non_null(p);
	std::string out;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		out.append(buf, n);
	int st = pclose(p);
	if (st != 0) {
		std::string cat = "cat " + errf + " >&2";
		(void)!system(cat.c_str());
		fail_msg("%s: exit status %d", cmd.c_str(), st);
	}
	unlink(errf.c_str());
	return out;
}

std::vector<std::vector<std::string>> rows(const std::string &out)
{
	std::vector<std::vector<std::string>> r;
	size_t at = 0;
	while (at < out.size()) {
		size_t nl = out.find('\n', at);
		std::string line = out.substr(at, nl - at);
		at = nl == std::string::npos ? out.size() : nl + 1;
		std::vector<std::string> f;
		size_t s = 0;
		for (;;) {
			size_t tab = line.find('\t', s);
			f.push_back(line.substr(s, tab - s));
			if (tab == std::string::npos)
				break;
			s = tab + 1;
		}
		r.push_back(f);
	}
	return r;
}

struct Case {
	uint8_t opcode;
	uint32_t qpn;
	uint64_t seq;
	uint32_t len;
	uint32_t imm;
};

/* Every opcode kind a flow sends, RC and UC; PSNs that wrap; lengths with each pad;
 * a payload longer than snaplen, and one longer than an IPv4 packet. */
const Case kCases[] = {
	{0x04, 0x000011, 0, 64, 0},                    // RC SEND only
	{0x05, 0x000012, 1, 61, 0xdeadbeef},           // RC SEND only with immediate, pad 3
	{0x0a, 0xabcdef, (1u << 24) + 5, 130, 0},      // RC WRITE only: PSN wraps; kept 128 of 130
	{0x0b, 0x000100, 0xffffff, 6, 0x01020304},     // RC WRITE only with immediate, pad 2
	{0x0c, 0x000101, 7, 4096, 0},                  // RC READ request: no payload on the wire
	{0x13, 0x000102, 8, 8, 0},                     // RC compare-and-swap
	{0x14, 0x000103, 9, 8, 0},                     // RC fetch-and-add
	{0x24, 0x000200, 10, 0, 0},                    // UC SEND only, empty
	{0x2a, 0x000201, 11, 100000, 0},               // UC WRITE only: more than IPv4 carries
	{0x2b, 0x000202, 12, 127, 0x0badcafe},         // UC WRITE only with immediate, pad 1
};
constexpr uint32_t kSnap = 128;

std::string tmp_path(const char *name)
{
	return std::string(P_tmpdir) + "/rp_" + name + "." + std::to_string(getpid()) + ".pcap";
}

void write_cases(const std::string &path, std::vector<uint8_t> *payload)
{
	payload->resize(100000);
	for (size_t i = 0; i < payload->size(); i++)
		(*payload)[i] = static_cast<uint8_t>(i * 7 + 1);
	in_addr src, dst;
	inet_pton(AF_INET, "192.0.2.1", &src);
	inet_pton(AF_INET, "192.0.2.2", &dst);
	PcapWriter w;
	std::string err;
	assert_int_equal(rp::pcap_writer_open(&w, path.c_str(), src, dst, kSnap, &err), 0);
	for (const Case &c : kCases) {
		CaptureMsg m;
		m.opcode = c.opcode;
		int h = rp::capture_hdrs_of(c.opcode);
		assert_true(h >= 0);
		m.hdrs = static_cast<uint8_t>(h);
		m.qpn = c.qpn;
		m.seq = c.seq;
		m.payload = payload->data();
		m.len = c.len;
		m.imm = c.imm;
		m.remote_addr = 0x7f0000001000 + c.seq;
		m.rkey = 0x1234;
		m.swap_add = 0x1111;
		m.compare = 0x2222;
		m.time_ns = 1700000000123456789ull + c.seq;
		assert_int_equal(rp::pcap_writer_record(&w, m), 0);
	}
	assert_int_equal(w.records, sizeof(kCases) / sizeof(kCases[0]));
	assert_int_equal(w.truncated, 2);
	assert_int_equal(rp::pcap_writer_close(&w, &err), 0);
}

/* Bytes of the packet each case makes: headers, payload, pad, ICRC. */
uint32_t wire_bytes(const Case &c)
{
	int h = rp::capture_hdrs_of(c.opcode);
	uint32_t b = 14 + 20 + 8 + 12;
	b += (h & rp::kCaptureReth) ? 16 : 0;
	b += (h & rp::kCaptureAtomic) ? 28 : 0;
	b += (h & rp::kCaptureImm) ? 4 : 0;
	uint32_t pay = (h & rp::kCaptureData) ? c.len : 0;
	return b + pay + ((4 - (pay & 3)) & 3) + 4;
}

void tshark_decodes_every_record(void **)
{
	if (!have_tshark())
		skip();
	std::string path = tmp_path("decode");
	std::vector<uint8_t> payload;
	write_cases(path, &payload);

	std::string out = run("tshark -n -o ip.check_checksum:TRUE -r " + path +
			      " -T fields -E occurrence=f"
			      " -e infiniband.bth.opcode -e infiniband.bth.destqp -e infiniband.bth.psn"
			      " -e infiniband.bth.padcnt -e infiniband.reth.dmalen -e infiniband.reth.r_key"
			      " -e infiniband.immdt -e infiniband.atomiceth.swapdt -e infiniband.atomiceth.cmpdt"
			      " -e udp.srcport -e udp.dstport -e ip.src -e ip.dst -e ip.checksum.status"
			      " -e frame.len -e frame.cap_len -e infiniband.invariant.crc -e frame.time_epoch"
			      " -e _ws.col.Info");
	auto r = rows(out);
	assert_int_equal(r.size(), sizeof(kCases) / sizeof(kCases[0]));
	for (size_t i = 0; i < r.size(); i++) {
		const Case &c = kCases[i];
		const auto &f = r[i];
		assert_int_equal(f.size(), 19);
		int h = rp::capture_hdrs_of(c.opcode);
		uint32_t pay = (h & rp::kCaptureData) ? c.len : 0;
		assert_string_equal(f[0].c_str(), std::to_string(c.opcode).c_str());
		char qpn[16];
		snprintf(qpn, sizeof(qpn), "0x%06x", c.qpn);
		assert_string_equal(f[1].c_str(), qpn);
		assert_string_equal(f[2].c_str(), std::to_string(c.seq % (1u << 24)).c_str());
		assert_string_equal(f[3].c_str(), std::to_string((4 - (pay & 3)) & 3).c_str());
		assert_string_equal(f[4].c_str(), (h & rp::kCaptureReth) ? std::to_string(c.len).c_str() : "");
		// the dissector shows AtomicETH's R_Key as the RETH's field
		assert_string_equal(f[5].c_str(), (h & (rp::kCaptureReth | rp::kCaptureAtomic)) ? "0x00001234" : "");
		char imm[16] = "";
		if (h & rp::kCaptureImm)
			snprintf(imm, sizeof(imm), "%08x", c.imm);
		assert_string_equal(f[6].c_str(), imm);
		assert_string_equal(f[7].c_str(), (h & rp::kCaptureAtomic) ? "4369" : "");   // 0x1111
		assert_string_equal(f[8].c_str(), (h & rp::kCaptureAtomic) ? "8738" : "");   // 0x2222
		uint32_t sport = std::stoul(f[9]);
		assert_int_equal(sport, 0xc000 | ((c.qpn ^ (c.qpn >> 14)) & 0x3fff));
		assert_string_equal(f[10].c_str(), "4791");
		assert_string_equal(f[11].c_str(), "192.0.2.1");
		assert_string_equal(f[12].c_str(), "192.0.2.2");
		assert_string_equal(f[13].c_str(), "1");   // good
		uint32_t wire = wire_bytes(c);
		assert_string_equal(f[14].c_str(), std::to_string(wire).c_str());
		bool whole = pay <= kSnap;
		assert_string_equal(f[15].c_str(), std::to_string(whole ? wire : wire - pay - ((4 - (pay & 3)) & 3) - 4 + kSnap).c_str());
		assert_true(whole ? !f[16].empty() : f[16].empty());   // the ICRC, when kept
		char ts[32];
		snprintf(ts, sizeof(ts), "1700000000.%09llu", static_cast<unsigned long long>(123456789 + c.seq));
		assert_string_equal(f[17].c_str(), ts);
		/* A whole record is named by its opcode. Wireshark 4.0 says "Invalid Packet
		 * Length from LRH!" of a cut one, as of any RoCE capture with a snaplen. */
		if (whole)
			assert_true(f[18].rfind(c.opcode < 0x20 ? "RC " : "UC ", 0) == 0 &&
				    f[18].find("Malformed") == std::string::npos);
	}

	/* No malformed packet, nor any warning or error of a dissector. */
	std::string bad = run("tshark -n -r " + path + " -Y '_ws.malformed || _ws.expert.severity >= 0x600000'");
	if (!bad.empty())
		fail_msg("tshark finds problems:\n%s", bad.c_str());
	unlink(path.c_str());
}

/* The bytes as libpcap reads them back: each whole record's ICRC is the packet's. */
void records_carry_their_icrc(void **)
{
	std::string path = tmp_path("icrc");
	std::vector<uint8_t> payload;
	write_cases(path, &payload);
	char eb[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, eb);
	assert_non_null(p);
	assert_int_equal(pcap_datalink(p), DLT_EN10MB);
	pcap_pkthdr *h;
	const u_char *d;
	size_t i = 0;
	while (pcap_next_ex(p, &h, &d) == 1) {
		assert_true(i < sizeof(kCases) / sizeof(kCases[0]));
		const Case &c = kCases[i++];
		assert_int_equal(h->len, wire_bytes(c));
		if (h->caplen < h->len)
			continue;
		uint32_t icrc = rp::roce_icrc(d + 14, h->caplen - 14 - 4);
		for (int k = 0; k < 4; k++)
			assert_int_equal(d[h->caplen - 4 + k], (icrc >> (8 * k)) & 0xff);
		/* The payload is the message's. */
		int hd = rp::capture_hdrs_of(c.opcode);
		if ((hd & rp::kCaptureData) && c.len)
			assert_memory_equal(d + h->caplen - 4 - ((4 - (c.len & 3)) & 3) - c.len, payload.data(), c.len);
	}
	assert_int_equal(i, sizeof(kCases) / sizeof(kCases[0]));
	pcap_close(p);
	unlink(path.c_str());
}

void refuse(const char *path, uint32_t snaplen, int want, const std::string &msg)
{
	PcapWriter w;
	std::string err;
	in_addr a{};
	assert_int_equal(rp::pcap_writer_open(&w, path, a, a, snaplen, &err), want);
	assert_string_equal(err.c_str(), msg.c_str());
	assert_int_equal(rp::pcap_writer_close(&w, &err), 0);   // nothing left open
}

void unwritable_files_are_named(void **)
{
	refuse("/nonexistent-rdmapipe/x.pcap", kSnap, -ENOENT,
	       "capture file /nonexistent-rdmapipe/x.pcap: No such file or directory");
	refuse(P_tmpdir, kSnap, -EISDIR, std::string("capture file ") + P_tmpdir + ": Is a directory");
	refuse("/dev/full", kSnap, -ENOSPC, "capture file /dev/full: No space left on device");
	refuse("/dev/null", rp::kCaptureSnaplenMax + 1, -EINVAL,
	       "capture file /dev/null: snaplen 65461 above the most a record keeps (65460)");
}

/* A write that fails mid-run (here the file-size limit) is counted, not lost: the
 * record says so, and the close names the file and the cause. */
void failed_writes_are_reported(void **)
{
	std::string path = tmp_path("efbig");
	rlimit old;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_IGN);
	PcapWriter w;
	std::string err;
	in_addr a{};
	assert_int_equal(rp::pcap_writer_open(&w, path.c_str(), a, a, 1024, &err), 0);
	rlimit small = {64 << 10, old.rlim_max};
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	std::vector<uint8_t> payload(1024);
	CaptureMsg m;
	m.opcode = 0x04;
	m.hdrs = rp::kCaptureData;
	m.payload = payload.data();
	m.len = 1024;
	int ret = 0;
	for (int i = 0; i < 4096 && ret == 0; i++) {   // 4 MiB: past the limit and stdio's buffer
		m.seq = static_cast<uint64_t>(i);
		ret = rp::pcap_writer_record(&w, m);
	}
	assert_int_equal(ret, -1);
	assert_int_equal(w.error, EFBIG);
	assert_int_equal(rp::pcap_writer_record(&w, m), -1);
	assert_int_equal(w.failed, 2);
	assert_int_equal(rp::pcap_writer_close(&w, &err), -EFBIG);
	assert_string_equal(err.c_str(), ("capture file " + path + ": write: File too large").c_str());
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	unlink(path.c_str());
}

} // namespace

int main()
{
	const CMUnitTest tests[] = {
		cmocka_unit_test(icrc_matches_a_nic),
		cmocka_unit_test(headers_follow_the_opcode),
		cmocka_unit_test(tshark_decodes_every_record),
		cmocka_unit_test(records_carry_their_icrc),
		cmocka_unit_test(unwritable_files_are_named),
		cmocka_unit_test(failed_writes_are_reported),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
