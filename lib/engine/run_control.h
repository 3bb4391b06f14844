/* What the two roles of a loopback run share: a few atomics, each with one writer. */
#pragma once

#include <atomic>
#include <cstdint>

namespace rp {

struct alignas(64) RunControl {
	std::atomic<bool> writer_done{false};   // writer: wo (release), receiver/main: ro
	std::atomic<uint64_t> writer_sent{0};   // writer: wo before writer_done, receiver: ro
	std::atomic<bool> abort{false};         // any lcore: wo on a fatal error, all: ro
};

} // namespace rp
