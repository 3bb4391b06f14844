/* Pieces of every run's summary, printed by the main lcore once the lcores are done:
 * how completions were polled, error counts by completion status, async events. */
#pragma once

#include "control/report_writer.h"
#include "engine/counters.h"
#include "engine/verbs_ops.h"
#include "verbs/async_events.h"

#include <cstdint>
#include <vector>

namespace rp {

const char *cq_ops_str(const VerbsOps *ops);   // the CQ polling variant, in words
double tsc_to_s(uint64_t tsc);
void print_wc_errors(Report &out, const char *who, const WcErrorCounts &e);   // nothing when there were none
void print_async_events(Report &out, const AsyncEventWatch &w);
void print_async_events(Report &out, const std::vector<const AsyncEventWatch *> &ws);   // several devices' events

} // namespace rp
