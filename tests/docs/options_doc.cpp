/* Prints what the docs must say about the command line's options, from the options
 * table (lib/conf/options_table.h), for options_table.sh to compare with the man page
 * and the bash completion:
 *   options_doc man       each option's header line in the man page's OPTIONS
 *   options_doc complete  each option: its words, then what completes its argument
 *                         ("choices WORD...", "files", "value" or "none")
 *   options_doc stage-kinds  docs/configuration.md's table of stage kinds (kinds.h) */
#include "conf/options_table.h"
#include "conf/stage_kinds.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

/* "--flow-window" as roff writes it: "\-\-flow\-window". */
std::string roff(const std::string &s)
{
	std::string out;
	for (char c : s)
		out += c == '-' ? std::string("\\-") : std::string(1, c);
	return out;
}

/* "N[,N...]" -> "\fIN\fR[,\fIN\fR...]": the metavar's names in italics. */
std::string italic_names(const char *meta)
{
	std::string out;
	for (const char *p = meta; *p != '\0';) {
		size_t n = 0;
		while (isupper(static_cast<unsigned char>(p[n])))
			n++;
		if (n == 0) {
			out += *p++;
			continue;
		}
		out += "\\fI" + std::string(p, n) + "\\fR";
		p += n;
	}
	return out;
}

/* The man page's forms: .B --name, .BI --name " META", .BR -x ", " --name [" META"]. */
std::string man_header(const rp::OptionSpec &s)
{
	std::string name = roff(std::string("--") + s.name);
	if (s.letter != 0) {
		std::string h = ".BR \\-" + std::string(1, s.letter) + " \", \" " + name;
		return s.metavar ? h + " \" " + italic_names(s.metavar) + "\"" : h;
	}
	if (s.metavar == nullptr)
		return ".B " + name;
	if (strpbrk(s.metavar, "[]") != nullptr)   // brackets stay roman
		return ".BR " + name + " \" " + italic_names(s.metavar) + "\"";
	return ".BI " + name + " \" " + s.metavar + "\"";
}

void print_completion(const rp::OptionSpec &s)
{
	printf("--%s", s.name);
	if (s.letter != 0)
		printf(" -%c", s.letter);
	if (s.choices != nullptr)
		printf(" choices %s\n", s.choices);
	else if (strcmp(s.name, "verb") == 0) {
		printf(" choices");
		for (const rp::VerbInfo &v : rp::kVerbs)
			printf(" %s", v.name);
		printf("\n");
	} else if (s.metavar != nullptr && strncmp(s.metavar, "FILE", 4) == 0)
		printf(" files\n");
	else
		printf(s.metavar ? " value\n" : " none\n");
}

} // namespace

/* The stage kinds as a markdown table, one row each. */
void print_stage_kinds()
{
	printf("| kind | input | output | flow | io context | what it does |\n|---|---|---|---|---|---|\n");
	for (const rp::StageKindInfo *k : rp::stage_kinds())
		printf("| `%s` | %s | %s | %s | %s | %s%s |\n", k->name, rp::ring_count_text(k->in, true).c_str(),
		       rp::ring_count_text(k->out, false).c_str(), k->needs_flow ? "yes" : "no", k->needs_io ? "yes" : "no", k->what,
		       k->writes_file ? " (`file`, `snaplen`)" : "");
}

int main(int argc, char **argv)
{
	const char *what = argc == 2 ? argv[1] : "";
	if (strcmp(what, "stage-kinds") == 0) {
		print_stage_kinds();
		return 0;
	}
	if (strcmp(what, "man") != 0 && strcmp(what, "complete") != 0) {
		fprintf(stderr, "usage: options_doc man|complete|stage-kinds\n");
		return 2;
	}
	for (const rp::OptionSpec &s : rp::option_table()) {
		if (what[0] == 'm')
			printf("%s\n", man_header(s).c_str());
		else
			print_completion(s);
	}
	return 0;
}
