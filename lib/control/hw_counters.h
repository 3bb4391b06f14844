/* A device port's hardware counters, as the kernel publishes them in
 * /sys/class/infiniband/DEV/ports/PORT/hw_counters: where the transport's
 * retransmissions and protocol errors show (rxe: completer_retry_err,
 * retry_exceeded_err, rcvd_rnr_err, send_rnr_err, out_of_sequence, duplicate_request,
 * ...; mlx5: local_ack_timeout_err, packet_seq_err, rnr_nak_retry_err, ...). Read by
 * the control plane only (files, not verbs). */
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rp {

using HwCounters = std::vector<std::pair<std::string, uint64_t>>;   // sorted by name

/* Reads them all. A device without counters gives an empty set, not an error. */
HwCounters hw_counters_read(const std::string &dev, unsigned port, const std::string &sysfs = "/sys/class/infiniband");

/* now - base for each counter of `now` that moved (a counter missing in base counts from 0). */
HwCounters hw_counters_delta(const HwCounters &base, const HwCounters &now);

} // namespace rp
