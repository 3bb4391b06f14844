/* The command line's options as one table: getopt_long's arrays, --help, and the
 * docs' checks (tests/docs/options_doc.cpp) are all made from it. */
#pragma once

#include "conf/options.h"

#include <span>
#include <string>

namespace rp {

struct OptionSpec;

/* What the setters share while parsing: the options being filled, what was given
 * (the derived defaults need to know) and the row being applied. */
struct ParseState {
	RunOptions *o = nullptr;
	const OptionSpec *spec = nullptr;
	bool have_messages = false, have_size = false, have_slots = false, have_verb = false;
	ParseResult stop = ParseResult::ok;   // help or version: stop parsing there
};

/* Parses the argument (nullptr for an option without one) into st.o; returns "" or an
 * error that names the option and the value. */
using OptionSetter = std::string (*)(ParseState &st, const char *arg);

struct OptionSpec {
	const char *name;      // long name, without "--"
	char letter;           // short option, 0: none
	const char *metavar;   // the argument's name in --help and the man page; nullptr: none
	/* --help's text, lines split by '\n'; nullptr: described in another row's text. */
	const char *help;
	/* The fixed words the argument may be, space-separated (checked before the
	 * setter runs; the completion offers them); nullptr: any. */
	const char *choices;
	bool shapes;           // describes the run, so cannot be combined with -f
	OptionSetter set;
	/* The pipeline key it sets (a flow's, an io context's or run's, as a file names it):
	 * the command line's pipeline records it as given, and the validator's refusal of
	 * that key names this option. nullptr: none. */
	const char *key = nullptr;
};

/* The rows, in --help's order. */
std::span<const OptionSpec> option_table();

/* "-Q/--qps": the option that sets pipeline key `key` ("" when none does). */
std::string option_of_key(const std::string &key);

/* Index of arg among spec.choices, -1 when it is none of them. */
int option_choice(const OptionSpec &spec, const char *arg);

} // namespace rp
