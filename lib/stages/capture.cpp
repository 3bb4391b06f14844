/* capture: writes each message of its input ring as one record of a pcap file, a RoCE
 * v2 packet of its flow's verb (lib/capture), then passes it on or frees it: what
 * dumpcap and pdump are to DPDK ports, for a pipeline's rings. A message's key says
 * which QP of its flow it went over and its sequence there (pattern.h's msg_key): the
 * record's destination QP and PSN. A file that cannot keep up holds the ring (the
 * stages before it wait); a record that cannot be written fails the run, named. */
#include "pipeline/stage_kind.h"
#include "stages/stages.h"

#include "capture/pcap_writer.h"

namespace rp {

namespace {

struct CaptureState : StageState {
	PcapWriter w;
	CaptureMsg m;                     // the flow's opcode; seq, QP and payload per message
	std::vector<uint32_t> qpns;       // the flow's receiving QPs, by index
	std::string err;                  // the close's, for the summary
	~CaptureState() override { pcap_writer_close(&w, &err); }
};

/* The BTH opcode a flow's messages travel as (its verb's "only" opcode; UC's range). */
int wire_opcode(const GraphFlow &f)
{
	const uint8_t rc = verb_info(f.params.verb).bth_opcode;
	return f.params.uc ? 0x20 | rc : rc;
}

void record(CaptureState *cs, void *msg, uint32_t bytes)
{
	uint64_t key;
	memcpy(&key, msg, sizeof(key));
	const uint32_t qi = static_cast<uint32_t>(key >> 44);
	cs->m.qpn = qi < cs->qpns.size() ? cs->qpns[qi] : cs->qpns[0];
	cs->m.seq = key & ((1ull << 44) - 1);
	cs->m.payload = msg;
	cs->m.len = bytes;
	cs->m.time_ns = 0;
	pcap_writer_record(&cs->w, cs->m);
}

/* Its ring drained and its producers done: the file is flushed and closed here, on
 * its lcore; a failure fails the stage (and so the run). */
uint32_t capture_idle(Stage *s)
{
	stage_idle(s);
	if (s->done.load(std::memory_order_relaxed)) {
		auto *cs = static_cast<CaptureState *>(s->ctx);
		if (pcap_writer_close(&cs->w, &cs->err) != 0 || cs->w.failed)
			s->rc = -1;
	}
	return 0;
}

uint32_t capture_burst(Stage *s)
{
	if (s->out && !stage_flush_held(s))
		return 0;
	void *msgs[kStageBurst];
	unsigned n = rte_ring_dequeue_burst(s->in, msgs, kStageBurst, nullptr);
	if (n == 0)
		return capture_idle(s);
	auto *cs = static_cast<CaptureState *>(s->ctx);
	for (unsigned i = 0; i < n; i++)
		record(cs, msgs[i], s->msg_bytes);
	s->st.msgs += n;
	s->st.bursts++;
	if (s->out)
		stage_pass_on(s, msgs, n);
	else
		rte_mempool_put_bulk(s->pool, msgs, n);
	return n;
}

in_addr gid_ipv4(const ibv_gid &gid)
{
	in_addr a{};
	memcpy(&a, gid.raw + 12, sizeof(a));
	return a;
}

/* The flow its input's messages belong to (one: input_source checked that). */
int capture_wire(Graph *g, GraphStage *s, const StageInput &in, std::string *err)
{
	if (stage_wire_input(g, s, in, err) != 0)
		return -1;
	const GraphFlow &f = *s->origins[0];
	auto cs = std::make_unique<CaptureState>();
	cs->m.opcode = static_cast<uint8_t>(wire_opcode(f));
	cs->m.hdrs = static_cast<uint8_t>(capture_hdrs_of(cs->m.opcode));
	for (uint32_t i = 0; i < (f.rx ? f.responder.nqps : f.requester.nqps); i++)
		cs->qpns.push_back(f.rx ? f.responder.qps[i].qp->qp_num : f.requester.qps[i].qp->qp_num);
	const in_addr src = gid_ipv4(f.tx ? f.tx->dev->gid : f.remote->peer_gid);
	const in_addr dst = gid_ipv4(f.rx ? f.rx->dev->gid : f.remote->peer_gid);
	const StageConf &sc = *s->conf;
	if (pcap_writer_open(&cs->w, sc.file.c_str(), src, dst, sc.snaplen ? sc.snaplen : kCaptureSnaplenDefault, err) != 0) {
		*err = stage_path(*g, *s) + *err;
		return -1;
	}
	s->st.ctx = cs.get();
	s->state = std::move(cs);
	return 0;
}

/* For the summary: records written, cut to the snaplen, and the file's error if any. */
std::string capture_describe(const GraphStage &s)
{
	const auto *cs = static_cast<const CaptureState *>(s.st.ctx);
	std::string d = stage_describe_output(s);
	if (cs == nullptr)
		return d;
	d += ", " + std::to_string(cs->w.records) + " records to " + cs->w.path;
	if (cs->w.truncated)
		d += " (" + std::to_string(cs->w.truncated) + " cut to " + std::to_string(cs->w.snaplen) + " B of payload)";
	if (cs->w.failed || !cs->err.empty())
		d += ", " + std::to_string(cs->w.failed) + " not written: " + cs->err;
	return d;
}

} // namespace

const StageOps kCaptureStage = {"capture", capture_burst};

namespace {

const StageKindOps kCaptureOps = {.ops = &kCaptureStage, .wire = capture_wire, .describe = capture_describe,
};

const StageKindInfo kCaptureKind = {
	.name = "capture", .article = "a", .in = kOneRing, .out = kOptionalRing,
	.needs_flow = false, .needs_io = false, .end = FlowEnd::none, .source = BufferSource::upstream,
	.checks_payload = false, .writes_file = true,
	.what = "writes each message as a RoCE v2 packet of a pcap file (tshark, Wireshark read it), then passes it on or frees it",
	.ops = &kCaptureOps,
};

} // namespace

RP_STAGE_KIND_REGISTER(kCaptureKind)

} // namespace rp
