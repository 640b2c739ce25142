#!/usr/bin/env python3
"""Opens the demo report in headless Chromium from disk, as a person would: no console error
or uncaught exception, the charts are in the DOM (roofline dots, roofs, bars), the script ran,
and a screenshot is kept in OUT_DIR/demo-report.png for a person to look at.

Exit 77 (CTest's skip) when no Chromium is installed (scripts/install-deps.sh installs it)."""
import argparse
import os
import re
import shutil
import subprocess
import sys

SKIP = 77

# Collects errors into an attribute of <html> that --dump-dom shows; injected into a copy of the
# report, so the report itself carries no test code.
HOOK = """<script>
window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push('error: ' + e.message); });
(function () { var orig = console.error; console.error = function () {
  window.__errors.push('console.error: ' + Array.prototype.join.call(arguments, ' ')); orig.apply(console, arguments); }; })();
window.addEventListener('load', function () {
  document.documentElement.setAttribute('data-errors', window.__errors.join(' | ') || 'none'); });
</script>"""


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run_chromium(browser, args, url):
    cmd = [browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000"] + args + [url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def check_dom(dom, failures):
    errors = re.search(r'<html[^>]*data-errors="([^"]*)"', dom)
    if not errors:
        failures.append("the error hook did not run (no data-errors on <html>)")
    elif errors.group(1) != "none":
        failures.append("errors in the page: " + errors.group(1))
    roofline = re.search(r'<svg id="roofline".*?</svg>', dom, re.S)
    if not roofline:
        failures.append("no roofline chart")
    else:
        dots = len(re.findall(r'<circle[^>]*class="dot op-', roofline.group(0)))
        roofs = len(re.findall(r'class="roof (compute|memory)-roof"', roofline.group(0)))
        print(f"roofline: {dots} dots, {roofs} roofs")
        if dots < 5:
            failures.append(f"the roofline has {dots} dots")
        if roofs < 2:
            failures.append(f"the roofline has {roofs} roofs")
        if "<title>" in roofline.group(0):
            failures.append("the hover script did not run (titles still in the roofline)")
    for chart in ("op-class-chart", "stall-chart"):
        if f'<svg id="{chart}"' not in dom:
            failures.append(f"no {chart}")
    kernels = re.search(r'<table id="kernels".*?</table>', dom, re.S)
    rows = len(re.findall(r"<tr>", kernels.group(0))) - 1 if kernels else 0
    print(f"top kernels table: {rows} rows")
    if rows < 10:
        failures.append(f"the kernel table has {rows} rows")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernlens", required=True)
    parser.add_argument("--out-dir", required=True)
    args = parser.parse_args()
    browser = chromium()
    if not browser:
        print("SKIP: no chromium installed (scripts/install-deps.sh installs Debian's)")
        return SKIP
    os.makedirs(args.out_dir, exist_ok=True)
    report = os.path.abspath(os.path.join(args.out_dir, "demo-report.html"))
    demo = subprocess.run([args.kernlens, "demo", "-o", report], capture_output=True, text=True)
    if demo.returncode != 0:
        print(demo.stdout, demo.stderr)
        return 1
    hooked = report.replace(".html", "-hooked.html")
    with open(report, encoding="utf-8") as f:
        page = f.read()
    with open(hooked, "w", encoding="utf-8") as f:
        f.write(page.replace("<head>", "<head>\n" + HOOK, 1))

    failures = []
    dom = run_chromium(browser, ["--dump-dom"], "file://" + hooked)
    if dom.returncode != 0:
        failures.append(f"chromium --dump-dom exited {dom.returncode}: {dom.stderr[-2000:]}")
    for line in dom.stderr.splitlines():
        if "Uncaught" in line or ("CONSOLE" in line and "error" in line.lower()):
            failures.append("browser log: " + line)
    check_dom(dom.stdout, failures)

    png = os.path.join(args.out_dir, "demo-report.png")
    shot = run_chromium(browser, ["--window-size=1400,2400", f"--screenshot={png}"], "file://" + report)
    if shot.returncode != 0 or not os.path.exists(png) or os.path.getsize(png) < 20000:
        failures.append(f"no screenshot at {png}: {shot.stderr[-2000:]}")
    else:
        print(f"screenshot: {png}")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
