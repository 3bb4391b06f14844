#!/usr/bin/env python3
"""repro_template.c as a C++ raw string (kReproTemplate) for lib/explore/repro.cpp."""
import sys

text = open(sys.argv[1]).read()
if ")RPTEMPLATE" in text:
    sys.exit(sys.argv[1] + ": holds the raw string's delimiter )RPTEMPLATE")
with open(sys.argv[2], "w") as out:
    out.write('static const char kReproTemplate[] = R"RPTEMPLATE(' + text + ')RPTEMPLATE";\n')
