"""What the independent checks share: running `kernlens analyze --format json` on each file,
comparing its kernel table with totals recomputed without kernlens (exact decimals, to the
nanosecond), and reporting per file. Used by check_*_totals.py."""
import argparse
import json
import subprocess
from decimal import Decimal


def analyze(kernlens, path):
    """kernlens's JSON analysis of `path`, or the error that stopped it."""
    out = subprocess.run([kernlens, "analyze", path, "--format", "json"], capture_output=True, text=True)
    if out.returncode != 0:
        return None, f"kernlens exited {out.returncode}: {out.stderr.strip()}"
    return json.loads(out.stdout), None


def differs(a, b):
    """A kernlens number (a float) and an exact Decimal, apart by half a nanosecond or more."""
    return abs(Decimal(repr(a)) - b) >= Decimal("0.5")


def compare_kernels(doc, want):
    """Errors in doc's totals and kernel rows against want: {name: [total_ns, launches]}."""
    errors = []
    total = sum(t for t, _ in want.values())
    launches = sum(n for _, n in want.values())
    if differs(doc["totals"]["kernel_time_ns"], total):
        errors.append(f"kernel_time_ns {doc['totals']['kernel_time_ns']} != {total}")
    if doc["totals"]["launches"] != launches:
        errors.append(f"launches {doc['totals']['launches']} != {launches}")
    if doc["totals"]["unique_kernels"] != len(want):
        errors.append(f"unique_kernels {doc['totals']['unique_kernels']} != {len(want)}")

    # A kernel's name as the file spells it: kernlens shows mangled names demangled.
    def source_name(k):
        return k.get("mangled_name", k["name"])

    got = {source_name(k): (k["total_ns"], k["launches"]) for k in doc["kernels"]}
    for name, (ns, n) in want.items():
        if name not in got:
            errors.append(f"missing kernel {name[:80]}")
        elif differs(got[name][0], ns) or got[name][1] != n:
            errors.append(f"{name[:80]}: {got[name]} != ({ns}, {n})")
    ranked = [source_name(k) for k in doc["kernels"]]
    want_ranked = [n for n, _ in sorted(want.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))]
    if ranked != want_ranked:
        errors.append("kernels are not ranked by total time")
    return errors


def report(path, errors):
    """Prints one file's result and its errors; True when it failed."""
    print(("FAIL " if errors else "ok   ") + path)
    for e in errors:
        print("     " + e)
    return bool(errors)


def main(description, check_file):
    """Runs `check_file(doc, path) -> [error]` on every file given; exit status 1 on any error."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernlens", required=True)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    failed = 0
    for path in args.files:
        doc, failure = analyze(args.kernlens, path)
        failed += report(path, [failure] if failure else check_file(doc, path))
    return 1 if failed else 0
