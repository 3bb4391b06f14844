/* A bell lcores with nothing to do sleep on (a futex word): whoever changes what they
 * wait for (a requester done, an abort, the console's end, a stop) rings it, and every
 * sleeper wakes at once. A sleeper reads the word, looks once more at what it waits
 * for, then sleeps only if the word is unchanged: a ring in between is never lost. */
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <ctime>

namespace rp {

struct Bell {
	std::atomic<uint32_t> word{0};

	uint32_t read() const { return word.load(std::memory_order_acquire); }

	/* Any thread, also a signal handler (a futex call is a plain system call). */
	void ring()
	{
		word.fetch_add(1, std::memory_order_acq_rel);
		syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
	}

	/* Sleeps until rung after `seen` was read, a signal, or timeout_ms. */
	void wait(uint32_t seen, int timeout_ms) const
	{
		timespec t{timeout_ms / 1000, static_cast<long>(timeout_ms % 1000) * 1000000L};
		syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, seen, &t, nullptr, 0);
	}
};

} // namespace rp
