#!/usr/bin/env python3
"""Opens kernlens reports in headless Chromium from disk, as a person would.

The demo report (`kernlens demo`, issue 21's done-when): no console error or uncaught
exception; no section says there is no data without saying which input would fill it; every
left-out part names its input; the stage table has GPU wall time, busy fraction and MFU, and
each MFU cell either has a value or says why not; every figure with a mark says how it was
obtained; kernel names show their base name with the whole name on hover and in a details row;
no chart label is cut (its box lies inside its chart, and an NVTX lane label ends with its
leaf range). A multi-rank report: a GPU lane per rank and the ranks' overlap chart. A roofline run's report (`kernlens report examples/data/runs/llama_prefill_b8`):
the charts are drawn (roofline dots and roofs, op-class bars, warp stalls). Screenshots are kept
in OUT_DIR for a person to look at.

Exit 77 (CTest's skip) when no Chromium is installed (scripts/install-deps.sh installs it)."""
import argparse
import html
import os
import re
import shutil
import subprocess
import sys

SKIP = 77

# Injected into a copy of the report (the report itself carries no test code): collects
# errors, and after layout records every chart text whose box leaves its chart, as attributes
# of <html> that --dump-dom shows.
HOOK = """<script>
window.__errors = [];
window.addEventListener('error', function (e) { window.__errors.push('error: ' + e.message); });
(function () { var orig = console.error; console.error = function () {
  window.__errors.push('console.error: ' + Array.prototype.join.call(arguments, ' ')); orig.apply(console, arguments); }; })();
window.addEventListener('load', function () {
  var cut = [];
  document.querySelectorAll('svg.chart').forEach(function (svg) {
    var box = svg.getBoundingClientRect();  /* as drawn: scaled, and rotated labels turned */
    svg.querySelectorAll('text').forEach(function (t) {
      var b = t.getBoundingClientRect();
      if (b.left < box.left - 0.5 || b.right > box.right + 0.5 || b.top < box.top - 0.5 ||
          b.bottom > box.bottom + 0.5) cut.push(svg.id + ': ' + t.textContent);
    });
  });
  document.documentElement.setAttribute('data-cut', cut.join(' | ') || 'none');
  document.documentElement.setAttribute('data-errors', window.__errors.join(' | ') || 'none');
});
</script>"""

# Words that say a part has no data; such a sentence must also say which input would fill it.
NO_DATA = re.compile(r"\b(no (data|gpu timeline|timeline|roofline|warp stall\w*|advice|stages?|metrics)|not available)\b",
                     re.I)
NAMES_INPUT = re.compile(r"\b(needs|profile with|kernlens profile|give --|--\w)", re.I)


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


def text_of(fragment):
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def element(dom, tag, id_):
    m = re.search(rf'<{tag} id="{id_}".*?</{tag}>', dom, re.S)
    return m.group(0) if m else None


def cells(row):
    return re.findall(r"<td([^>]*)>(.*?)</td>", row, re.S)


def check_no_silent_gaps(dom, failures):
    """No sentence says "no data" without naming the input; each left-out part names one."""
    body = re.sub(r"<(script|style)\b.*?</\1>", "", dom, flags=re.S)
    for block in re.findall(r"<(?:p|li|td|dd)\b[^>]*>(.*?)</(?:p|li|td|dd)>", body, re.S):
        text = text_of(block)
        if NO_DATA.search(text) and not NAMES_INPUT.search(text):
            failures.append("says there is no data without the input that would fill it: " + text[:200])
    missing = element(dom, "section", "missing")
    items = re.findall(r'<li id="missing-[^"]+">(.*?)</li>', missing, re.S) if missing else []
    for item in items:
        if "needs " not in text_of(item):
            failures.append("a left-out part names no input: " + text_of(item))
    print(f"left-out parts: {len(items)}")


def check_stage_table(dom, failures):
    table = element(dom, "table", "stages")
    if not table:
        failures.append("no stage table")
        return
    headers = [text_of(h) for h in re.findall(r"<th[^>]*>(.*?)</th>", table, re.S)]
    for wanted in ("GPU wall", "Busy", "MFU"):
        if wanted not in headers:
            failures.append(f"the stage table has no '{wanted}' column ({headers})")
    if "MFU" not in headers:
        return
    mfu_col, wall_col = headers.index("MFU"), headers.index("GPU wall") if "GPU wall" in headers else None
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], re.S)
    with_mfu = 0
    for row in rows:
        c = cells(row)
        name = text_of(c[0][1])
        attrs, value = c[mfu_col]
        if text_of(value) == "-":
            if 'title="' not in attrs:
                failures.append(f"stage {name}: no MFU and no word on why")
        else:
            with_mfu += 1
            if 'title="' not in attrs:
                failures.append(f"stage {name}: MFU {text_of(value)} does not say how it was obtained")
        if wall_col is not None and text_of(c[wall_col][1]) == "-" and name != "(whole run)":
            failures.append(f"stage {name}: no GPU wall time")
    print(f"stage table: {len(rows)} stages, {with_mfu} with an MFU, columns {headers}")
    if with_mfu == 0:
        failures.append("no stage has an MFU")


def check_marks_explained(dom, failures):
    """Every marked figure has its hover text, and its table a footnote for the mark."""
    for table in re.findall(r"<table\b.*?</table>\s*(?:<p class=\"footnote\">.*?</p>)?", dom, re.S):
        marks = set(re.findall(r'<sup class="how">([^<]+)</sup>', table.split("</table>")[0]))
        footnote = re.search(r'<p class="footnote">(.*?)</p>', table, re.S)
        for mark in marks:
            if not footnote or f'<sup class="how">{mark}</sup>' not in footnote.group(1):
                failures.append(f"mark {mark} is not explained under its table")
        for attrs, value in re.findall(r"<td([^>]*)>([^<]*<sup class=\"how\">)", table):
            if 'title="' not in attrs:
                failures.append("a marked figure has no hover text: " + text_of(value))


def check_kernel_names(dom, failures):
    table = element(dom, "table", "kernels")
    rows = re.findall(r'<tr class="has-details[^"]*">(.*?)</tr>\s*<tr class="details"[^>]*>(.*?)</tr>',
                      table or "", re.S)
    print(f"top kernels table: {len(rows)} rows with details")
    if len(rows) < 10:
        failures.append(f"the kernel table has {len(rows)} rows with details")
    for row, details in rows:
        attrs, shown = cells(row)[1]
        full = re.search(r"<dt>Name</dt><dd>(.*?)</dd>", details, re.S)
        if not full:
            failures.append("a kernel's details have no name: " + text_of(shown))
            continue
        full = html.unescape(full.group(1))
        title = re.search(r'title="([^"]*)"', attrs)
        if text_of(shown) != full and (not title or html.unescape(title.group(1)) != full):
            failures.append(f"kernel {text_of(shown)}: the whole name is not on hover")
        if "\u2026" in text_of(shown):
            failures.append(f"kernel name cut in the table: {text_of(shown)}")


def check_chart_labels(dom, failures):
    """No chart text leaves its chart or ends cut short with "…"."""
    cut = re.search(r'<html[^>]*data-cut="([^"]*)"', dom)
    if not cut:
        failures.append("the label check did not run (no data-cut on <html>)")
    elif cut.group(1) != "none":
        failures.append("chart labels cut at the chart's edge: " + html.unescape(cut.group(1)))
    for chart in re.findall(r'<svg id="[^"]*" class="chart".*?</svg>', dom, re.S):
        for label in re.findall(r"<text\b.*?</text>", chart, re.S):
            if text_of(label).endswith("\u2026"):
                failures.append("a chart label is cut: " + text_of(label))


def check_labels(dom, failures):
    """Every chart label whole, and the NVTX lane labels end with their leaf range."""
    check_chart_labels(dom, failures)
    timeline = element(dom, "svg", "timeline")
    if not timeline:
        failures.append("no GPU timeline")
        return
    labels = re.findall(r'<text[^>]*class="lane-label"[^>]*aria-label="([^"]*)"[^>]*>(.*?)</text>', timeline, re.S)
    print(f"timeline: {len(labels)} lane labels")
    if not labels:
        failures.append("the timeline has no stage lane labels")
    for full, shown in labels:
        full, shown = html.unescape(full), text_of(shown)
        if not shown.endswith(full.split("/")[-1]):
            failures.append(f"lane label {shown!r} does not end with the leaf of {full!r}")


def check_rank_overlap(dom, failures):
    """A multi-rank report: the ranks section's overlap chart, a bar per rank with its compute and
    communication parts, each with its hover text (issue 17)."""
    chart = element(dom, "svg", "rank-overlap")
    if not chart:
        failures.append("no rank overlap chart in the ranks section")
        return
    labels = [text_of(t) for t in re.findall(r'<text[^>]*class="bar-label rank-label"[^>]*>.*?</text>', chart, re.S)]
    ranks = [re.match(r"rank (\d+)", label).group(1) for label in labels if re.match(r"rank \d+", label)]
    print(f"rank overlap: rank bars {labels}")
    if ranks != ["0", "1"]:
        failures.append(f"the overlap chart's rank bars are {labels}, not rank 0 and rank 1")
    for part in ("compute", "comm-overlapped", "comm-exposed"):
        bars = re.findall(rf'<rect[^>]*class="{part}"[^>]*aria-label="([^"]*)"', chart)
        if not bars:
            failures.append(f"the overlap chart has no {part} bar with a hover text")
        print(f"rank overlap: {len(bars)} {part} bars")


def check_gpu_lanes(dom, failures):
    """A multi-rank report: one busy lane per GPU of each rank in the timeline (issue 17)."""
    timeline = element(dom, "svg", "timeline")
    if not timeline:
        failures.append("no GPU timeline")
        return
    labels = [text_of(t) for t in re.findall(r'<text[^>]*class="lane-label"[^>]*>.*?</text>', timeline, re.S)]
    lanes = [label for label in labels if re.fullmatch(r"rank \d+ GPU \d+", label)]
    print(f"timeline: GPU lanes {lanes}")
    if lanes != ["rank 0 GPU 0", "rank 1 GPU 1"]:
        failures.append(f"the multi-rank timeline's GPU lanes are {lanes}, not rank 0 GPU 0 and rank 1 GPU 1")


def check_charts(dom, failures):
    roofline = element(dom, "svg", "roofline")
    if not roofline:
        failures.append("no roofline chart")
    else:
        dots = len(re.findall(r'<circle[^>]*class="dot op-', roofline))
        roofs = len(re.findall(r'class="roof (compute|memory)-roof"', roofline))
        print(f"roofline: {dots} dots, {roofs} roofs")
        if dots < 5:
            failures.append(f"the roofline has {dots} dots")
        if roofs < 2:
            failures.append(f"the roofline has {roofs} roofs")
        if "<title>" in roofline:
            failures.append("the hover script did not run (titles still in the roofline)")
    for chart in ("op-class-chart", "stall-chart"):
        if f'<svg id="{chart}"' not in dom:
            failures.append(f"no {chart}")


def open_report(browser, report, out_dir, failures):
    """The report's DOM after its scripts ran, and a screenshot beside it."""
    hooked = report.replace(".html", "-hooked.html")
    with open(report, encoding="utf-8") as f:
        page = f.read()
    with open(hooked, "w", encoding="utf-8") as f:
        f.write(page.replace("<head>", "<head>\n" + HOOK, 1))
    dom = run_chromium(browser, ["--dump-dom"], "file://" + hooked)
    if dom.returncode != 0:
        failures.append(f"chromium --dump-dom exited {dom.returncode}: {dom.stderr[-2000:]}")
    for line in dom.stderr.splitlines():
        if "Uncaught" in line or ("CONSOLE" in line and "error" in line.lower()):
            failures.append("browser log: " + line)
    errors = re.search(r'<html[^>]*data-errors="([^"]*)"', dom.stdout)
    if not errors:
        failures.append("the error hook did not run (no data-errors on <html>)")
    elif errors.group(1) != "none":
        failures.append("errors in the page: " + errors.group(1))
    png = os.path.join(out_dir, os.path.basename(report).replace(".html", ".png"))
    shot = run_chromium(browser, ["--window-size=1400,2400", f"--screenshot={png}"], "file://" + report)
    if shot.returncode != 0 or not os.path.exists(png) or os.path.getsize(png) < 20000:
        failures.append(f"no screenshot at {png}: {shot.stderr[-2000:]}")
    else:
        print(f"screenshot: {png}")
    return dom.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernlens", required=True)
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("--roofline-run", required=True, help="a run directory whose report draws every chart")
    parser.add_argument("--multirank", nargs=2, required=True, help="two ranks' traces (GPU 0 and GPU 1)")
    args = parser.parse_args()
    browser = chromium()
    if not browser:
        print("SKIP: no chromium installed (scripts/install-deps.sh installs Debian's)")
        return SKIP
    os.makedirs(args.out_dir, exist_ok=True)
    failures = []

    # The demo report (issue 21's done-when), then a roofline run's report for the charts.
    pages = [("demo-report.html", ["demo"], [check_no_silent_gaps, check_stage_table, check_marks_explained,
                                             check_kernel_names, check_labels]),
             ("roofline-report.html", ["report", args.roofline_run], [check_charts, check_no_silent_gaps,
                                                                      check_marks_explained, check_chart_labels]),
             ("multirank-report.html", ["report", *args.multirank], [check_gpu_lanes, check_rank_overlap, check_chart_labels])]
    for name, command, checks in pages:
        report = os.path.abspath(os.path.join(args.out_dir, name))
        made = subprocess.run([args.kernlens, *command, "-o", report], capture_output=True, text=True)
        if made.returncode != 0:
            print(made.stdout, made.stderr)
            return 1
        dom = open_report(browser, report, args.out_dir, failures)
        for check in checks:
            check(dom, failures)

    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
