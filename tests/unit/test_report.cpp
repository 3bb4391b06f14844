/* The report writer: what lib/ prints goes through it, to a stream or into a string,
 * and the summary pieces it writes read as they did when they were printf's. Plain
 * data: no EAL, no device. */
#include "control/report.h"
#include "control/report_writer.h"

#include "cmocka_cpp.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

void collects_into_a_string(void **)
{
	rp::Report out(nullptr);
	out.put("summary:\n");
	out.put("  %-20s %u B", "size:", 64u);
	out.line(", %s", "inline");
	out.line("result: %s", "PASS");
	assert_string_equal(out.text().c_str(), "summary:\n  size:                64 B, inline\nresult: PASS\n");
	out.flush();   // nothing to flush: the text stays
	assert_string_equal(out.text().c_str(), "summary:\n  size:                64 B, inline\nresult: PASS\n");
}

void long_lines_whole(void **)
{
	const std::string big(5000, 'x');
	rp::Report out(nullptr);
	out.put("%s", "");
	out.line("[%s]", big.c_str());
	assert_int_equal(out.text().size(), big.size() + 3);
	assert_string_equal(out.text().c_str(), ("[" + big + "]\n").c_str());
}

void writes_to_a_stream(void **)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	rp::Report out(f);
	out.put("  messages sent:       %d\n", 20000);
	out.line("  lost messages:       %d", 0);
	out.flush();
	assert_true(out.text().empty());   // a stream's report keeps nothing
	char buf[128] = {};
	rewind(f);
	const size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	assert_int_equal(n, strlen(buf));
	assert_string_equal(buf, "  messages sent:       20000\n  lost messages:       0\n");
}

void completion_errors(void **)
{
	rp::WcErrorCounts e;
	rp::Report none(nullptr);
	rp::print_wc_errors(none, "requester", e);
	assert_true(none.text().empty());   // no errors, no lines
	e.by_status[IBV_WC_RETRY_EXC_ERR] = 2;
	e.by_status[IBV_WC_WR_FLUSH_ERR] = 5;
	e.total = 7;
	e.first_status = IBV_WC_RETRY_EXC_ERR;
	e.first_opcode = IBV_WC_SEND;
	e.first_wr_id = 42;
	rp::Report out(nullptr);
	rp::print_wc_errors(out, "requester", e);
	assert_string_equal(out.text().c_str(),
			    "  requester completion errors: 5 x Work Request Flushed Error\n"
			    "  requester completion errors: 2 x transport retry counter exceeded\n"
			    "  requester first error:  transport retry counter exceeded (opcode 0, wr_id 42)\n");
}

void async_events(void **)
{
	rp::AsyncEventWatch a, b;
	a.counts[IBV_EVENT_PORT_ERR].store(1);
	snprintf(a.lines[0], sizeof(a.lines[0]), "port 1 of rxe0: IBV_EVENT_PORT_ERR");
	a.kept.store(1);
	b.counts[IBV_EVENT_QP_FATAL].store(2);
	rp::Report out(nullptr);
	rp::print_async_events(out, std::vector<const rp::AsyncEventWatch *>{&a, &b});
	assert_string_equal(out.text().c_str(), "  async events:        3\n"
						"  async event:         port 1 of rxe0: IBV_EVENT_PORT_ERR\n");
}

} // namespace

int main()
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(collects_into_a_string),
		cmocka_unit_test(long_lines_whole),
		cmocka_unit_test(writes_to_a_stream),
		cmocka_unit_test(completion_errors),
		cmocka_unit_test(async_events),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
