#!/usr/bin/env python3
"""The page of `ccbench-report html` in a real browser (headless Chromium).

  console     no console message at all (no JS error, no CSP violation); the detector is proven on two
              negative-control pages first: an uncaught exception, and an inline script the page's CSP blocks
  dom         --dump-dom: the hostname `<script>document.title=1</script>` is text, there is no <script>
              element, the <title> is the page's own; the DOM checker is proven on the CSP control's dump
  screenshot  the first plot is drawn: its plot area (found by its background colour) holds pixels of each of
              its four series colours
  fleet       the fleet heatmap of the three real 4-host sweeps (tests/data/report/runs/fleet-*.json): in the
              DOM one cell per ordered pair of hosts (12), each with a <title>, node2's row and column outlined
              on the bad-host page, node1-node3's cells on the bad-link page, nothing on the equal page; in
              the screenshot the outline colour's pixels (none on the equal page: the control), red cells and
              green cells
  raster      a synthetic sweep of 120 hosts (tests/tools/synthetic_fleet.py), too many for a cell per pair: one
              image (a pixel per pair) with n30's and n90's rows and columns outlined, no cell element, the LOW
              pairs alone in the table; in the screenshot, red where the bad hosts' pairs are, and green

Exit 0 pass, 1 fail, 77 skipped (no `chromium` on PATH). The page and the screenshot stay in a kept temp dir.
Usage: html_chromium_test.py --report BIN --data tests/data/report [--profiles DIR]
"""
import argparse
import html.parser
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
RUNS = ["allreduce-np4-a.json", "allreduce-np4-b.json", "hostile-names.json"]
TITLE = "ccbench report"  # HtmlOptions' default (the test passes no --title)
HOSTNAME = "<script>document.title=1</script>"  # hostile-names.json's hostname
PLOT_BACKGROUND = (0xF5, 0xF7, 0xFB)  # svg_plot.cpp's kPlotBackground
# html.cpp's palette: the first plot (np4-a and np4-b, 2 placements each) uses the first four colours only.
SERIES_COLOURS = {"#1f77b4": "base out-of-place", "#ff7f0e": "base in-place", "#2ca02c": "rerun out-of-place",
                  "#d62728": "rerun in-place"}
UNUSED_COLOUR = "#9467bd"
MIN_SERIES_PIXELS = 40  # measured: 147..799 per series at 1280x2000, scale 1
COLOUR_TOLERANCE = 2  # per channel
WINDOW = (1280, 2000)
EXPECTED_SVGS = 2  # the all_reduce overlay and hostile-names' sendrecv
VOID_ELEMENTS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
CONSOLE_MARKERS = (":CONSOLE", "Uncaught", "Content Security Policy", "Refused to")

NEGATIVE_THROW = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>control</title></head>
<body><p>control</p><script>throw new Error("ccbench-negative-control")</script></body></html>
"""
NEGATIVE_CSP = """<!DOCTYPE html><html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>control</title></head><body><p>control</p><script>document.title = "ran"</script></body></html>
"""


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def ensure_pil():
    """PIL (python3-pil) lives in the distribution's python; CMake may have found another interpreter."""
    if importlib.util.find_spec("PIL") is not None:
        return
    system = "/usr/bin/python3"
    if os.path.exists(system) and os.path.realpath(system) != os.path.realpath(sys.executable):
        if subprocess.run([system, "-c", "import PIL"], capture_output=True).returncode == 0:
            os.execv(system, [system, *sys.argv])
    fail("python module PIL is missing (apt-get install python3-pil)")


class Browser:
    def __init__(self, binary, workdir):
        self.binary = binary
        self.workdir = workdir
        self.calls = 0

    def run(self, page, *args):
        """Loads `page` once in a fresh profile; returns (stdout, the console lines of stderr)."""
        self.calls += 1
        profile = os.path.join(self.workdir, f"profile-{self.calls}")
        cmd = [self.binary, "--headless", "--disable-gpu", f"--user-data-dir={profile}", "--no-first-run",
               "--disable-extensions", "--disable-background-networking", "--enable-logging=stderr", "--v=0",
               "--force-device-scale-factor=1", "--force-color-profile=srgb", "--hide-scrollbars", *args,
               "file://" + os.path.abspath(page)]
        if os.geteuid() == 0:
            cmd.insert(1, "--no-sandbox")
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=120)
        except subprocess.TimeoutExpired:
            fail(f"chromium did not finish within 120 s on {page}")
        shutil.rmtree(profile, ignore_errors=True)
        if p.returncode != 0:
            fail(f"chromium exited {p.returncode} on {page}:\n{p.stderr[-2000:]}")
        return p.stdout, console_lines(p.stderr)


def console_lines(stderr):
    return [line for line in stderr.splitlines() if any(marker in line for marker in CONSOLE_MARKERS)]


class Dom(html.parser.HTMLParser):
    """What the checks need from a DOM dump: elements by name, the head's <title>, the text."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.counts = {}
        self.head_title = None
        self.text = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.counts[tag] = self.counts.get(tag, 0) + 1
        if tag not in VOID_ELEMENTS:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop() != tag:
            pass

    def handle_data(self, data):
        self.text.append(data)
        if self.stack[-2:] == ["head", "title"]:
            self.head_title = (self.head_title or "") + data


def check_detectors(browser, workdir):
    """The console detector and the DOM checker must see what they are there to see."""
    controls = {"uncaught exception": NEGATIVE_THROW, "inline script blocked by the CSP": NEGATIVE_CSP}
    for what, text in controls.items():
        page = os.path.join(workdir, "control-" + what.split()[0] + ".html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(text)
        dom, lines = browser.run(page, "--dump-dom")
        if not lines:
            fail(f"the console detector reported nothing for the negative control ({what}): it cannot be trusted")
        print(f"detector: negative control ({what}) reported: {lines[0][:160]}")
        if what.startswith("inline") and (Dom(dom).counts.get("script", 0) != 1 or Dom(dom).head_title != "control"):
            fail("the DOM checker did not find the control's <script> element or its <title>")


def check_dom(browser, page):
    dump, lines = browser.run(page, "--dump-dom")
    if lines:
        fail("console messages while loading the page:\n" + "\n".join(lines))
    dom = Dom(dump)
    if dom.counts.get("script", 0):
        fail(f"the DOM holds {dom.counts['script']} <script> element(s)")
    if dom.head_title != TITLE:
        fail(f"the <title> is {dom.head_title!r}, expected {TITLE!r}")
    if HOSTNAME not in "".join(dom.text):
        fail(f"the hostname {HOSTNAME!r} is not text in the DOM")
    if "&lt;script&gt;document.title=1&lt;/script&gt;" not in dump:
        fail("the hostname is not escaped in the DOM dump")
    if dom.counts.get("svg", 0) != EXPECTED_SVGS:
        fail(f"{dom.counts.get('svg', 0)} <svg> elements, expected {EXPECTED_SVGS}")
    for tag in ("img", "iframe", "object", "embed", "link"):
        if dom.counts.get(tag, 0):
            fail(f"the DOM holds a <{tag}> element")
    print(f"dom: no console message, no <script>, title {TITLE!r}, hostname as text, {EXPECTED_SVGS} <svg>")


def rgb(colour):
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def first_plot_area(image):
    """Bounding box of the first region painted in the plot background (grid lines split it into rows)."""
    width, height = image.size
    px = image.load()
    rows = [y for y in range(height) if any(px[x, y] == PLOT_BACKGROUND for x in range(0, width, 2))]
    if not rows:
        fail("no plot area (background " + "#%02x%02x%02x" % PLOT_BACKGROUND + ") in the screenshot")
    top = bottom = rows[0]
    for y in rows[1:]:
        if y - bottom > 4:
            break
        bottom = y
    xs = [x for y in range(top, bottom + 1) for x in range(width) if px[x, y] == PLOT_BACKGROUND]
    return min(xs), top, max(xs), bottom


def count_colour(image, box, colour):
    px = image.load()
    target = rgb(colour)
    x0, y0, x1, y1 = box
    return sum(1 for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)
               if all(abs(a - b) <= COLOUR_TOLERANCE for a, b in zip(px[x, y][:3], target)))


def check_screenshot(browser, page, png):
    from PIL import Image
    _, lines = browser.run(page, f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--screenshot={png}")
    if lines:
        fail("console messages while taking the screenshot:\n" + "\n".join(lines))
    if not os.path.exists(png):
        fail("chromium wrote no screenshot")
    image = Image.open(png).convert("RGB")
    box = first_plot_area(image)
    x0, y0, x1, y1 = box
    # svg_plot.cpp's plot area is 658 x 300 at scale 1.
    if not (600 <= x1 - x0 + 1 <= 720 and 270 <= y1 - y0 + 1 <= 330):
        fail(f"the first plot area is {x1 - x0 + 1} x {y1 - y0 + 1} px at {box}, expected about 658 x 300")
    counts = {colour: count_colour(image, box, colour) for colour in [*SERIES_COLOURS, UNUSED_COLOUR]}
    summary = ", ".join(f"{SERIES_COLOURS.get(c, 'unused')} {c}: {n}" for c, n in counts.items())
    print(f"screenshot: first plot area {x1 - x0 + 1} x {y1 - y0 + 1} px at ({x0}, {y0}); pixels {summary}")
    for colour, what in SERIES_COLOURS.items():
        if counts[colour] < MIN_SERIES_PIXELS:
            fail(f"series {what} ({colour}): {counts[colour]} pixels in the first plot, expected >= "
                 f"{MIN_SERIES_PIXELS}")
    if counts[UNUSED_COLOUR]:
        fail(f"{counts[UNUSED_COLOUR]} pixels of {UNUSED_COLOUR}, a colour the first plot does not use")


FLEET_HOSTS = ["node0", "node1", "node2", "node3"]
FLEET_FLAG = "#c000c0"  # fleet_html.cpp's kFlagColour
FLEET_PAGES = {  # fixture: (flagged hosts, flagged links)
    "fleet-equal.json": (set(), set()),
    "fleet-host.json": ({"node2"}, set()),
    "fleet-link.json": (set(), {("node1", "node3"), ("node3", "node1")}),
}
MIN_FLAG_PIXELS = 300  # an outline of 4 px around 4 cells of 44 px is ~2,700 px; one around 1 cell ~650


class Rects(html.parser.HTMLParser):
    """The heatmap's <rect> elements (class and data-* attributes) and the <title> text inside each."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.rects = []
        self.in_rect_title = False
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag == "rect":
            self.rects.append(dict(attrs, title=""))
        self.in_rect_title = tag == "title" and bool(self.rects)

    def handle_endtag(self, tag):
        if tag == "title":
            self.in_rect_title = False

    def handle_data(self, data):
        if self.in_rect_title:
            self.rects[-1]["title"] += data

    def of_class(self, name):
        return [r for r in self.rects if name in r.get("class", "").split()]


def count_matching(image, test):
    px = image.load()
    width, height = image.size
    return sum(1 for y in range(height) for x in range(width) if test(px[x, y][:3]))


def check_fleet(browser, report, data, workdir):
    from PIL import Image
    flag = rgb(FLEET_FLAG)
    for fixture, (hosts, links) in FLEET_PAGES.items():
        page = os.path.join(workdir, fixture.replace(".json", ".html"))
        png = page.replace(".html", ".png")
        p = subprocess.run([report, "html", os.path.join(data, "runs", fixture), "-o", page], capture_output=True,
                           text=True, timeout=120)
        if p.returncode != 0:
            fail(f"ccbench-report html {fixture} exited {p.returncode}: {p.stderr.strip()}")
        dump, lines = browser.run(page, "--dump-dom")
        if lines:
            fail(f"{fixture}: console messages:\n" + "\n".join(lines))
        rects = Rects(dump)
        cells = rects.of_class("cell")
        ordered = {(r.get("data-a"), r.get("data-b")) for r in cells}
        expected = {(a, b) for a in FLEET_HOSTS for b in FLEET_HOSTS if a != b}
        if len(cells) != 12 or ordered != expected:
            fail(f"{fixture}: {len(cells)} cells for {sorted(ordered)}, expected one per ordered pair of 4 hosts")
        untitled = [r for r in cells if "GB/s" not in r["title"] or "% of the reference" not in r["title"]]
        if untitled:
            fail(f"{fixture}: cells without their value in a <title>: {untitled[:2]}")
        flagged_hosts = {r.get("data-host") for r in rects.of_class("flag-host")}
        flagged_links = {(r.get("data-a"), r.get("data-b")) for r in rects.of_class("flag-link")}
        if flagged_hosts != hosts or {tuple(sorted(link)) for link in flagged_links} != {tuple(sorted(x)) for x in links}:
            fail(f"{fixture}: outlined hosts {flagged_hosts}, links {flagged_links}; expected {hosts}, {links}")
        _, lines = browser.run(page, f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--screenshot={png}")
        if lines or not os.path.exists(png):
            fail(f"{fixture}: no screenshot, or console messages: {lines}")
        image = Image.open(png).convert("RGB")
        outline = count_matching(image, lambda c: all(abs(a - b) <= COLOUR_TOLERANCE for a, b in zip(c, flag)))
        red = count_matching(image, lambda c: c[0] > 200 and c[1] < 140 and c[2] < 100)
        green = count_matching(image, lambda c: c[0] < 80 and c[1] > 120 and c[2] < 110)
        print(f"fleet {fixture}: {len(cells)} cells, outlined hosts {sorted(flagged_hosts)}, links "
              f"{sorted(flagged_links)}; screenshot pixels: outline {outline}, red {red}, green {green}")
        if (outline >= MIN_FLAG_PIXELS) != bool(hosts or links) or (not hosts and not links and outline):
            fail(f"{fixture}: {outline} pixels of the outline colour {FLEET_FLAG}")
        if hosts and red < 3 * 40 * 40:  # node2's 6 cells are red; 3 at least, of ~40 x 40 px inside outlines
            fail(f"{fixture}: {red} red pixels, expected node2's low cells")
        if green < 4 * 40 * 40:
            fail(f"{fixture}: {green} green pixels, expected the fine pairs' cells")
    print(f"kept: {workdir}/fleet-*.html and .png")


RASTER_HOSTS = 120
RASTER_BAD = {30: 0.5, 90: 0.5}


def check_fleet_raster(browser, report, workdir):
    from PIL import Image
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
    import synthetic_fleet
    sweep = os.path.join(workdir, f"fleet-{RASTER_HOSTS}.json")
    synthetic_fleet.write_sweep(sweep, RASTER_HOSTS, bad=RASTER_BAD)
    page = os.path.join(workdir, "fleet-raster.html")
    png = page.replace(".html", ".png")
    p = subprocess.run([report, "html", sweep, "-o", page], capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail(f"ccbench-report html of {RASTER_HOSTS} hosts exited {p.returncode}: {p.stderr.strip()}")
    size = os.path.getsize(page)
    dump, lines = browser.run(page, "--dump-dom")
    if lines:
        fail("raster page: console messages:\n" + "\n".join(lines))
    rects = Rects(dump)
    flagged = {r.get("data-host") for r in rects.of_class("flag-host")}
    images = dump.count('class="heatmap-image"')
    low_rows = dump.count("LOW (BAD HOST")
    expected_low = sum(RASTER_HOSTS - 1 for _ in RASTER_BAD) - 1  # the pair of the two bad hosts once
    if rects.of_class("cell") or images != 1 or flagged != {f"n{h}" for h in RASTER_BAD} or low_rows != expected_low:
        fail(f"raster page: {len(rects.of_class('cell'))} cells, {images} images, outlined {flagged}, "
             f"{low_rows} LOW rows (expected {expected_low})")
    _, lines = browser.run(page, f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--screenshot={png}")
    if lines or not os.path.exists(png):
        fail(f"raster page: no screenshot, or console messages: {lines}")
    image = Image.open(png).convert("RGB")
    red = count_matching(image, lambda c: c[0] > 200 and c[1] < 140 and c[2] < 100)
    green = count_matching(image, lambda c: c[0] < 80 and c[1] > 120 and c[2] < 110)
    print(f"fleet raster: {RASTER_HOSTS} hosts, page {size / 1024:.0f} KiB, 1 image, outlined {sorted(flagged)}, "
          f"{low_rows} LOW pairs tabled; screenshot pixels: red {red}, green {green}")
    # Each bad host's row and column: 2 x 119 pixels of the 120 x 120 image, each drawn 800/120 px wide.
    if red < 2 * 2 * 100 * 6 or green < 100 * 100 * 20:
        fail(f"raster page: {red} red and {green} green pixels")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--profiles")  # accepted for a uniform command line; not needed here
    args = parser.parse_args()

    chromium = shutil.which("chromium")
    if chromium is None:
        print("SKIPPED: no chromium on PATH (apt-get install chromium)")
        return SKIP
    ensure_pil()

    workdir = tempfile.mkdtemp(prefix="ccbench-html-")
    page = os.path.join(workdir, "report.html")
    png = os.path.join(workdir, "report.png")
    files = [os.path.join(args.data, "runs", name) for name in RUNS]
    p = subprocess.run([args.report, "html", *files, "-o", page], capture_output=True, text=True, timeout=120)
    if p.returncode != 0 or not os.path.exists(page):
        fail(f"ccbench-report html exited {p.returncode}: {p.stderr.strip()}")

    browser = Browser(chromium, workdir)
    check_detectors(browser, workdir)
    check_dom(browser, page)
    check_screenshot(browser, page, png)
    check_fleet(browser, args.report, args.data, workdir)
    check_fleet_raster(browser, args.report, workdir)
    print(f"kept: {page}\nkept: {png}")
    print("PASS: html page renders in chromium without console messages; hostname escaped; plot drawn; fleet "
          "heatmaps: a cell per ordered pair, the bad host and the bad link outlined, none on the equal sweep; "
          f"{RASTER_HOSTS} hosts drawn as one image with the bad hosts outlined")
    return 0


if __name__ == "__main__":
    sys.exit(main())
