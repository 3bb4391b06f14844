/* The pipeline builder's plan (no device): which pipelines it runs, how it splits a
 * flow between its gen stages, what a fed flow sends, and the pipelines it refuses
 * because buffers would go back to the wrong pool or a ring carries what its consumer
 * cannot send. The completion router: each completion reaches the role owning its QP. */
#include "conf/cli_pipeline.h"
#include "conf/config.h"
#include "engine/cq_router.h"
#include "pipeline/graph.h"
#include "pipeline/graph_internal.h"
#include "pipeline/stage_kind.h"
#include "stages/stages.h"
#include "eal_for_tests.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include "cmocka_cpp.h"
#include "load_conf.h"

namespace {

const char *kHead = "version = 1;\n"
		    "devices = ( { name = \"rxe0\"; } );\n"
		    "pools = ( { name = \"p\"; elt_size = 256; count = 8192; } );\n"
		    "io_contexts = ( { lcore = 1; device = \"rxe0\"; }, { lcore = 0; device = \"rxe0\"; srq = 2048; } );\n";


/* Loads kHead + body; the plan's result and message in *err. */
struct Plan {
	rp::PipelineConf c;
	rp::Graph g;
	std::string err;
	int rc = -1;

	explicit Plan(const std::string &body, const char *head = kHead)
	{
		load(std::string(head) + body, &c);
		rc = rp::graph_plan(c, &g, &err);
	}
	rp::GraphStage *stage(const char *name)
	{
		for (auto &s : g.stages)
			if (s->conf->name == name)
				return s.get();
		return nullptr;
	}
};

/* A kind made here, as each file of lib/stages/ makes its own: its burst, its hooks and
 * its declaration, registered at load; nothing else in the program names it (issue 45:
 * adding a kind is one file). It counts the messages of its input ring and frees them. */
namespace tally {

uint32_t tally_burst(rp::Stage *s)
{
	void *msgs[rp::kStageBurst];
	unsigned n = rte_ring_dequeue_burst(s->in, msgs, rp::kStageBurst, nullptr);
	if (n == 0)
		return rp::stage_idle(s);
	s->st.msgs += n;
	s->st.bursts++;
	rte_mempool_put_bulk(s->pool, msgs, n);
	return n;
}

std::string tally_describe(const rp::GraphStage &s)
{
	return ", tallied " + std::to_string(s.st.st.msgs * s.st.msg_bytes) + " B";
}

const rp::StageOps kTallyStage = {"tally", tally_burst};
const rp::StageKindOps kTallyOps = {.ops = &kTallyStage, .wire = rp::stage_wire_input, .describe = tally_describe};
const rp::StageKindInfo kTallyKind = {
	.name = "tally", .article = "a", .in = rp::kOneRing, .out = rp::kNoRing,
	.needs_flow = false, .needs_io = false, .end = rp::FlowEnd::none, .source = rp::BufferSource::upstream,
	.checks_payload = false, .writes_file = false,
	.what = "counts messages and frees them (a unit test's kind)",
	.ops = &kTallyOps,
};
RP_STAGE_KIND_REGISTER(kTallyKind)

} // namespace tally

void gens_split_their_flow(void **)
{
	Plan p("flows = ( { name = \"f\"; verb = \"write_imm\"; size = 64; messages = 40001; pool = \"p\"; } );\n"
	       "rings = ( { name = \"r\"; size = 512; multi_producer = true; } );\n"
	       "stages = ( { name = \"g0\"; kind = \"gen\"; lcore = 0; flow = \"f\"; output = \"r\"; },\n"
	       "  { name = \"g1\"; kind = \"gen\"; lcore = 1; flow = \"f\"; output = \"r\"; },\n"
	       "  { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; input = \"r\"; },\n"
	       "  { name = \"rx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"f\"; } );\n");
	assert_int_equal(p.rc, 0);
	assert_int_equal(p.stage("g0")->st.limit, 20001);
	assert_int_equal(p.stage("g1")->st.limit, 20000);
	assert_true(p.g.flows[0]->fed);
	assert_string_equal(p.g.flows[0]->form->name, "loopback");   // its shape's row, chosen once
	assert_int_equal(p.g.flows[0]->params.messages, 40001);
	assert_true(p.g.flows[0]->params.tx_gen_stage);   // the gens keep the rate
	assert_int_equal(p.g.lcores.size(), 2);
}

void a_fed_flow_sends_what_arrives(void **)
{
	const std::string stages = "rings = ( { name = \"a\"; size = 256; }, { name = \"b\"; size = 256; } );\n"
				   "stages = ( { name = \"src\"; kind = \"rdma_tx\"; lcore = 1; flow = \"in\"; },\n"
				   "  { name = \"rx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"in\"; output = \"a\"; },\n"
				   "  { name = \"v\"; kind = \"verify\"; lcore = 1; input = \"a\"; output = \"b\"; },\n"
				   "  { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"out\"; input = \"b\"; },\n"
				   "  { name = \"dst\"; kind = \"rdma_rx\"; lcore = 0; flow = \"out\"; } );\n";
	Plan ok("flows = ( { name = \"in\"; verb = \"send\"; size = 256; messages = 7000; pool = \"p\"; },\n"
		"  { name = \"out\"; verb = \"write\"; size = 256; pool = \"p\"; } );\n" + stages);
	assert_int_equal(ok.rc, 0);
	assert_int_equal(ok.g.flows[1]->params.messages, 7000);
	assert_true(ok.g.flows[0]->handed_on);
	assert_true(ok.g.flows[1]->fed);
	assert_int_equal(ok.stage("v")->origins.size(), 1);
	assert_ptr_equal(ok.stage("v")->origins[0], ok.g.flows[0].get());

	Plan size("flows = ( { name = \"in\"; verb = \"send\"; size = 256; messages = 7000; pool = \"p\"; },\n"
		  "  { name = \"out\"; verb = \"send\"; size = 128; pool = \"p\"; } );\n" + stages);
	assert_int_equal(size.rc, -1);
	assert_non_null(strstr(size.err.c_str(), "flows.[1].size: flow 'out' sends what its ring brings: 256 B messages"));

	/* Fed from a duration flow: no count of its own, it sends until its input ends. */
	Plan dur("flows = ( { name = \"in\"; verb = \"send\"; size = 256; duration = 3; pool = \"p\"; },\n"
		 "  { name = \"out\"; verb = \"send\"; size = 256; window = 256; pool = \"p\"; } );\n" + stages);
	assert_int_equal(dur.rc, 0);
	assert_int_equal(dur.g.flows[1]->params.messages, 0);
	assert_int_equal(dur.g.flows[1]->params.duration_s, 0);
	assert_true(dur.g.flows[1]->params.tx_count_from_input);
	assert_false(dur.g.flows[0]->params.tx_count_from_input);
	Plan durn("flows = ( { name = \"in\"; verb = \"send\"; size = 256; duration = 3; pool = \"p\"; },\n"
		  "  { name = \"out\"; verb = \"send\"; size = 256; messages = 50; pool = \"p\"; } );\n" + stages);
	assert_int_equal(durn.rc, -1);
	assert_non_null(strstr(durn.err.c_str(), "flows.[1].messages: flow 'out' sends what its ring brings, and what comes in runs for a duration"));
	/* Two fed flows in a row: the second gets what the first's receiver hands on. */
	Plan chain("flows = ( { name = \"in\"; verb = \"send\"; size = 256; messages = 900; window = 256; pool = \"p\"; },\n"
		   "  { name = \"mid\"; verb = \"send\"; size = 256; window = 256; pool = \"p\"; },\n"
		   "  { name = \"out\"; verb = \"send\"; size = 256; window = 256; pool = \"p\"; } );\n"
		   "rings = ( { name = \"a\"; size = 256; }, { name = \"b\"; size = 256; } );\n"
		   "stages = ( { name = \"t0\"; kind = \"rdma_tx\"; lcore = 1; flow = \"in\"; },\n"
		   "  { name = \"r0\"; kind = \"rdma_rx\"; lcore = 0; flow = \"in\"; output = \"a\"; },\n"
		   "  { name = \"t1\"; kind = \"rdma_tx\"; lcore = 1; flow = \"mid\"; input = \"a\"; },\n"
		   "  { name = \"r1\"; kind = \"rdma_rx\"; lcore = 0; flow = \"mid\"; output = \"b\"; },\n"
		   "  { name = \"t2\"; kind = \"rdma_tx\"; lcore = 1; flow = \"out\"; input = \"b\"; },\n"
		   "  { name = \"r2\"; kind = \"rdma_rx\"; lcore = 0; flow = \"out\"; } );\n");
	assert_int_equal(chain.rc, 0);
	assert_int_equal(chain.g.flows[1]->params.messages, 900);
	assert_int_equal(chain.g.flows[2]->params.messages, 900);

	Plan none("flows = ( { name = \"in\"; verb = \"write_imm\"; size = 256; messages = 10; pool = \"p\"; },\n"
		  "  { name = \"out\"; verb = \"send\"; size = 256; window = 256; pool = \"p\"; } );\n" + stages);
	assert_int_equal(none.rc, -1);
	assert_non_null(strstr(none.err.c_str(), "stages.[1]: an rdma_rx stage hands received buffers on: flow 'in' uses write_imm"));
}

/* A verify fed by one gen checks order, the gen counting or timed: a property of the
 * gen's kind, not of its variant's ops (a timed gen's verify, wired after it in file
 * order as wire_stages does, checked no order: issue 45). */
void verify_after_a_gen_checks_order(void **)
{
	const std::string stages = "rings = ( { name = \"m\"; size = 256; }, { name = \"c\"; size = 256; } );\n"
				   "stages = ( { name = \"g\"; kind = \"gen\"; lcore = 1; flow = \"f\"; output = \"m\"; },\n"
				   "  { name = \"v\"; kind = \"verify\"; lcore = 1; input = \"m\"; output = \"c\"; },\n"
				   "  { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; input = \"c\"; },\n"
				   "  { name = \"rx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"f\"; } );\n";
	for (const char *run : {"messages = 1000;", "duration = 2;"}) {
		Plan p(std::string("flows = ( { name = \"f\"; verb = \"send\"; size = 64; ") + run + " pool = \"p\"; } );\n" + stages);
		assert_int_equal(p.rc, 0);
		rp::GraphStage *g = p.stage("g"), *v = p.stage("v");
		std::string err;
		assert_int_equal(rp::kind_ops(rp::stage_kind_named("gen")).wire(&p.g, g, rp::StageInput{}, &err), 0);
		assert_true(rp::stage_feed(&v->st, &g->st));
		assert_int_equal(rp::kind_ops(rp::stage_kind_named("verify")).wire(&p.g, v, rp::StageInput{}, &err), 0);
		assert_true(v->st.ordered);
	}
}

/* Gens of a flow that runs for a duration (its own or the run's) make messages for that
 * long: no count, the timed burst, their rdma_tx sending what comes until its input
 * ends; only a flow's own gens take its duration off its fed rdma_tx. */
void gens_run_for_a_duration(void **)
{
	const std::string stages = "rings = ( { name = \"r\"; size = 512; multi_producer = true; } );\n"
				   "stages = ( { name = \"g0\"; kind = \"gen\"; lcore = 0; flow = \"f\"; output = \"r\"; },\n"
				   "  { name = \"g1\"; kind = \"gen\"; lcore = 1; flow = \"f\"; output = \"r\"; },\n"
				   "  { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; input = \"r\"; },\n"
				   "  { name = \"rx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"f\"; } );\n";
	Plan p("flows = ( { name = \"f\"; verb = \"send_imm\"; size = 64; duration = 2; rate = 2000; pool = \"p\"; } );\n" + stages);
	assert_int_equal(p.rc, 0);
	const rp::GraphFlow &f = *p.g.flows[0];
	for (const char *g : {"g0", "g1"}) {
		assert_int_equal(p.stage(g)->st.limit, UINT64_MAX);
		assert_true(p.stage(g)->duration_s == 2.0);
	}
	assert_true(f.fed && f.has_gen);
	assert_true(f.params.tx_count_from_input);   // sends until its gens are done and the ring is dry
	assert_int_equal(f.params.messages, 0);
	assert_true(f.params.duration_s == 0);       // the gens keep it
	assert_true(f.params.tx_gen_stage);          // and the rate: the requester paces nothing
	/* Wired: the timed burst, the duration in TSC cycles, each gen half the rate. */
	std::string err;
	const uint64_t hz = rte_get_tsc_hz();
	rp::GraphStage *g0 = p.stage("g0");
	assert_int_equal(rp::kind_ops(rp::stage_kind_named("gen")).wire(&p.g, g0, rp::StageInput{}, &err), 0);
	assert_ptr_equal(g0->st.ops, &rp::kTimedGenStage);
	assert_int_equal(g0->st.duration_tsc, 2 * hz);
	assert_int_equal(g0->st.tsc_per_msg, hz * 2 / 2000);
	assert_int_equal(rp::requester_params(f.params, false, hz).tsc_per_msg, 0);

	/* The run's duration, unpaced: the same. */
	Plan run("flows = ( { name = \"f\"; verb = \"send\"; size = 64; pool = \"p\"; } );\n" + stages + "run = { duration = 3; };\n");
	assert_int_equal(run.rc, 0);
	assert_true(run.stage("g1")->duration_s == 3.0);
	assert_true(run.g.flows[0]->params.tx_count_from_input);
	/* A count keeps the untimed burst. */
	Plan count("flows = ( { name = \"f\"; verb = \"send\"; size = 64; messages = 10; pool = \"p\"; } );\n" + stages);
	assert_int_equal(count.rc, 0);
	assert_true(count.stage("g0")->duration_s == 0);
	assert_int_equal(rp::kind_ops(rp::stage_kind_named("gen")).wire(&count.g, count.stage("g0"), rp::StageInput{}, &err), 0);
	assert_ptr_equal(count.stage("g0")->st.ops, &rp::kGenStage);

	/* Flow b's gens run for a's duration: b's own duration is its sender's, and it has none. */
	Plan other("flows = ( { name = \"a\"; verb = \"send\"; size = 64; duration = 2; pool = \"p\"; },\n"
		   "  { name = \"b\"; verb = \"send\"; size = 64; duration = 2; pool = \"p\"; } );\n"
		   "rings = ( { name = \"r\"; size = 512; } );\n"
		   "stages = ( { name = \"g\"; kind = \"gen\"; lcore = 0; flow = \"a\"; output = \"r\"; },\n"
		   "  { name = \"atx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"a\"; },\n"
		   "  { name = \"arx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"a\"; },\n"
		   "  { name = \"btx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"b\"; input = \"r\"; },\n"
		   "  { name = \"brx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"b\"; } );\n");
	assert_int_equal(other.rc, -1);
	assert_non_null(strstr(other.err.c_str(), "flows.[1].duration: flow 'b' sends what its ring brings (until its input ends): it runs no duration of its own"));
	/* Gens into a sink beside the flow's own requester: both run for the duration. */
	Plan sink("flows = ( { name = \"a\"; verb = \"send\"; size = 64; duration = 2; pool = \"p\"; } );\n"
		  "rings = ( { name = \"r\"; size = 64; } );\n"
		  "stages = ( { name = \"g\"; kind = \"gen\"; lcore = 0; flow = \"a\"; output = \"r\"; },\n"
		  "  { name = \"k\"; kind = \"sink\"; lcore = 1; input = \"r\"; },\n"
		  "  { name = \"atx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"a\"; },\n"
		  "  { name = \"arx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"a\"; } );\n");
	assert_int_equal(sink.rc, 0);
	assert_true(sink.stage("g")->duration_s == 2.0);
	assert_true(sink.g.flows[0]->params.duration_s == 2.0);
	assert_false(sink.g.flows[0]->params.tx_count_from_input);
}

void one_pool_per_ring(void **)
{
	/* Two flows' gens into one ring: the sink could not tell which pool a buffer is of. */
	Plan p("flows = ( { name = \"a\"; verb = \"send\"; size = 64; messages = 10; pool = \"p\"; },\n"
	       "  { name = \"b\"; verb = \"send\"; size = 64; messages = 10; pool = \"p\"; } );\n"
	       "rings = ( { name = \"r\"; size = 64; multi_producer = true; } );\n"
	       "stages = ( { name = \"ga\"; kind = \"gen\"; lcore = 0; flow = \"a\"; output = \"r\"; },\n"
	       "  { name = \"gb\"; kind = \"gen\"; lcore = 1; flow = \"b\"; output = \"r\"; },\n"
	       "  { name = \"k\"; kind = \"sink\"; lcore = 1; input = \"r\"; },\n"
	       "  { name = \"atx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"a\"; },\n"
	       "  { name = \"arx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"a\"; },\n"
	       "  { name = \"btx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"b\"; },\n"
	       "  { name = \"brx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"b\"; } );\n");
	assert_int_equal(p.rc, -1);
	assert_non_null(strstr(p.err.c_str(), "stages.[2]: its input carries buffers of two pools (stages 'ga' and 'gb'"));
	/* The gen's flow keeps its own requester: not fed, so it keeps its rate itself. */
	Plan q("flows = ( { name = \"a\"; verb = \"send\"; size = 64; messages = 10; rate = 100; pool = \"p\"; } );\n"
	       "rings = ( { name = \"r\"; size = 64; } );\n"
	       "stages = ( { name = \"ga\"; kind = \"gen\"; lcore = 0; flow = \"a\"; output = \"r\"; },\n"
	       "  { name = \"k\"; kind = \"sink\"; lcore = 1; input = \"r\"; },\n"
	       "  { name = \"atx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"a\"; },\n"
	       "  { name = \"arx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"a\"; } );\n");
	assert_int_equal(q.rc, 0);
	assert_false(q.g.flows[0]->fed);
	assert_false(q.g.flows[0]->params.tx_gen_stage);
}

void rings_without_cycles(void **)
{
	Plan p("flows = ( { name = \"f\"; verb = \"send\"; size = 64; messages = 10; pool = \"p\"; } );\n"
	       "rings = ( { name = \"a\"; size = 64; }, { name = \"b\"; size = 64; } );\n"
	       "stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
	       "  { name = \"rx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"f\"; },\n"
	       "  { name = \"f1\"; kind = \"forward\"; lcore = 0; input = \"a\"; output = \"b\"; },\n"
	       "  { name = \"f2\"; kind = \"forward\"; lcore = 1; input = \"b\"; output = \"a\"; } );\n");
	assert_int_equal(p.rc, -1);
	assert_non_null(strstr(p.err.c_str(), "stages.[2]: stage 'f1' is reached again by its own output through rings"));
}

/* Two-host flows are planned like the others, with one end here: the client's rdma_tx
 * (a requester and no responder), the server's rdma_rx (the reverse), each with its
 * address; what the server could not judge is refused, naming the key. */
void two_host_flows_have_one_end_here(void **)
{
	Plan client("flows = ( { name = \"f\"; peer = \"10.2.0.2:18800\"; local = \"10.2.0.1\"; verb = \"write_imm\"; size = 64;\n"
		    "  qps = 4; messages = 1000; pool = \"p\"; } );\n"
		    "stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; } );\n");
	assert_int_equal(client.rc, 0);
	const rp::GraphFlow &cf = *client.g.flows[0];
	assert_non_null(cf.remote.get());
	assert_false(cf.remote->server);
	assert_string_equal(cf.remote->addr.str.c_str(), "10.2.0.2:18800");
	assert_non_null(cf.tx);
	assert_null(cf.rx);
	assert_int_equal(cf.tx->requesters.size(), 1);
	assert_true(cf.tx->responders.empty());
	assert_int_equal(static_cast<int>(cf.form->shape), static_cast<int>(rp::FlowShape::client));

	Plan server("flows = ( { name = \"f\"; listen = \"18800\"; verb = \"send\"; size = 64; qps = 2; messages = 1000;\n"
		    "  pool = \"p\"; } );\n"
		    "stages = ( { name = \"rx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"f\"; } );\n");
	assert_int_equal(server.rc, 0);
	const rp::GraphFlow &sf = *server.g.flows[0];
	assert_true(sf.remote->server);
	assert_string_equal(sf.remote->addr.str.c_str(), "0.0.0.0:18800");
	assert_null(sf.tx);
	assert_int_equal(sf.rx->responders.size(), 1);
	assert_true(sf.rx->srq > 0);   // its receives are the lcore's SRQ's, sized for it
	assert_int_equal(static_cast<int>(sf.form->shape), static_cast<int>(rp::FlowShape::server));

	Plan timed("flows = ( { name = \"f\"; peer = \"10.2.0.2:18800\"; verb = \"send\"; size = 64; duration = 2.0;\n"
		   "  pool = \"p\"; } );\n"
		   "stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; } );\n");
	assert_int_equal(timed.rc, 0);   // the client tells its final counts at the end
	assert_int_equal(timed.g.flows[0]->params.messages, 0);
	assert_true(timed.g.flows[0]->params.duration_s == 2.0);

	Plan uc("flows = ( { name = \"f\"; peer = \"10.2.0.2:18800\"; transport = \"uc\"; verb = \"send_imm\"; size = 64;\n"
		"  messages = 10; pool = \"p\"; } );\n"
		"stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; } );\n");
	assert_int_equal(uc.rc, 0);   // UC QPs beside the RC connections rdma_cm makes
	assert_true(uc.g.flows[0]->params.uc && uc.g.flows[0]->reliable());
}

/* Lanes (several rdma_tx stages of a flow of READs): each lane its share of the
 * messages; shared QPs give each lane its share of every send queue, split ones their
 * own QPs; what cannot be laid out so is refused, naming the setting. */
void lanes_share_a_flow(void **)
{
	const std::string stages = "stages = ( { name = \"l0\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
				   "  { name = \"l1\"; kind = \"rdma_tx\"; lcore = 0; flow = \"f\"; } );\n";
	Plan split("flows = ( { name = \"f\"; verb = \"read\"; size = 64; messages = 1001; qps = 4; pool = \"p\"; } );\n" + stages);
	assert_int_equal(split.rc, 0);
	rp::GraphFlow &f = *split.g.flows[0];
	assert_int_equal(f.lanes.size(), 2);
	assert_int_equal(static_cast<int>(f.form->shape), static_cast<int>(rp::FlowShape::lanes));
	assert_false(f.share_qps);
	assert_int_equal(f.lanes[0]->params.qps, 2);
	assert_int_equal(f.lanes[0]->params.messages, 501);
	assert_int_equal(f.lanes[1]->params.messages, 500);
	assert_ptr_equal(f.lanes[1]->lcore, split.stage("l1")->lcore);
	assert_true(split.stage("l1")->lcore->has_roles());
	assert_true(split.stage("l1")->lcore->requesters.empty());

	Plan shared("flows = ( { name = \"f\"; verb = \"read\"; size = 64; messages = 100; qps = 3; sq_depth = 64; batch = 8;\n"
		    "  signal_every = 8; share_qps = true; pool = \"p\"; } );\n" + stages);
	assert_int_equal(shared.rc, 0);
	assert_true(shared.g.flows[0]->share_qps);
	assert_int_equal(shared.g.flows[0]->lanes[1]->params.qps, 3);        // every QP
	assert_int_equal(shared.g.flows[0]->lanes[1]->params.sq_depth, 32);  // half of each send queue

	Plan odd("flows = ( { name = \"f\"; verb = \"read\"; size = 64; messages = 100; qps = 3; pool = \"p\"; } );\n" + stages);
	assert_int_equal(odd.rc, -1);
	assert_non_null(strstr(odd.err.c_str(), "flows.[0].qps: 3 QPs do not split evenly over 2 lanes (or set share_qps = true)"));
	Plan shallow("flows = ( { name = \"f\"; verb = \"read\"; size = 64; messages = 100; qps = 2; sq_depth = 32; batch = 8;\n"
		     "  signal_every = 16; share_qps = true; pool = \"p\"; } );\n" + stages);
	assert_int_equal(shallow.rc, -1);
	assert_non_null(strstr(shallow.err.c_str(), "flows.[0].sq_depth: each of the 2 lanes gets sq_depth / 2 = 16 of every shared send queue"));

	/* Three lanes sharing six QPs with every size left out: each lane gets a whole
	 * default send queue's worth of every QP (4 x batch), not a third of one. */
	Plan three("flows = ( { name = \"f\"; verb = \"read\"; size = 64; messages = 3000; qps = 6; share_qps = true; } );\n"
		   "stages = ( { name = \"l0\"; kind = \"rdma_tx\"; lcore = 0; flow = \"f\"; },\n"
		   "  { name = \"l1\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
		   "  { name = \"l2\"; kind = \"rdma_tx\"; lcore = 2; flow = \"f\"; } );\n");
	assert_int_equal(three.rc, 0);
	assert_int_equal(three.g.flows[0]->lanes.size(), 3);
	assert_int_equal(three.g.flows[0]->params.sq_depth, 3 * 4 * 32);
	for (const auto &lane : three.g.flows[0]->lanes)
		assert_int_equal(lane->params.sq_depth, 4 * 32);
}

/* Lanes of every one-sided verb: writes and atomics with the rdma_rx stage that checks
 * the far end's memory (shared QPs: a slice of each QP's per lane); two-sided verbs and
 * write_imm, and writes with nothing to check them, refused with the reason. */
void lanes_of_every_one_sided_verb(void **)
{
	const std::string lanes = "stages = ( { name = \"l0\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
				  "  { name = \"l1\"; kind = \"rdma_tx\"; lcore = 0; flow = \"f\"; }";
	const std::string rx = ",\n  { name = \"rx\"; kind = \"rdma_rx\"; lcore = 2; flow = \"f\"; } );\n";
	Plan split("flows = ( { name = \"f\"; verb = \"write\"; size = 64; messages = 1000; qps = 4; } );\n" + lanes + rx);
	assert_int_equal(split.rc, 0);
	rp::GraphFlow &f = *split.g.flows[0];
	assert_ptr_equal(f.rx, split.stage("rx")->lcore);   // the far end's check runs there
	assert_ptr_equal(f.tx, split.stage("l0")->lcore);
	assert_int_equal(f.params.slices, 1);
	assert_int_equal(f.shape.mem_per_qp, uint64_t{f.params.slots} * 64);

	/* The rdma_rx stage first in the file: still the flow's far end. */
	Plan rx_first("flows = ( { name = \"f\"; verb = \"write\"; size = 64; messages = 1000; qps = 2; share_qps = true; } );\n"
		      "stages = ( { name = \"rx\"; kind = \"rdma_rx\"; lcore = 2; flow = \"f\"; },\n"
		      "  { name = \"l0\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
		      "  { name = \"l1\"; kind = \"rdma_tx\"; lcore = 0; flow = \"f\"; } );\n");
	assert_int_equal(rx_first.rc, 0);
	rp::GraphFlow &s = *rx_first.g.flows[0];
	assert_ptr_equal(s.rx, rx_first.stage("rx")->lcore);
	assert_int_equal(s.params.slices, 2);   // a window per lane in each QP's memory
	assert_int_equal(s.shape.mem_per_qp, 2 * uint64_t{s.params.slots} * 64);
	assert_int_equal(s.lanes[1]->params.qps, 2);

	Plan atomics("flows = ( { name = \"f\"; verb = \"cmp_swap\"; size = 8; messages = 1000; qps = 3; share_qps = true; } );\n" +
		     lanes + rx);
	assert_int_equal(atomics.rc, 0);
	assert_int_equal(atomics.g.flows[0]->shape.mem_per_qp, 2 * 8);   // a word per lane
	Plan faa("flows = ( { name = \"f\"; verb = \"fetch_add\"; size = 8; messages = 1000; qps = 2; } );\n" + lanes + rx);
	assert_int_equal(faa.rc, 0);

	/* Reads check their own results: an rdma_rx stage may run their far end, or none. */
	Plan reads("flows = ( { name = \"f\"; verb = \"read\"; size = 64; messages = 1000; qps = 2; } );\n" + lanes + rx);
	assert_int_equal(reads.rc, 0);

	/* Refused when the file is read (conf_validate), naming why. */
	auto refused = [](const std::string &body, const char *want) {
		rp::PipelineConf c;
		std::string err;
		assert_int_equal(try_load(std::string(kHead) + body, &c, &err), -1);
		if (strstr(err.c_str(), want) == nullptr)
			fprintf(stderr, "got: %s\n", err.c_str());
		assert_non_null(strstr(err.c_str(), want));
	};
	refused("flows = ( { name = \"f\"; verb = \"write\"; size = 64; messages = 1000; qps = 2; } );\n" + lanes + " );\n",
		"flows.[0]: flow 'f' has 2 rdma_tx stages (lanes) of write: one rdma_rx stage (on an lcore of its own) checks "
		"what they left in the far end's memory at the end, it has 0");
	refused("flows = ( { name = \"f\"; verb = \"read\"; size = 64; messages = 1000; qps = 2; } );\n" + lanes +
		",\n  { name = \"rx\"; kind = \"rdma_rx\"; lcore = 2; flow = \"f\"; },\n"
		"  { name = \"rx2\"; kind = \"rdma_rx\"; lcore = 3; flow = \"f\"; } );\n",
		"at most one rdma_rx stage, it has 2");
	for (const char *verb : {"write_imm", "send", "send_imm"}) {
		refused(std::string("flows = ( { name = \"f\"; verb = \"") + verb +
				"\"; size = 64; messages = 1000; qps = 2; share_qps = true; } );\n" + lanes + rx,
			"flows.[0].verb: flow 'f' has 2 rdma_tx stages (lanes): lanes post one-sided verbs");
		refused(std::string("flows = ( { name = \"f\"; verb = \"") + verb + "\"; size = 64; messages = 1000; qps = 2; } );\n" +
				lanes + rx,
			"takes each QP's messages as one sequence");
	}
	refused("flows = ( { name = \"f\"; verb = \"write\"; size = 64; messages = 1000; qps = 2; } );\n" + lanes +
			",\n  { name = \"rx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"f\"; } );\n",
		"has both ends on lcore 0");
	refused("flows = ( { name = \"f\"; verb = \"write\"; size = 64; messages = 1000; qps = 2; peer = \"10.2.0.2:18800\"; } );\n" +
			lanes + " );\n",
		"flow 'f' has 2 rdma_tx stages (lanes): that takes a loopback flow (both ends on this host)");
	/* An io context's send CQ holds its lcore's roles' WRs, not its lanes' (their CQs are
	 * their own): a small one given is no reason to refuse them. */
	Plan small_cq("flows = ( { name = \"f\"; verb = \"read\"; size = 64; messages = 1000; qps = 8; share_qps = true; } );\n"
		      "io_contexts = ( { lcore = 0; device = \"rxe0\"; send_cq = 16; }, { lcore = 1; device = \"rxe0\"; send_cq = 16; } );\n" +
		      lanes + " );\n", "version = 1;\ndevices = ( { name = \"rxe0\"; } );\n");
	assert_int_equal(small_cq.rc, 0);
}

/* The lanes' derived sizes fitted to the device: 3 lanes over 6 QPs, no sizes given,
 * plan and fit, shared or not; a send CQ past max_cqe gives each lane a WR budget; a
 * send queue past max_qp_wr is cut when derived, refused (named) when given. */
void lanes_sizes_fitted(void **)
{
	const std::string lanes3 = "stages = ( { name = \"l0\"; kind = \"rdma_tx\"; lcore = 0; flow = \"f\"; },\n"
				   "  { name = \"l1\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
				   "  { name = \"l2\"; kind = \"rdma_tx\"; lcore = 2; flow = \"f\"; } );\n";
	const char *head = "version = 1;\ndevices = ( { name = \"rxe0\"; } );\n";
	auto fit = [](Plan &p, int max_cqe, int max_qp_wr, std::string *err) {
		static rp::Device dev;
		dev.name = "rxe0";
		dev.dev_attr.max_cqe = max_cqe;
		dev.dev_attr.max_qp_wr = max_qp_wr;
		dev.dev_attr.max_srq_wr = 1 << 20;
		for (auto &l : p.g.lcores)
			l->dev = &dev;
		return rp::fit_device(&p.g, err);
	};
	for (const char *share : {"true", "false"}) {
		Plan p(std::string("flows = ( { name = \"f\"; verb = \"read\"; size = 1024; messages = 30000; qps = 6; share_qps = ") + share +
			       "; } );\n" + lanes3, head);
		assert_int_equal(p.rc, 0);
		std::string err;
		assert_int_equal(fit(p, 32767, 1 << 20, &err), 0);   // rxe's: nothing to fit
		for (const auto &lane : p.g.flows[0]->lanes) {
			assert_int_equal(lane->params.wr_budget, 0);
			assert_int_equal(lane->params.sq_depth, 4 * 32);
			assert_int_equal(lane->params.messages, 10000);
		}
	}
	Plan shared("flows = ( { name = \"f\"; verb = \"write\"; size = 64; messages = 3000; qps = 6; share_qps = true; } );\n"
		    "stages = ( { name = \"rx\"; kind = \"rdma_rx\"; lcore = 3; flow = \"f\"; },\n" + lanes3.substr(11), head);
	assert_int_equal(shared.rc, 0);
	std::string err;
	assert_int_equal(fit(shared, 1000, 1 << 20, &err), 0);   // 6 QPs x 384 WRs would pass 1000 CQ entries
	for (const auto &lane : shared.g.flows[0]->lanes)
		assert_int_equal(lane->params.wr_budget, 1000 / 3);
	Plan split("flows = ( { name = \"f\"; verb = \"read\"; size = 64; messages = 3000; qps = 6; } );\n" + lanes3, head);
	assert_int_equal(fit(split, 200, 1 << 20, &err), 0);   // each lane's CQ: 2 QPs x 128 WRs
	assert_int_equal(split.g.flows[0]->lanes[2]->params.wr_budget, 200);
	assert_int_equal(fit(split, 16, 1 << 20, &err), -1);
	assert_non_null(strstr(err.c_str(), "flows.[0].qps: flow 'f': its lanes' send CQs would hold 256 WRs, rxe0 allows 16"));

	Plan deep("flows = ( { name = \"f\"; verb = \"read\"; size = 64; messages = 3000; qps = 6; share_qps = true; } );\n" + lanes3, head);
	assert_int_equal(fit(deep, 32767, 300, &err), 0);   // 3 x 128 derived: cut to 3 x 100
	assert_int_equal(deep.g.flows[0]->params.sq_depth, 300);
	assert_int_equal(deep.g.flows[0]->lanes[0]->params.sq_depth, 100);
	Plan given("flows = ( { name = \"f\"; verb = \"read\"; size = 64; messages = 3000; qps = 6; share_qps = true; sq_depth = 384; } );\n" +
		   lanes3, head);
	assert_int_equal(given.rc, 0);
	assert_int_equal(fit(given, 32767, 300, &err), -1);
	assert_non_null(strstr(err.c_str(), "flows.[0].sq_depth: flow 'f': a send queue of 384 WRs is above rxe0's max_qp_wr 300"));
}

/* A ping-pong's two sides: both send and receive, one message in flight per QP, so
 * each lcore's SRQ holds its QPs' one receive and a refill batch, its send CQ the send
 * queues; the echoing lcore's receive pool also holds what waits in its send queues. */
void pingpong_sides_sized(void **)
{
	Plan p("flows = ( { name = \"f\"; verb = \"send_imm\"; size = 64; qps = 4; sq_depth = 32; signal_every = 8; pool = \"p\"; } );\n"
	       "stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
	       "  { name = \"e\"; kind = \"echo\"; lcore = 0; flow = \"f\"; } );\n");
	assert_int_equal(p.rc, 0);
	rp::GraphFlow &f = *p.g.flows[0];
	assert_int_equal(static_cast<int>(f.form->shape), static_cast<int>(rp::FlowShape::pingpong));
	assert_int_equal(f.params.messages, rp::kDefaultPingPongIterations);   // no messages: ib_send_lat's default
	assert_ptr_equal(p.stage("tx")->st.ops, &rp::kPingStage);
	assert_ptr_equal(p.stage("e")->st.ops, &rp::kEchoStage);
	rp::GraphLcore &ping = *p.stage("tx")->lcore, &echo = *p.stage("e")->lcore;
	assert_int_equal(ping.pingers.size(), 1);
	assert_int_equal(echo.echoers.size(), 1);
	assert_true(ping.requesters.empty() && echo.responders.empty());
	assert_int_equal(ping.send_cq, 4 * 32);
	assert_int_equal(ping.srq_threshold, 16);
	assert_int_equal(ping.srq, 4 + 16);
	assert_int_equal(ping.rx_bytes, 64);
	assert_int_equal(echo.srq, 2048);   // the file's larger SRQ
	assert_true(echo.rx_pool_n >= echo.srq + 4 * 32);

	Plan rate("flows = ( { name = \"f\"; verb = \"send\"; size = 64; rate = 1000; pool = \"p\"; } );\n"
		  "stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
		  "  { name = \"e\"; kind = \"echo\"; lcore = 0; flow = \"f\"; } );\n");
	assert_int_equal(rate.rc, -1);
	assert_non_null(strstr(rate.err.c_str(), "flows.[0].rate: a ping-pong sends the next message when the echo"));
	Plan dur("flows = ( { name = \"f\"; verb = \"send\"; size = 64; duration = 2; pool = \"p\"; } );\n"
		 "stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
		 "  { name = \"e\"; kind = \"echo\"; lcore = 0; flow = \"f\"; } );\n");
	assert_int_equal(dur.rc, -1);
	assert_non_null(strstr(dur.err.c_str(), "flows.[0].duration: a ping-pong runs a number of round trips"));
	Plan few("flows = ( { name = \"f\"; verb = \"send\"; size = 64; qps = 8; messages = 5; pool = \"p\"; } );\n"
		 "stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
		 "  { name = \"e\"; kind = \"echo\"; lcore = 0; flow = \"f\"; } );\n");
	assert_int_equal(few.rc, -1);
	assert_non_null(strstr(few.err.c_str(), "flows.[0].messages: 5 round trips cannot keep 8 QPs busy"));
}

/* recv_queue = "qp": no SRQ; each receiving QP keeps its window and an eighth, and the
 * receive CQ holds them all. */
void per_qp_receive_queues_sized(void **)
{
	const char *head = "version = 1;\n"
			   "devices = ( { name = \"rxe0\"; } );\n"
			   "pools = ( { name = \"p\"; elt_size = 256; count = 8192; } );\n"
			   "io_contexts = ( { lcore = 1; device = \"rxe0\"; recv_queue = \"qp\"; },"
			   " { lcore = 0; device = \"rxe0\"; recv_queue = \"qp\"; } );\n";
	Plan p("flows = ( { name = \"f\"; verb = \"send\"; size = 64; qps = 4; window = 64; pool = \"p\"; } );\n"
	       "stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
	       "  { name = \"rx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"f\"; } );\n", head);
	assert_int_equal(p.rc, 0);
	rp::GraphFlow &f = *p.g.flows[0];
	assert_int_equal(f.params.rq_refill, 8);
	assert_int_equal(f.params.rq_depth, 64 + 8);
	rp::GraphLcore &rx = *p.stage("rx")->lcore, &tx = *p.stage("tx")->lcore;
	assert_int_equal(rx.srq, 4 * 72);   // over the QPs' own queues
	assert_int_equal(rx.srq_threshold, 0);
	assert_true(rx.recv_cq >= rx.srq);
	assert_true(rx.rx_pool_n >= rx.srq);
	assert_int_equal(tx.srq, 0);        // the sender receives nothing

	Plan pp("flows = ( { name = \"f\"; verb = \"send\"; size = 64; qps = 4; pool = \"p\"; } );\n"
		"stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
		"  { name = \"e\"; kind = \"echo\"; lcore = 0; flow = \"f\"; } );\n", head);
	assert_int_equal(pp.rc, 0);
	assert_int_equal(pp.g.flows[0]->params.rq_depth, 2);   // one message in flight per QP, reposted one at a time
	assert_int_equal(pp.stage("tx")->lcore->srq, 4 * 2);
	assert_int_equal(pp.stage("e")->lcore->srq, 4 * 2);
}

/* A flow_window the flow cannot keep is refused at plan time, naming the file's key and
 * why; each refusal beside a flow that differs only there and is accepted. */
void flow_window_refusals(void **)
{
	const std::string two_ends = "stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
				     "  { name = \"rx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"f\"; } );\n";
	const std::string pingpong = "stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
				     "  { name = \"e\"; kind = \"echo\"; lcore = 0; flow = \"f\"; } );\n";
	auto flow = [](const std::string &keys) {
		return "flows = ( { name = \"f\"; size = 64; qps = 4; messages = 1000; pool = \"p\"; " + keys + " } );\n";
	};
	const std::string at = "flows.[0].flow_window: flow 'f': ";

	Plan send(flow("verb = \"send\"; flow_window = 64;") + two_ends);
	assert_int_equal(send.rc, 0);
	assert_int_equal(send.g.flows[0]->params.flow_window, 64);
	Plan write(flow("verb = \"write\"; flow_window = 64;") + two_ends);
	assert_int_equal(write.rc, -1);
	assert_non_null(strstr(write.err.c_str(), (at + "its verb consumes no receive at the far end: there is no window to "
						   "share (leave flow_window out, or 0)").c_str()));
	Plan write0(flow("verb = \"write\"; flow_window = 0;") + two_ends);
	assert_int_equal(write0.rc, 0);   // 0: none, allowed anywhere

	Plan pp(flow("verb = \"send\"; flow_window = 64;") + pingpong);
	assert_int_equal(pp.rc, -1);
	assert_non_null(strstr(pp.err.c_str(), (at + "a ping-pong keeps one message in flight per QP").c_str()));

	Plan uc(flow("verb = \"send_imm\"; transport = \"uc\"; flow_window = 64;") + two_ends);
	assert_int_equal(uc.rc, -1);   // software reliability, UC's default
	assert_non_null(strstr(uc.err.c_str(), (at + "UC made reliable in software returns credit per QP, in its ACKs").c_str()));
	Plan plain_uc(flow("verb = \"send_imm\"; transport = \"uc\"; reliability = \"none\"; flow_window = 64;") + two_ends);
	assert_int_equal(plain_uc.rc, 0);
	assert_int_equal(plain_uc.g.flows[0]->params.flow_window, 64);

	/* recv_queue = "qp" where the flow is received; on its sending lcore it is no matter. */
	auto head = [](int rq_lcore) {
		return "version = 1;\n"
		       "devices = ( { name = \"rxe0\"; } );\n"
		       "pools = ( { name = \"p\"; elt_size = 256; count = 8192; } );\n"
		       "io_contexts = ( { lcore = 1; device = \"rxe0\"; " + std::string(rq_lcore == 1 ? "recv_queue = \"qp\"; " : "") + "},"
		       " { lcore = 0; device = \"rxe0\"; " + (rq_lcore == 0 ? "recv_queue = \"qp\"; " : "") + "} );\n";
	};
	Plan rq(flow("verb = \"send\"; flow_window = 64;") + two_ends, head(0).c_str());
	assert_int_equal(rq.rc, -1);
	assert_non_null(strstr(rq.err.c_str(), (at + "its receiving lcore gives each QP a receive queue of its own "
						"(recv_queue = \"qp\"), which must hold that QP's window").c_str()));
	Plan rq_tx(flow("verb = \"send\"; flow_window = 64;") + two_ends, head(1).c_str());
	assert_int_equal(rq_tx.rc, 0);
	assert_int_equal(rq_tx.g.flows[0]->params.flow_window, 64);

	/* A send flow's receives are all the SRQ's: one window or the other. write_imm keeps
	 * its slots as each QP's window beside the flow's. */
	Plan both(flow("verb = \"send\"; window = 128; flow_window = 64;") + two_ends);
	assert_int_equal(both.rc, -1);
	assert_non_null(strstr(both.err.c_str(), (at + "a send flow with a flow window has no window per QP (its receives are "
						  "all in the SRQ, shared): give window or flow_window, not both").c_str()));
	Plan both_imm(flow("verb = \"send_imm\"; window = 128; flow_window = 64;") + two_ends);
	assert_int_equal(both_imm.rc, -1);
	Plan write_imm(flow("verb = \"write_imm\"; window = 32; flow_window = 64;") + two_ends);
	assert_int_equal(write_imm.rc, 0);
	assert_int_equal(write_imm.g.flows[0]->params.flow_window, 64);
	assert_int_equal(write_imm.g.flows[0]->params.slots, 32);
}

/* flow_window left out: 1024 (kDefaultWindow) where the flow's default per-QP windows
 * would add up to more (64 QPs x a window of at least batch 32), and a send flow's QPs
 * each may take all of it; none at 4 QPs (4 x 256), nor where the file gave a window. The
 * receiving lcore's SRQ then holds the flow's window and a refill of an eighth of it. */
void flow_window_default(void **)
{
	const char *head = "version = 1;\n"
			   "devices = ( { name = \"rxe0\"; } );\n"
			   "pools = ( { name = \"p\"; elt_size = 256; count = 16384; } );\n"
			   "io_contexts = ( { lcore = 1; device = \"rxe0\"; }, { lcore = 0; device = \"rxe0\"; } );\n";
	const std::string two_ends = "stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
				     "  { name = \"rx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"f\"; } );\n";
	auto flow = [](const std::string &keys) {
		return "flows = ( { name = \"f\"; size = 64; messages = 100000; pool = \"p\"; " + keys + " } );\n";
	};
	Plan wide(flow("verb = \"send\"; qps = 64;") + two_ends, head);
	assert_int_equal(wide.rc, 0);
	const rp::FlowParams &o = wide.g.flows[0]->params;
	assert_int_equal(o.flow_window, rp::kDefaultWindow);
	assert_false(o.flow_window_given);
	assert_int_equal(o.slots, rp::kDefaultWindow);   // no per-QP window but the flow's
	assert_int_equal(o.srq_refill, rp::kDefaultWindow / 8);
	assert_int_equal(wide.stage("rx")->lcore->srq, rp::kDefaultWindow + rp::kDefaultWindow / 8);   // not 64 x 32

	Plan narrow(flow("verb = \"send\"; qps = 4;") + two_ends, head);
	assert_int_equal(narrow.rc, 0);
	assert_int_equal(narrow.g.flows[0]->params.flow_window, 0);
	assert_int_equal(narrow.g.flows[0]->params.slots, 256);
	Plan given(flow("verb = \"send\"; qps = 64; window = 32;") + two_ends, head);
	assert_int_equal(given.rc, 0);
	assert_int_equal(given.g.flows[0]->params.flow_window, 0);
	assert_int_equal(given.g.flows[0]->params.slots, 32);
	/* write_imm: the flow's window, and each QP keeps its slots. */
	Plan imm(flow("verb = \"write_imm\"; qps = 64;") + two_ends, head);
	assert_int_equal(imm.rc, 0);
	assert_int_equal(imm.g.flows[0]->params.flow_window, rp::kDefaultWindow);
	assert_int_equal(imm.g.flows[0]->params.slots, 32);
	/* None where one could not be kept: a verb that consumes no receive. */
	Plan write(flow("verb = \"write\"; qps = 64;") + two_ends, head);
	assert_int_equal(write.rc, 0);
	assert_int_equal(write.g.flows[0]->params.flow_window, 0);
	/* Given, a send flow's QPs each take the flow's window as theirs. */
	Plan set(flow("verb = \"send\"; qps = 64; flow_window = 512;") + two_ends, head);
	assert_int_equal(set.rc, 0);
	assert_int_equal(set.g.flows[0]->params.flow_window, 512);
	assert_true(set.g.flows[0]->params.flow_window_given);
	assert_int_equal(set.g.flows[0]->params.slots, 512);
}

/* A size sweep: a pipeline per size, flows with a list take their k-th size in step k,
 * the others keep theirs; lists of two lengths are refused. */
void size_lists_sweep_in_step(void **)
{
	Plan p("flows = ( { name = \"a\"; verb = \"write\"; sizes = [64, 256, 32]; messages = 10; pool = \"p\"; },\n"
	       "  { name = \"b\"; verb = \"read\"; size = 128; messages = 10; pool = \"p\"; } );\n"
	       "stages = ( { name = \"at\"; kind = \"rdma_tx\"; lcore = 1; flow = \"a\"; },\n"
	       "  { name = \"ar\"; kind = \"rdma_rx\"; lcore = 0; flow = \"a\"; },\n"
	       "  { name = \"bt\"; kind = \"rdma_tx\"; lcore = 1; flow = \"b\"; },\n"
	       "  { name = \"br\"; kind = \"rdma_rx\"; lcore = 0; flow = \"b\"; } );\n");
	assert_int_equal(p.rc, -1);   // the whole file is not one step
	std::vector<rp::PipelineConf> steps;
	std::string err;
	assert_int_equal(rp::graph_sweep(p.c, &steps, &err), 0);
	assert_int_equal(steps.size(), 3);
	const uint32_t want[] = {64, 256, 32};
	for (size_t k = 0; k < 3; k++) {
		assert_int_equal(steps[k].flows[0].sizes.size(), 1);
		assert_int_equal(steps[k].flows[0].sizes[0], want[k]);
		assert_int_equal(steps[k].flows[1].sizes[0], 128);
		rp::Graph g;
		assert_int_equal(rp::graph_plan(steps[k], &g, &err), 0);
		assert_int_equal(g.flows[0]->params.msg_bytes, want[k]);
	}
	Plan two("flows = ( { name = \"a\"; verb = \"write\"; sizes = [64, 128]; messages = 10; pool = \"p\"; },\n"
		 "  { name = \"b\"; verb = \"write\"; sizes = [64, 128, 256]; messages = 10; pool = \"p\"; } );\n"
		 "stages = ( { name = \"at\"; kind = \"rdma_tx\"; lcore = 1; flow = \"a\"; },\n"
		 "  { name = \"ar\"; kind = \"rdma_rx\"; lcore = 0; flow = \"a\"; },\n"
		 "  { name = \"bt\"; kind = \"rdma_tx\"; lcore = 1; flow = \"b\"; },\n"
		 "  { name = \"br\"; kind = \"rdma_rx\"; lcore = 0; flow = \"b\"; } );\n");
	assert_int_equal(rp::graph_sweep(two.c, &steps, &err), -1);
	assert_non_null(strstr(err.c_str(), "flows.[1].sizes: 3 sizes, flow 'a' has 2: the flows' size lists are swept in step"));
}

/* Io contexts on two devices: the plan lists the devices its lcores use, in the file's
 * order, each once, and only those (a device no RDMA stage uses is not opened). */
/* What the command line sets of a file's pipeline (apply_cli) reaches the flows as the
 * plan makes them: the hooks on the first flow only (the loss and the retransmission
 * header on every flow), the stall timeout on all, and its results file over the file's. */
void command_line_settings_reach_the_flows(void **)
{
	rp::PipelineConf c;
	load(std::string(kHead) +
		     "flows = ( { name = \"a\"; verb = \"send\"; size = 64; messages = 10; pool = \"p\"; },\n"
		     "  { name = \"b\"; verb = \"send\"; size = 64; messages = 10; pool = \"p\"; } );\n"
		     "stages = ( { name = \"ta\"; kind = \"rdma_tx\"; lcore = 1; flow = \"a\"; },\n"
		     "  { name = \"ra\"; kind = \"rdma_rx\"; lcore = 0; flow = \"a\"; },\n"
		     "  { name = \"tb\"; kind = \"rdma_tx\"; lcore = 1; flow = \"b\"; },\n"
		     "  { name = \"rb\"; kind = \"rdma_rx\"; lcore = 0; flow = \"b\"; } );\n"
		     "run = { output = { json = \"file.json\"; }; };\n",
	     &c);
	rp::RunOptions cli;
	cli.corrupt_msg = 7;
	cli.bad_rkey_qp = 0;
	cli.stall_timeout_s = 3;
	cli.output_json = "cli.json";
	rp::apply_cli(cli, &c);
	assert_string_equal(c.run.json.c_str(), "cli.json");
	rp::Graph g;
	std::string err;
	assert_int_equal(rp::graph_plan(c, &g, &err), 0);
	assert_int_equal(g.flows[0]->params.corrupt_msg, 7);
	assert_int_equal(g.flows[0]->params.bad_rkey_qp, 0);
	assert_true(g.flows[1]->params.corrupt_msg == UINT64_MAX);
	assert_int_equal(g.flows[1]->params.bad_rkey_qp, -1);
	for (const auto &f : g.flows)
		assert_true(f->params.stall_timeout_s == 3);
}

/* --plant: each spec against each flow's planned settings (the window derived, not
 * given), acting on every flow it matches and on no other. */
void plants_act_on_the_flows_they_match(void **)
{
	rp::PipelineConf c;
	load(std::string(kHead) +
		     "flows = ( { name = \"a\"; verb = \"send\"; size = 64; messages = 10; pool = \"p\"; },\n"
		     "  { name = \"b\"; verb = \"send\"; size = 256; qps = 4; messages = 10; pool = \"p\"; } );\n"
		     "stages = ( { name = \"ta\"; kind = \"rdma_tx\"; lcore = 1; flow = \"a\"; },\n"
		     "  { name = \"ra\"; kind = \"rdma_rx\"; lcore = 0; flow = \"a\"; },\n"
		     "  { name = \"tb\"; kind = \"rdma_tx\"; lcore = 1; flow = \"b\"; },\n"
		     "  { name = \"rb\"; kind = \"rdma_rx\"; lcore = 0; flow = \"b\"; } );\n",
	     &c);
	rp::RunOptions cli;
	std::string err;
	for (const char *spec : {"corrupt:qps>=4,size>=256", "slow:size<256,verb=send", "slow:window=256", "corrupt:verb=read"}) {
		cli.plants.emplace_back();
		assert_int_equal(rp::plant_parse(spec, &cli.plants.back(), &err), 0);
	}
	rp::apply_cli(cli, &c);
	rp::Graph g;
	assert_int_equal(rp::graph_plan(c, &g, &err), 0);
	const rp::FlowParams &a = g.flows[0]->params, &b = g.flows[1]->params;
	assert_true(a.corrupt_msg == UINT64_MAX);
	assert_true(a.rate_pps == rp::kPlantSlowPps);
	assert_int_equal(g.flows[0]->planted.size(), 1);
	assert_string_equal(g.flows[0]->planted[0].c_str(), "--plant 'slow:size<256,verb=send': paced at 1000 msg/s");
	assert_int_equal(b.corrupt_msg, rp::kPlantCorruptMsg);
	assert_true(b.rate_pps == rp::kPlantSlowPps);   // window 1024 / 4 QPs, derived
	assert_int_equal(g.flows[1]->planted.size(), 2);
	assert_string_equal(g.flows[1]->planted[0].c_str(),
			    "--plant 'corrupt:qps>=4,size>=256': message 0 of its first QP has a byte flipped");
}

void devices_the_plan_uses(void **)
{
	rp::PipelineConf c;
	std::string err;
	const std::string text =
		"version = 1;\n"
		"devices = ( { name = \"rxeB\"; }, { name = \"spare\"; }, { name = \"rxeA\"; } );\n"
		"io_contexts = ( { lcore = 0; device = \"rxeA\"; }, { lcore = 1; device = \"rxeB\"; } );\n"
		"flows = ( { name = \"f\"; verb = \"write\"; size = 64; messages = 10; } );\n"
		"stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 0; flow = \"f\"; },\n"
		"  { name = \"rx\"; kind = \"rdma_rx\"; lcore = 1; flow = \"f\"; } );\n";
	load(text, &c);
	rp::Graph g;
	assert_int_equal(rp::graph_plan(c, &g, &err), 0);
	std::vector<const rp::DeviceConf *> d = rp::graph_devices(g);
	assert_int_equal(d.size(), 2);
	assert_string_equal(d[0]->name.c_str(), "rxeB");
	assert_string_equal(d[1]->name.c_str(), "rxeA");
	assert_string_equal(g.flows[0]->tx->conf->device.c_str(), "rxeA");
	assert_string_equal(g.flows[0]->rx->conf->device.c_str(), "rxeB");
}

/* A port going down (or a device failing) stops the flows with an end on it, naming
 * why; a flow on the other device goes on. */
void port_down_stops_the_flows_on_it(void **)
{
	rp::PipelineConf c;
	std::string err;
	const std::string text =
		"version = 1;\n"
		"devices = ( { name = \"rxeA\"; }, { name = \"rxeB\"; } );\n"
		"io_contexts = ( { lcore = 0; device = \"rxeA\"; }, { lcore = 1; device = \"rxeA\"; },\n"
		"  { lcore = 2; device = \"rxeB\"; }, { lcore = 3; device = \"rxeB\"; } );\n"
		"flows = ( { name = \"a\"; verb = \"write\"; size = 64; messages = 10; },\n"
		"  { name = \"b\"; verb = \"write\"; size = 64; messages = 10; } );\n"
		"stages = ( { name = \"atx\"; kind = \"rdma_tx\"; lcore = 0; flow = \"a\"; },\n"
		"  { name = \"arx\"; kind = \"rdma_rx\"; lcore = 1; flow = \"a\"; },\n"
		"  { name = \"btx\"; kind = \"rdma_tx\"; lcore = 2; flow = \"b\"; },\n"
		"  { name = \"brx\"; kind = \"rdma_rx\"; lcore = 3; flow = \"b\"; } );\n";
	load(text, &c);
	rp::Graph g;
	assert_int_equal(rp::graph_plan(c, &g, &err), 0);
	rp::Device a, b;   // as graph_build would set them (port 1 each)
	for (auto &l : g.lcores)
		l->dev = l->conf && l->conf->device == "rxeA" ? &a : &b;
	rp::RunControl &fa = g.flows[0]->ctl, &fb = g.flows[1]->ctl;
	assert_int_equal(rp::graph_stop_flows_on(g, &a, 2, "port 2 down"), 0);   // not the port in use
	assert_false(fa.aborted());
	assert_int_equal(rp::graph_stop_flows_on(g, &a, 1, "its port went down"), 1);
	assert_true(fa.aborted());
	assert_string_equal(fa.abort_reason(), "its port went down");
	assert_false(fb.aborted());
	assert_string_equal(fb.abort_reason(), "aborted");
	assert_int_equal(rp::graph_stop_flows_on(g, &b, 0, "its device failed"), 1);
	assert_true(fb.aborted());
	assert_string_equal(fb.abort_reason(), "its device failed");
	assert_string_equal(fa.abort_reason(), "its port went down");
}

struct Owner {
	int got = 0;
	uint32_t last_qp = 0;
};
void on_wc(void *role, const ibv_wc &wc, uint64_t)
{
	auto *o = static_cast<Owner *>(role);
	o->got++;
	o->last_qp = wc.qp_num;
}

void router_reaches_the_owner(void **)
{
	rp::CqRouter r;
	Owner a, b;
	std::string err;
	r.add(on_wc, &a, {10, 11});
	r.add(on_wc, &b, {12});
	assert_int_equal(r.build(&err), 0);
	rp::CqPeer peer = r.peer();
	ibv_wc wc{};
	for (uint32_t q : {11u, 12u, 10u, 99u}) {
		wc.qp_num = q;
		peer.on_wc(peer.role, wc, 0);
	}
	assert_int_equal(a.got, 2);
	assert_int_equal(a.last_qp, 10);
	assert_int_equal(b.got, 1);
	assert_int_equal(r.unknown(), 1);   // QP 99 is no role's of this lcore

	rp::CqRouter dup;
	dup.add(on_wc, &a, {5});
	dup.add(on_wc, &b, {5});
	assert_int_equal(dup.build(&err), -1);
	assert_non_null(strstr(err.c_str(), "QP 5 is owned by two roles"));
}

} // namespace

/* The test's own kind (tally, above) is read from a file, checked by the validator
 * from what it declares, planned, wired by its hook and run by its burst like any. */
void a_kind_registered_by_its_file_runs(void **)
{
	assert_ptr_equal(rp::stage_kind_named("tally"), &tally::kTallyKind);
	const std::string flow = "flows = ( { name = \"f\"; verb = \"send\"; size = 256; messages = 1000; pool = \"p\"; } );\n";
	const std::string ring_a = "{ name = \"a\"; size = 256; }", ring_b = "{ name = \"b\"; size = 256; }";
	const std::string stages = "stages = ( { name = \"tx\"; kind = \"rdma_tx\"; lcore = 1; flow = \"f\"; },\n"
				   "  { name = \"rx\"; kind = \"rdma_rx\"; lcore = 0; flow = \"f\"; output = \"a\"; },\n";
	/* What it declares is the validator's rule: it takes no output ring. */
	rp::PipelineConf bad;
	std::string err;
	assert_int_not_equal(try_load(std::string(kHead) + flow + "rings = ( " + ring_a + ", " + ring_b + " );\n" + stages +
				      "  { name = \"t\"; kind = \"tally\"; lcore = 1; input = \"a\"; output = \"b\"; } );\n",
				      &bad, &err), 0);
	assert_non_null(strstr(err.c_str(), "stages.[2].output: a tally stage takes no output"));

	Plan p(flow + "rings = ( " + ring_a + " );\n" + stages + "  { name = \"t\"; kind = \"tally\"; lcore = 1; input = \"a\"; } );\n");
	assert_int_equal(p.rc, 0);
	rp::GraphStage *t = p.stage("t");
	assert_ptr_equal(t->st.ops, &tally::kTallyStage);
	rte_mempool *pool = rte_mempool_create("tally_pool", 127, 256, 0, 0, nullptr, nullptr, nullptr, nullptr, SOCKET_ID_ANY, 0);
	rte_ring *ring = rte_ring_create("tally_in", 128, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	assert_non_null(pool);
	assert_non_null(ring);
	t->st.in = ring;
	assert_int_equal(rp::kind_ops(t->conf->kind).wire(&p.g, t, rp::StageInput{pool, nullptr, nullptr, 256}, &err), 0);
	void *msgs[100];
	assert_int_equal(rte_mempool_get_bulk(pool, msgs, 100), 0);
	assert_int_equal(rte_ring_enqueue_bulk(ring, msgs, 100, nullptr), 100);
	uint32_t n = 0;
	for (uint32_t got; (got = t->st.ops->burst(&t->st)) != 0;)
		n += got;
	assert_int_equal(n, 100);
	assert_int_equal(rte_mempool_avail_count(pool), 127);
	assert_string_equal(rp::stage_describe(*t).c_str(), ", tallied 25600 B");
	rte_ring_free(ring);
	rte_mempool_free(pool);
}

int main(int, char **argv)
{
	if (!eal_for_tests(argv[0]))
		return 1;
	const CMUnitTest tests[] = {
		cmocka_unit_test(gens_split_their_flow),
		cmocka_unit_test(a_kind_registered_by_its_file_runs),
		cmocka_unit_test(a_fed_flow_sends_what_arrives),
		cmocka_unit_test(gens_run_for_a_duration),
		cmocka_unit_test(verify_after_a_gen_checks_order),
		cmocka_unit_test(one_pool_per_ring),
		cmocka_unit_test(rings_without_cycles),
		cmocka_unit_test(two_host_flows_have_one_end_here),
		cmocka_unit_test(pingpong_sides_sized),
		cmocka_unit_test(per_qp_receive_queues_sized),
		cmocka_unit_test(flow_window_refusals),
		cmocka_unit_test(flow_window_default),
		cmocka_unit_test(size_lists_sweep_in_step),
		cmocka_unit_test(lanes_share_a_flow),
		cmocka_unit_test(lanes_of_every_one_sided_verb),
		cmocka_unit_test(lanes_sizes_fitted),
		cmocka_unit_test(command_line_settings_reach_the_flows),
		cmocka_unit_test(plants_act_on_the_flows_they_match),
		cmocka_unit_test(devices_the_plan_uses),
		cmocka_unit_test(port_down_stops_the_flows_on_it),
		cmocka_unit_test(router_reaches_the_owner),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
