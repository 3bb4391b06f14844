/* DPDK telemetry endpoints for a running rdmapipe, read with dpdk-telemetry.py (Debian
 * package dpdk-dev) on the socket EAL opens (/var/run/dpdk/<file-prefix>/dpdk_telemetry.v2):
 *   /rdmapipe/stats[,FLOW]  per flow: sent, completed, errors, outstanding, rates, progress
 *   /rdmapipe/flows         per flow: verb, size, QPs, batch, signalling, rate limit, messages
 *   /rdmapipe/lcores        per lcore: role, busy and idle polls, receives, SRQ occupancy
 *   /rdmapipe/config        the device and the run's settings
 * The endpoints run on DPDK's telemetry thread and read only the lcores' published
 * totals (relaxed atomics); the run they describe is swapped under a mutex that only
 * the control plane takes. */
#pragma once

#include "control/stats.h"

#include <string>

namespace rp {

/* Once, after rte_eal_init. Returns 0, or -1 with *err. */
int telemetry_register(std::string *err);

/* The run the endpoints describe from now on (nullptr: none; they say so). */
void telemetry_set_run(const RunView *v);

} // namespace rp
