#!/usr/bin/env python3
"""The designed pin types (CONTRACT.md 17, issue 32) in a real headless Chromium, on a
desktop (1400x1000), a phone (390x844) and in kiosk mode (1920x1080, 1366x768): a heatmap
with its colour scale, a JSON tree, numbered code, gauges at every pin size from 1x1 to 4x4,
a long table, a status grid, a list and a timeline. Nothing is clipped, the page never
scrolls sideways, text is at least 11 px (14 px on a 1920x1080 wall), the gauges' figures
sit inside their dials, and kiosk mode's live indicator covers no pin.

Usage: python3 tests/browser/designed_types.py [test name ...]. Starts its own server (the debug
binary, `cargo build` first; CORKBOARD_BIN names another) on a fresh SQLite store. With
CORKBOARD_SHOTS=<dir>, saves a screenshot per size there. Prints one line per test and,
last, `N passed, M failed`; exits non-zero when any failed."""

import os
import sys
import time

from playwright.sync_api import sync_playwright

from harness import Server, fits, launch, offline_images, run_tests, shot
from kiosk import CLIPPED, SMALLEST_TEXT

TESTS = []
HOSTILE = "<script>alert(1)</script>"
PAGE_SECS = 4


def test(fn):
    TESTS.append(fn)
    return fn


def heatmap():
    hours = [f"{h:02}h" for h in range(0, 24, 2)]
    days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    values = [[None if (d, h) == (5, 3) else round(((d * 7 + h * 13) % 40) * 312.5 + 40, 1)
               for h in range(len(hours))] for d in range(len(days))]
    return {"x_labels": hours, "y_labels": days, "values": values}


def document():
    return {"data": {"service": "checkout", "version": 1842, "healthy": True, "owner": None,
                     HOSTILE: HOSTILE, "regions": ["eu-west-1", "us-east-1", "ap-south-1"],
                     "limits": {"cpu": 2.5, "memory": "4Gi", "replicas": {"min": 2, "max": 12}},
                     "history": list(range(40))}}


CODE = """use std::collections::HashMap;

/// Counts the words of a text, most frequent first.
fn count(text: &str) -> Vec<(&str, usize)> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for word in text.split_whitespace() {
        *seen.entry(word).or_default() += 1;
    }
    let mut all: Vec<_> = seen.into_iter().collect();
    all.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0))); // a long line that has to scroll sideways on a narrow pin rather than wrap
    all
}
"""


def table():
    return {"columns": [{"id": "host", "name": "Host", "type": "text"},
                        {"id": "note", "name": "Note", "type": "text"},
                        {"id": "load", "name": "Load", "type": "number"},
                        {"id": "rps", "name": "Requests/s", "type": "number"},
                        {"id": "seen", "name": "Last seen", "type": "date"},
                        {"id": "up", "name": "Up", "type": "boolean"}],
            "rows": [{"id": f"r{i}", "cells": {
                "host": f"web-{i:02}", "load": round(i * 0.37, 2), "rps": i * 1234.5,
                "note": "Drained for the kernel upgrade, back after the maintenance window"
                if i % 3 == 0 else "ok",
                "seen": f"2026-11-{1 + i:02}T0{i % 10}:15:00Z", "up": i % 4 != 0}}
                for i in range(8)]}


def board(server):
    """The board: the types at the sizes a wall uses them, and a gauge at each of 1x1 to
    4x4. Returns (board id, {name: pin id})."""
    b = server.board("Designed types", "Heatmap, JSON, code, gauges and tables")
    pins = {}

    def put(name, pin_type, config, at):
        pins[name] = server.pin(pin_type, config, name, b, at)

    put("Load by hour", "heatmap", heatmap(), {"x": 0, "y": 0, "w": 6, "h": 3})
    put("Service", "json", document(), {"x": 6, "y": 0, "w": 3, "h": 3})
    put("count.rs", "code", {"language": "rust", "code": CODE}, {"x": 9, "y": 0, "w": 3, "h": 3})
    for n in range(1, 5):
        put(f"Gauge {n}x{n}", "gauge", {
            "value": [97.5, 72.5, 1234567, 18][n - 1], "min": 0,
            "max": [100, 100, 2000000, 100][n - 1], "label": "Disk used",
            "unit": ["%", "%", None, "°C"][n - 1],
            "thresholds": [{"value": 0, "color": "#10b981"}, {"value": 70, "color": "#f59e0b"},
                           {"value": 90, "color": "#ef4444"}]},
            {"x": [0, 1, 3, 6][n - 1], "y": 3, "w": n, "h": n})
    put("Fleet", "flexible-table", table(), {"x": 0, "y": 7, "w": 6, "h": 3})
    put("Checks", "status-grid", {"items": [
        {"name": "API", "status": "ok", "detail": "p95 120 ms"},
        {"name": "Database", "status": "warn", "detail": "replica lag 4 s"},
        {"name": "Queue", "status": "error", "detail": "consumer down"},
        {"name": "CDN", "status": "unknown"}]}, {"x": 6, "y": 7, "w": 3, "h": 3})
    put("Deploys", "timeline", {"events": [
        {"time": "2026-11-27T09:30:00Z", "title": "v2.4 to production", "status": "ok",
         "description": "Rolled out to every region"},
        {"time": "2026-11-27T13:05:00Z", "title": "Rollback of v2.4.1", "status": "error"},
        {"time": "2026-11-28T08:00:00Z", "title": "Freeze starts"}]},
        {"x": 9, "y": 7, "w": 3, "h": 3})
    put("To do", "list", {"items": [{"text": "Rotate keys", "checked": True},
                                    {"text": "Renew the certificate", "checked": False},
                                    {"text": "Runbook", "url": "https://example.com/runbook"}]},
        {"x": 10, "y": 3, "w": 2, "h": 2})
    return b, pins


class Page:
    """A share page in a fresh context, with its console errors (CSP violations among them)
    and page errors recorded."""

    def __init__(self, browser, url, width, height, kiosk=False):
        self.context = browser.new_context(viewport={"width": width, "height": height},
                                           color_scheme="light")
        offline_images(self.context)
        self.page = self.context.new_page()
        self.errors = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        assert self.page.goto(url + ("?kiosk=1" if kiosk else "")).status == 200
        self.page.wait_for_function("() => document.body.dataset.live === 'live'",
                                    timeout=5000)
        if kiosk:
            self.page.wait_for_function(
                "() => document.documentElement.classList.contains('fitted')", timeout=2000)

    def eval(self, script, arg=None):
        return self.page.evaluate(script, arg)

    def close(self):
        assert not self.errors, f"console errors: {self.errors}"
        self.context.close()


# Each gauge's dial, value and ends: their boxes, the value's font size, and whether each
# lies inside its pin's content box.
GAUGES = """() => [...document.querySelectorAll('main .pin')].filter(p => p.querySelector('.dial'))
    .map(pin => {
        const box = e => e.getBoundingClientRect();
        const p = box(pin), svg = box(pin.querySelector('.dial svg'));
        const value = pin.querySelector('.dial-value'), v = box(value);
        const ends = [...pin.querySelectorAll('.ends span')].map(box);
        const inside = r => r.left >= p.left - 1 && r.right <= p.right + 1 &&
            r.top >= p.top - 1 && r.bottom <= p.bottom + 1;
        return {name: pin.querySelector('h2').textContent, svg: {w: svg.width, h: svg.height},
                value: value.textContent, size: parseFloat(getComputedStyle(value).fontSize),
                // In the hollow, or under the arc on a dial too narrow for that; never on
                // the dial's ends.
                valueInDial: v.left >= svg.left - 1 && v.right <= svg.right + 1
                    && ((v.bottom <= svg.bottom + 2 && v.width <= svg.width * 0.7)
                        || v.top >= svg.bottom - 2)
                    && ends.every(e => e.bottom <= v.top || e.top >= v.bottom ||
                                       e.right <= v.left || e.left >= v.right),
                inside: inside(svg) && inside(v) && ends.every(inside)};
    })"""

# Lines of text in the cells of a table's one-line columns (numbers, dates, yes/no).
ONE_LINE = """() => [...document.querySelectorAll('td.num, td.nw, th.num, th.nw')].map(td => {
    const r = document.createRange(); r.selectNodeContents(td);
    const tops = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
    return {text: td.textContent, lines: tops.size, align: getComputedStyle(td).textAlign,
            figures: getComputedStyle(td).fontVariantNumeric};
}).filter(c => c.text)"""


def check_page(p, width, label, least_px):
    """What every size shares: no page scroll sideways, readable text, gauges whole."""
    fits(p.page, width)
    least = p.eval(SMALLEST_TEXT)
    assert least["size"] >= least_px, f"{label}: text under {least_px} px: {least}"
    for g in p.eval(GAUGES):
        assert g["svg"]["w"] >= 60 and g["svg"]["h"] >= 30, f"{label}: dial too small: {g}"
        assert g["valueInDial"] and g["inside"], f"{label}: gauge figures: {g}"
        assert g["size"] >= least_px, f"{label}: gauge value: {g}"


@test
def desktop_shows_every_type_designed(server, browser):
    b, pins = board(server)
    p = Page(browser, f"{server.base}/share/{b}", 1400, 1000)
    check_page(p, 1400, "desktop", 11)
    # The heatmap's scale: lowest and highest values, formatted; and the empty cell's swatch.
    ends = p.eval("[...document.querySelectorAll('.hm-end')].map(e => e.textContent)")
    assert ends == ["40", "12,227.5"], ends
    assert p.eval("document.querySelector('.hm-none').textContent") == "no value"
    bar = p.page.locator(".hm-bar").bounding_box()
    assert bar["width"] >= 60 and bar["height"] >= 8, bar
    # The JSON tree: colours by kind, hostile text shown as text, a long array closed that
    # opens with a click.
    colours = p.eval("""['jk', 'js', 'jn', 'jb', 'jz'].map(c =>
        getComputedStyle(document.querySelector('.json .' + c)).color)""")
    assert len(set(colours)) == 5, f"one colour per kind: {colours}"
    assert p.eval(f"""[...document.querySelectorAll('.json .jk')].some(k =>
        k.textContent === {HOSTILE!r})""")
    assert not p.eval("document.querySelector('.json script')")
    history = p.page.locator(".json details", has=p.page.locator("summary .jk", has_text="history"))
    assert history.get_attribute("open") is None
    history.locator("> summary").click()
    assert history.get_attribute("open") == "" and history.locator(".ji", has_text="39").is_visible()
    # Code: numbered lines that are not part of the text, indentation kept, the long line
    # scrolling inside the block.
    code = p.eval("""(() => { const c = document.querySelector('.code code');
        const first = c.querySelector('.ln');
        return {before: getComputedStyle(first, '::before').content, text: c.textContent,
                white: getComputedStyle(c.parentElement).whiteSpace,
                scrolls: c.parentElement.scrollWidth > c.parentElement.clientWidth}; })()""")
    assert code["before"] == "counter(ln)" and code["text"] == CODE, code
    assert code["white"] == "pre" and code["scrolls"], code
    # Tables: numbers right-aligned in tabular figures, short columns on one line.
    cells = p.eval(ONE_LINE)
    assert cells and all(c["lines"] == 1 for c in cells), [c for c in cells if c["lines"] > 1]
    assert all(c["align"] == "right" and "tabular-nums" in c["figures"]
               for c in cells if c["text"][0].isdigit() and ":" not in c["text"]), cells
    shot(p.page, "types-desktop-1400x1000")
    p.close()


@test
def a_phone_scrolls_wide_tables_inside_their_pin(server, browser):
    b, pins = board(server)
    p = Page(browser, f"{server.base}/share/{b}", 390, 844)
    check_page(p, 390, "phone", 11)
    table = p.eval(f"""(() => {{ const s = document.querySelector('[data-pin="{pins['Fleet']}"] .scroll');
        return {{sw: s.scrollWidth, cw: s.clientWidth, overflow: getComputedStyle(s).overflowX}}; }})()""")
    assert table["overflow"] == "auto", table
    cells = p.eval(ONE_LINE)
    assert all(c["lines"] == 1 for c in cells), [c for c in cells if c["lines"] > 1]
    shot(p.page, "types-phone-390x844")
    p.close()


@test
def kiosk_fits_the_types_and_the_indicator_covers_no_pin(server, browser):
    b, pins = board(server)
    for width, height in [(1920, 1080), (1366, 768)]:
        p = Page(browser, f"{server.base}/share/{b}", width, height, kiosk=True)
        pages = int(p.page.text_content("#pages").split("/")[1]) \
            if p.page.is_visible("#pages") else 1
        for n in range(pages):
            clipped = p.eval(CLIPPED)
            assert not clipped, f"{width}x{height} page {n + 1}: clipped {clipped[:4]}"
            assert p.eval("document.documentElement.scrollHeight") <= height
            check_page(p, width, f"kiosk {width}x{height}", 14)
            covered = p.eval("""(() => { const l = document.querySelector('#live').getBoundingClientRect();
                const m = document.querySelector('main').getBoundingClientRect();
                return [...document.querySelectorAll('main .pin')].filter(pin => {
                    const r = pin.getBoundingClientRect();
                    return r.top < m.bottom && r.bottom > m.top && r.left < l.right && l.left < r.right && r.top < l.bottom && l.top < r.bottom;
                }).map(pin => pin.querySelector('h2').textContent); })()""")
            assert not covered, f"{width}x{height}: the live indicator covers {covered}"
            assert p.page.is_visible("#live")
            if n == 0:
                shot(p.page, f"types-kiosk-{width}x{height}")
            if n + 1 < pages:
                p.page.wait_for_function(f"() => document.querySelector('#pages').textContent"
                                         f" === '{n + 2} / {pages}'", timeout=(PAGE_SECS + 2) * 1000)
        print(f"  {width}x{height}: {pages} page(s)")
        p.close()


def main():
    wanted = sys.argv[1:]
    started = time.monotonic()
    with Server(binary=os.environ.get("CORKBOARD_BIN"),
                env={"CORKBOARD_KIOSK__PAGE_SECS": str(PAGE_SECS)}) as server, sync_playwright() as p:
        browser = launch(p)
        tests = [fn for fn in TESTS if not wanted or fn.__name__ in wanted]
        passed, failed = run_tests(tests, server, browser)
        browser.close()
    print(f"browser tests took {time.monotonic() - started:.0f} s")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
