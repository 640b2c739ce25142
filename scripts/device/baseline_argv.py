#!/usr/bin/env python3
"""The usual baseline of `kernlens profile`'s deep pass: ncu with the same sections over every
launch of the NVTX range. From the output of `kernlens profile --dry-run`, the deep pass's ncu
argv without its kernel filters, --kill and -o, with `-o REPORT_BASE` before the program; one
argument a line (for bash's mapfile).

    scripts/device/baseline_argv.py DRYRUN_OUTPUT REPORT_BASE
"""
import shlex
import sys

argv = shlex.split([line for line in open(sys.argv[1]) if "--kernel-name-base" in line][0])
drop = {"--kernel-name-base", "--kernel-name", "--kernel-id", "--launch-skip", "--launch-count", "--kill", "-o"}
keep, i = [], 0
while i < len(argv):
    if argv[i] in drop:
        i += 2
        continue
    keep.append(argv[i])
    i += 1
at = keep.index("python3") if "python3" in keep else len(keep)
keep[at:at] = ["-o", sys.argv[2]]
print("\n".join(keep))
