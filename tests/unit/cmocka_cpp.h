/* cmocka.h for C++: its headers need the C standard ones first and C linkage. */
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <csetjmp>

extern "C" {
#include <cmocka.h>
}
