/* EAL for unit tests that need DPDK memory (mempools): one lcore, no hugepages, no
 * shared files, so tests can run in parallel and anywhere. */
#pragma once

#include <rte_eal.h>

#include <cstdio>

inline bool eal_for_tests(const char *name)
{
	static char a1[] = "--no-huge", a2[] = "--no-pci", a3[] = "--no-shconf", a4[] = "-m", a5[] = "64",
		    a6[] = "-l", a7[] = "0", a8[] = "--log-level=lib.eal:error";
	char *eal[] = {const_cast<char *>(name), a1, a2, a3, a4, a5, a6, a7, a8, nullptr};
	if (rte_eal_init(9, eal) < 0) {
		fprintf(stderr, "%s: rte_eal_init failed\n", name);
		return false;
	}
	return true;
}
