#!/usr/bin/env python3
"""Kiosk mode that fits and times in the reader's zone (CONTRACT.md 17, "Text", "Fit",
"Times"), in a real headless Chromium: every pin type with a long table and a long timeline
fits 1920x1080 and 1366x768 with nothing clipped and no scrollbar, text at least 14 px, and a
table that fits with its words whole; a board of 40 pins shows in pages that turn every
`kiosk.page_secs` and stay live; `<time>` elements show the reader's local time, also when
they arrive live.

Usage: python3 tests/browser/kiosk.py [test name ...]. Starts its own server (the debug
binary, `cargo build` first) on a fresh SQLite store, with kiosk.page_secs at 4. Prints one
line per test and, last, `N passed, M failed`; exits non-zero when any failed."""

import sys
import time

from playwright.sync_api import sync_playwright

from harness import Server, fits, launch, offline_images, run_tests, shot

TESTS = []
PAGE_SECS = 4


def test(fn):
    TESTS.append(fn)
    return fn


class Kiosk:
    """A page in a fresh context with its console errors (CSP violations among them) and
    page errors recorded."""

    def __init__(self, browser, width, height, **context):
        self.context = browser.new_context(viewport={"width": width, "height": height}, **context)
        offline_images(self.context)
        self.page = self.context.new_page()
        self.errors = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))

    def open(self, url):
        assert self.page.goto(url).status == 200
        self.page.wait_for_function("() => document.body.dataset.live === 'live'", timeout=5000)
        self.page.wait_for_function("() => document.documentElement.classList.contains('fitted')",
                                    timeout=2000)

    def close(self):
        assert not self.errors, f"console errors: {self.errors}"
        self.context.close()


# Each pin's content box and every box inside it that could hide overflow: where they
# overflow (scrollHeight > clientHeight + 1 or scrollWidth > clientWidth + 1).
CLIPPED = """() => {
    const out = [];
    for (const pin of document.querySelectorAll('main .pin')) {
        const boxes = [pin, ...[...pin.querySelectorAll('*')].filter(e =>
            !(e instanceof SVGElement) && getComputedStyle(e).overflow !== 'visible')];
        for (const b of boxes) {
            if (b.scrollHeight > b.clientHeight + 1 || b.scrollWidth > b.clientWidth + 1) {
                out.push({pin: pin.querySelector('h2')?.textContent, box: b.className,
                          sh: b.scrollHeight, ch: b.clientHeight, sw: b.scrollWidth,
                          cw: b.clientWidth});
            }
        }
    }
    return out;
}"""

# The pins of the page on show: each whole inside the window or wholly outside it (never
# cut by the page's edge), and how many are shown.
SHOWN = """() => {
    const main = document.querySelector('main').getBoundingClientRect();
    let shown = 0; const cut = [];
    for (const pin of document.querySelectorAll('main .pin')) {
        const r = pin.getBoundingClientRect();
        const inside = r.top >= main.top - 1 && r.bottom <= main.bottom + 1;
        const outside = r.bottom <= main.top + 1 || r.top >= main.bottom - 1;
        if (inside) shown++; else if (!outside) cut.push(pin.querySelector('h2')?.textContent);
        if (inside && (r.bottom > innerHeight || r.right > innerWidth)) cut.push('off-screen');
    }
    return {shown, cut};
}"""

# The smallest drawn text in the pins of the page on show, CSS px (an SVG text's size times
# its SVG's scale), with what it says.
SMALLEST_TEXT = """() => {
    let least = {size: 1e9};
    const walk = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
    while (walk.nextNode()) {
        const el = walk.currentNode.parentElement;
        const text = walk.currentNode.textContent.trim();
        if (!text || !el.closest('.pin') || el.closest('title') || !el.getClientRects().length)
            continue;
        let size = parseFloat(getComputedStyle(el).fontSize);
        if (el instanceof SVGElement) {
            const m = el.getScreenCTM();
            size *= Math.hypot(m.a, m.b);
        }
        if (size < least.size) least = {size, text: text.slice(0, 30)};
    }
    return least;
}"""


# The words of table `id`'s headings and cells (links aside) that are drawn broken over two
# lines.
BROKEN_WORDS = """(id) => {
    const broken = [];
    for (const cell of document.querySelectorAll(
            `[data-pin="${id}"] th, [data-pin="${id}"] td:not(.url)`)) {
        const texts = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let text = texts.nextNode(); text; text = texts.nextNode()) {
            for (const word of text.textContent.matchAll(/\\S+/g)) {
                const range = document.createRange();
                range.setStart(text, word.index);
                range.setEnd(text, word.index + word[0].length);
                const lines = new Set([...range.getClientRects()].filter(r => r.width > 0)
                    .map(r => Math.round(r.top)));
                if (lines.size > 1) broken.push(word[0]);
            }
        }
    }
    return broken;
}"""


def long_table():
    return {"columns": [{"id": "host", "name": "Host", "type": "text"},
                        {"id": "load", "name": "Load", "type": "number"},
                        {"id": "seen", "name": "Last seen", "type": "date"},
                        {"id": "up", "name": "Up", "type": "boolean"}],
            "rows": [{"id": f"r{i}", "cells": {"host": f"web-{i:03}.eu-west.example.com",
                                               "load": i * 1.5, "up": i % 7 != 0,
                                               "seen": f"2026-11-{1 + i % 28:02}T{i % 24:02}:15:00Z"}}
                     for i in range(60)]}


def long_timeline():
    return {"events": [{"time": f"2026-11-{1 + i % 28:02}T{i % 24:02}:00:00Z",
                        "title": f"Deploy #{i}", "description": "Rolled out to every region",
                        "status": ["ok", "warn", "error"][i % 3]} for i in range(50)]}


@test
def every_type_fits_the_screen_with_nothing_clipped(server, browser):
    board, pins = server.every_type_board("Wall", "Every type, a long table and a long timeline")
    table = server.pin("flexible-table", long_table(), "Fleet", board)
    timeline = server.pin("timeline", long_timeline(), "Deploys", board)
    for width, height in [(1920, 1080), (1366, 768)]:
        k = Kiosk(browser, width, height)
        k.open(f"{server.base}/share/{board}?kiosk=1")
        pages = int(k.page.text_content("#pages").split("/")[1]) \
            if k.page.is_visible("#pages") else 1
        # A table that fits keeps its words whole ("Grace", not "Grac" over "e").
        broken = k.page.evaluate(BROKEN_WORDS, pins["flexible-table"])
        assert not broken, f"{width}x{height}: words broken in the table: {broken}"
        for n in range(pages):
            clipped = k.page.evaluate(CLIPPED)
            assert not clipped, f"{width}x{height} page {n + 1}: clipped {clipped[:4]}"
            fits(k.page, width)
            assert k.page.evaluate("document.documentElement.scrollHeight") <= height, \
                f"{width}x{height}: the page scrolls"
            shown = k.page.evaluate(SHOWN)
            assert shown["shown"] and not shown["cut"], f"{width}x{height}: {shown}"
            if width == 1920:
                least = k.page.evaluate(SMALLEST_TEXT)
                assert least["size"] >= 14, f"text under 14 px: {least}"
            if n + 1 < pages:
                k.page.wait_for_function(f"() => document.querySelector('#pages').textContent"
                                         f" === '{n + 2} / {pages}'",
                                         timeout=(PAGE_SECS + 2) * 1000)
        # Long content says how much more there is; every type drew something visible.
        more = k.page.evaluate(f"""[{table!r}, {timeline!r}].map(id => document.querySelector(
            `[data-pin="${{id}}"] .more`)?.textContent)""")
        assert all(m and m.startswith("+") and m.endswith(" more") for m in more), more
        dial = k.page.locator(f'[data-pin="{pins["gauge"]}"] .dial svg').bounding_box()
        assert dial["height"] >= 40 and dial["width"] >= 60, f"the dial shows: {dial}"
        for pin_type, pin in pins.items():
            box = k.page.locator(f'[data-pin="{pin}"] > :not(h2)').first.bounding_box()
            assert box and box["height"] >= 14, f"{pin_type} shows nothing at {width}: {box}"
        print(f"  {width}x{height}: {pages} page(s)")
        shot(k.page, f"kiosk-{width}x{height}")
        k.close()


@test
def forty_pins_show_in_pages_that_turn_and_stay_live(server, browser):
    board = server.board("Forty")
    pins = []
    for i in range(40):
        at = {"x": (i % 4) * 3, "y": (i // 4) * 2, "w": 3, "h": 2}
        pins.append(server.pin("kpi", {"label": f"Queue {i}", "value": i, "unit": "jobs",
                                       "sparkline": [1, 3, 2, i]}, f"Queue {i}", board, at))
    k = Kiosk(browser, 1920, 1080)
    k.open(f"{server.base}/share/{board}?kiosk=1")
    indicator = k.page.text_content("#pages")
    first, total = (int(v) for v in indicator.split(" / "))
    assert first == 1 and total >= 2, indicator
    assert k.page.is_visible("#pages")
    size = k.page.evaluate("parseFloat(getComputedStyle(document.querySelector('#pages')).fontSize)")
    assert size >= 18, f"readable across a room: {size} px"
    assert not k.page.evaluate(CLIPPED)
    shown = k.page.evaluate(SHOWN)
    assert 0 < shown["shown"] < 40 and not shown["cut"], shown
    visible = lambda pin: k.page.evaluate(  # noqa: E731
        f"""(() => {{ const r = document.querySelector('[data-pin="{pin}"]').getBoundingClientRect();
        return r.top >= 0 && r.bottom <= innerHeight; }})()""")
    assert visible(pins[0]) and not visible(pins[-1])
    started = time.monotonic()
    k.page.wait_for_function(f"() => document.querySelector('#pages').textContent === '2 / {total}'",
                             timeout=(PAGE_SECS + 2) * 1000, polling=50)
    took = time.monotonic() - started
    on_two = next(p for p in pins if visible(p))
    assert on_two != pins[0] and not visible(pins[0])
    assert not k.page.evaluate(SHOWN)["cut"]
    # A change to a pin on the page on show redraws in place, and the page stays.
    server.api("PATCH", f"/pins/{on_two}", {"pin_config": {"label": "Redrawn", "value": 4321}})
    k.page.wait_for_function(f"() => document.querySelector('[data-pin=\"{on_two}\"]')"
                             ".textContent.includes('4,321')", timeout=3000)
    assert visible(on_two) and k.page.text_content("#pages") == f"2 / {total}"
    assert not k.page.evaluate(CLIPPED)
    print(f"  {total} pages, page 2 after {took:.1f} s more")
    k.close()


@test
def times_show_in_the_readers_zone_and_language(server, browser):
    board = server.board("Times")
    timeline = server.pin("timeline", {"events": [
        {"time": "2024-03-04T09:30:00Z", "title": "Deploy v2"},
        {"time": "2024-03-05T14:00:00+01:00", "title": "Incident"}]}, "Events", board)
    table = server.pin("flexible-table", {
        "columns": [{"id": "d", "name": "Day", "type": "date"},
                    {"id": "t", "name": "At", "type": "date"}],
        "rows": [{"id": "a", "cells": {"d": "2024-02-29", "t": "2024-07-01T22:45:00Z"}}]},
        "Dates", board)
    k = Kiosk(browser, 1400, 1000, locale="de-DE", timezone_id="Europe/Berlin")
    assert k.page.goto(f"{server.base}/share/{board}").status == 200
    k.page.wait_for_function("() => document.body.dataset.live === 'live'", timeout=5000)
    times = k.page.evaluate("""[...document.querySelectorAll('time')].map(t => ({
        iso: t.getAttribute('datetime'), text: t.textContent, title: t.title,
        ago: t.hasAttribute('data-ago')}))""")
    by_iso = {t["iso"]: t["text"] for t in times}
    # Berlin is UTC+1 in March and UTC+2 in July; a bare date stays that date.
    assert "10:30" in by_iso["2024-03-04T09:30:00Z"], by_iso
    assert "14:00" in by_iso["2024-03-05T13:00:00Z"], by_iso
    assert "00:45" in by_iso["2024-07-01T22:45:00Z"] and "02.07.2024" in by_iso[
        "2024-07-01T22:45:00Z"], by_iso
    assert by_iso["2024-02-29"] == "29.02.2024" and by_iso["2024-03-04T09:30:00Z"] == \
        "04.03.2024, 10:30", by_iso
    assert all(t["text"] != t["iso"] and "UTC" not in t["text"] for t in times), times
    updated = next(t for t in times if t["ago"])
    # "updated": the board was made seconds ago; the full local time in its tooltip.
    assert updated["text"] == "jetzt" and "," in updated["title"], updated
    # A timestamp that arrives live is shown the same way.
    server.api("PATCH", f"/pins/{timeline}", {"pin_config": {"events": [
        {"time": "2024-12-24T17:00:00Z", "title": "Freeze"}]}})
    k.page.wait_for_function(f"() => document.querySelector('[data-pin=\"{timeline}\"] time')"
                             "?.textContent.includes('18:00')", timeout=3000)
    assert k.page.locator(f'[data-pin="{table}"] time').first.text_content() == "29.02.2024"
    # Without the script, the server's fallback says its zone.
    status, _, html = server.get(f"/share/{board}")
    assert status == 200 and '<time datetime="2024-07-01T22:45:00Z">2024-07-01 22:45 UTC</time>' \
        in html, html[:200]
    k.close()


def main():
    wanted = sys.argv[1:]
    started = time.monotonic()
    with Server(env={"CORKBOARD_KIOSK__PAGE_SECS": str(PAGE_SECS)}) as server, \
            sync_playwright() as p:
        browser = launch(p)
        tests = [fn for fn in TESTS if not wanted or fn.__name__ in wanted]
        passed, failed = run_tests(tests, server, browser)
        browser.close()
    print(f"browser tests took {time.monotonic() - started:.0f} s")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
