#!/usr/bin/env python3
"""Share pages in a real headless Chromium (CONTRACT.md 12): every pin type drawn with no
console error or CSP violation, live redraws without navigation, placements, catching up
after a network break, kiosk mode, inert content, the 404 page, and pages without JavaScript;
and pages worth a wall (CONTRACT.md 17): round ticks, text that doesn't shrink with its card,
status words and stale pins.

Usage: python3 tests/browser/live_pages.py [test name ...]. Starts its own server (the debug
binary, `cargo build` first) on a fresh SQLite store. Prints one line per test and, last,
`N passed, M failed`; exits non-zero when any failed."""

import re
import sys
import time

from playwright.sync_api import sync_playwright

from harness import Proxy, Server, launch, offline_images, run_tests

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


class Watch:
    """A page in a fresh context, with its console errors, page errors, dialogs and
    requests recorded."""

    def __init__(self, browser, **context):
        self.context = browser.new_context(**context)
        offline_images(self.context)
        self.page = self.context.new_page()
        self.errors, self.requests = [], []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("dialog", lambda d: (self.errors.append(f"dialog: {d.message}"), d.dismiss()))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.resumes = []
        self.page.on("request", lambda r: "/events" in r.url and self.resumes.append(
            r.all_headers().get("last-event-id") or r.url.partition("last_event_id=")[2]))

    def open(self, url):
        res = self.page.goto(url)
        return res.status

    def until(self, script, arg=None, timeout=2000, what=""):
        """Waits for `script` (a JS function of `arg`) to be truthy; the time it took, s."""
        start = time.monotonic()
        try:
            self.page.wait_for_function(script, arg=arg, timeout=timeout, polling=10)
        except Exception:
            raise AssertionError(f"not within {timeout} ms: {what or script}") from None
        return time.monotonic() - start

    def live(self, timeout=5000):
        self.until("() => document.body.dataset.live === 'live'", timeout=timeout,
                   what="the indicator says live")

    def no_errors(self):
        assert not self.errors, f"console errors: {self.errors}"

    def close(self):
        self.no_errors()
        self.context.close()


def title_of(pin):
    return f"() => document.querySelector('[data-pin=\"{pin}\"] > h2')?.textContent"


@test
def every_type_loads_with_its_title_and_no_console_error(server, browser):
    board, pins = server.every_type_board()
    w = Watch(browser, viewport={"width": 1400, "height": 900})
    assert w.open(f"{server.base}/share/{board}") == 200
    w.live()
    assert len(pins) == 18
    for pin_type, pin in pins.items():
        heading = w.page.locator(f'[data-pin="{pin}"] > h2')
        assert heading.is_visible(), pin_type
        assert heading.text_content() == f"Pin of {pin_type}", pin_type
        box = w.page.locator(f'[data-pin="{pin}"]').bounding_box()
        assert box and box["height"] > 40 and box["width"] > 100, f"{pin_type}: {box}"
    assert w.page.locator("svg.chart").count() >= 7, "charts as SVG"
    assert w.page.locator(".plot svg:not([viewBox])").count() >= 5, "chart text not scaled"
    assert w.page.locator("table").count() >= 1, "tables as tables"
    assert w.page.locator("text=This pin can't be shown").count() == 0
    assert w.page.evaluate("document.scripts.length") == 1
    time.sleep(1)
    w.close()


@test
def an_api_patch_shows_within_2_s_without_navigation(server, browser):
    board = server.board("Ops")
    pin = server.pin("kpi", {"label": "Signups", "value": 10}, "Before", board)
    other = server.pin("markdown", {"text": "Unchanged"}, "Stays", board)
    w = Watch(browser)
    w.open(f"{server.base}/share/{board}")
    w.live()
    w.page.evaluate("() => { window.__same = 1; document.querySelector("
                    f"'[data-pin=\"{other}\"]').__kept = 1; }}")
    server.api("PATCH", f"/pins/{pin}", {"metadata": {"title": "After"},
                                         "pin_config": {"label": "Signups", "value": 42}})
    took = w.until(f"() => ({title_of(pin)})() === 'After'", what="the new title")
    assert "42" in w.page.locator(f'[data-pin="{pin}"]').text_content()
    assert w.page.evaluate("window.__same") == 1, "no navigation"
    assert w.page.evaluate(f"document.querySelector('[data-pin=\"{other}\"]').__kept") == 1, \
        "an unchanged pin keeps its node"
    server.api("PATCH", f"/pinboards/{board}", {"title": "Ops, renamed"})
    w.until("() => document.title === 'Ops, renamed' && "
            "document.querySelector('h1').textContent === 'Ops, renamed'", what="board title")
    # A dataset named by a template: its change redraws the pin.
    ds = server.api("POST", "/datasets", {"name": "sales", "format": "json",
                                          "data": {"total": 1250}})["id"]
    templated = server.pin("stat-cards", {"cards": [{"title": "Revenue",
                                                            "value": "{{sales.total}}"}]},
                           "Sales", board)
    w.until(f"() => document.querySelector('[data-pin=\"{templated}\"]')?.textContent"
            ".includes('1250')", what="the templated pin")
    server.api("PATCH", f"/datasets/{ds}", {"data": {"total": 1400}})
    w.until(f"() => document.querySelector('[data-pin=\"{templated}\"]').textContent"
            ".includes('1400')", what="the dataset's new value")
    assert w.page.evaluate("window.__same") == 1
    print(f"  patch to DOM: {took * 1000:.0f} ms")
    w.close()


@test
def placements_appear_move_and_disappear(server, browser):
    board = server.board("Grid")
    first = server.pin("kpi", {"label": "A", "value": 1}, "First", board)
    w = Watch(browser, viewport={"width": 1400, "height": 900})
    w.open(f"{server.base}/share/{board}")
    w.live()
    pin = server.pin("kpi", {"label": "B", "value": 2}, "Placed")
    server.place(board, pin, {"x": 6, "y": 4, "w": 4, "h": 2})
    cell = f"document.querySelector('[data-pin=\"{pin}\"]')"
    w.until(f"() => {cell} && getComputedStyle({cell}).gridColumnStart === '7' && "
            f"getComputedStyle({cell}).gridRowStart === '5'", what="placed at x 6, y 4")
    box = w.page.locator(f'[data-pin="{pin}"]').bounding_box()
    grid = w.page.locator(".board").bounding_box()
    assert abs(box["x"] - (grid["x"] + grid["width"] / 2)) < 20, f"starts mid-grid: {box}"
    server.api("PUT", f"/pinboards/{board}/pins/{pin}", {"position": {"x": 0, "y": 6, "w": 12}})
    w.until(f"() => getComputedStyle({cell}).gridColumnStart === '1' && "
            f"getComputedStyle({cell}).gridColumnEnd === 'span 12'", what="moved and resized")
    server.api("DELETE", f"/pinboards/{board}/pins/{pin}", expect=(200, 204))
    w.until(f"() => !{cell}", what="taken off the board")
    server.api("DELETE", f"/pins/{first}", expect=(200, 204))
    w.until(f"() => !document.querySelector('[data-pin=\"{first}\"]')", what="a deleted pin")
    w.close()


@test
def offline_then_online_catches_up(server, browser):
    board = server.board("Flaky network")
    pin = server.pin("kpi", {"label": "Queue", "value": 1}, "Before the break", board)
    # The page through a relay whose network breaks (Chromium's offline emulation leaves
    # an open stream alone).
    proxy = Proxy(server.port)
    w = Watch(browser)
    w.open(f"{proxy.base}/share/{board}")
    w.live()
    proxy.cut()
    w.until("() => document.body.dataset.live === 'reconnecting'", timeout=5000,
            what="the indicator says reconnecting")
    server.api("PATCH", f"/pins/{pin}", {"metadata": {"title": "During the break"}})
    time.sleep(1)
    assert w.page.evaluate(f"({title_of(pin)})()") == "Before the break"
    proxy.mend()
    w.until(f"() => ({title_of(pin)})() === 'During the break'", timeout=10000,
            what="caught up after the break")
    w.live()
    assert len(w.resumes) >= 2 and all(w.resumes), f"each connection resumes: {w.resumes}"
    print(f"  resumed after event ids {w.resumes}")
    # Chromium reports the failed connections during the break; nothing else may fail.
    w.errors = [e for e in w.errors if "net::ERR_" not in e]
    w.close()
    proxy.close()


@test
def kiosk_fits_1920x1080_dark_and_shows_live(server, browser):
    board, _ = server.every_type_board("Wall")
    w = Watch(browser, viewport={"width": 1920, "height": 1080})
    w.open(f"{server.base}/share/{board}?kiosk=1")
    w.live()
    size = w.page.evaluate("""() => ({
        sw: document.documentElement.scrollWidth, sh: document.documentElement.scrollHeight,
        w: innerWidth, h: innerHeight,
        bottom: Math.max(...[...document.querySelectorAll('.pin')].map(p => p.getBoundingClientRect().bottom)),
        right: Math.max(...[...document.querySelectorAll('.pin')].map(p => p.getBoundingClientRect().right)),
        bg: getComputedStyle(document.body).backgroundColor,
        fg: getComputedStyle(document.body).color})""")
    assert size["sw"] <= size["w"] and size["sh"] <= size["h"], f"scrolls: {size}"
    assert size["bottom"] <= 1080 and size["right"] <= 1920, f"a pin outside: {size}"
    rgb = [int(v) for v in size["bg"][size["bg"].index("(") + 1:-1].split(",")[:3]]
    assert sum(rgb) < 120, f"dark: {size['bg']}"
    assert not w.page.locator("header").is_visible() and not w.page.locator("footer").is_visible()
    assert w.page.locator("#live").is_visible() and w.page.locator("#live").text_content() == "live"
    w.close()


XSS = '<script>window.__xss=1</script>"><img src=x onerror="window.__xss=2">'


@test
def xss_payloads_in_a_title_and_markdown_stay_inert(server, browser):
    board = server.board(XSS, XSS)
    md = server.pin("markdown", {"text": f"# Notes\n\n{XSS}\n\n[click](javascript:window.__xss=3)"
                                         " <b onclick=\"window.__xss=4\">b</b>"}, XSS, board)
    w = Watch(browser)
    w.open(f"{server.base}/share/{board}")
    w.live()
    assert w.page.title() == XSS
    assert w.page.locator("header h1").text_content() == XSS
    assert w.page.locator(f'[data-pin="{md}"] > h2').text_content() == XSS
    # And after a live redraw with a new payload.
    server.api("PATCH", f"/pins/{md}", {"pin_config": {
        "text": f"# Redrawn\n\n{XSS}<svg onload=\"window.__xss=5\"></svg>"}})
    w.until(f"() => document.querySelector('[data-pin=\"{md}\"] h1')?.textContent === 'Redrawn'",
            what="redrawn markdown")
    time.sleep(0.5)
    state = w.page.evaluate("""() => ({xss: window.__xss,
        handlers: [...document.querySelectorAll('*')].filter(e =>
            [...e.attributes].some(a => a.name.startsWith('on'))).length,
        scripts: document.scripts.length})""")
    assert state == {"xss": None, "handlers": 0, "scripts": 1}, state
    w.close()


@test
def a_private_board_gives_the_404_page_and_opens_no_stream(server, browser):
    board = server.board("Secret", public=False)
    server.pin("kpi", {"label": "Secret", "value": 7}, "Hidden", board)
    w = Watch(browser)
    assert w.open(f"{server.base}/share/{board}") == 404
    time.sleep(1)
    assert w.page.locator("header h1").text_content() == "Not found"
    assert "Hidden" not in w.page.content()
    assert w.page.evaluate("document.scripts.length") == 0
    assert not [u for u in w.requests if "/events" in u or "/assets/" in u], w.requests
    # Chromium reports the 404 document itself as a failed resource.
    w.errors = [e for e in w.errors if "404" not in e]
    w.close()
    # A board made private while watched turns into the 404 page in place.
    shown = server.board("Soon private")
    w = Watch(browser)
    w.open(f"{server.base}/share/{shown}")
    w.live()
    server.api("PATCH", f"/pinboards/{shown}", {"is_public": False})
    w.until("() => document.querySelector('h1')?.textContent === 'Not found'", timeout=8000,
            what="the 404 page in place")
    w.errors = [e for e in w.errors if "404" not in e]
    w.close()


@test
def without_javascript_the_content_still_shows(server, browser):
    board, pins = server.every_type_board("No script")
    w = Watch(browser, java_script_enabled=False, viewport={"width": 1400, "height": 900})
    assert w.open(f"{server.base}/share/{board}") == 200
    for pin_type, pin in pins.items():
        assert w.page.locator(f'[data-pin="{pin}"] > h2').is_visible(), pin_type
    assert w.page.locator("#live").count() == 0
    first = w.page.locator(f'[data-pin="{pins["stat-cards"]}"]').bounding_box()
    second = w.page.locator(f'[data-pin="{pins["kpi"]}"]').bounding_box()
    assert second["x"] > first["x"] + first["width"] - 1, "the grid from the style sheet alone"
    w.close()
    # A phone's width: one column.
    w = Watch(browser, viewport={"width": 390, "height": 844})
    w.open(f"{server.base}/share/{board}")
    xs = w.page.evaluate("[...document.querySelectorAll('.pin')].map(p => "
                         "Math.round(p.getBoundingClientRect().x))")
    assert len(set(xs)) == 1 and w.page.evaluate(
        "document.documentElement.scrollWidth <= innerWidth"), xs
    w.close()


# Every drawn text inside a pin with the size it is drawn at, in CSS px: an SVG text's
# font size times its SVG's scale (a viewBox shrinks it), tooltips (<title>) left out.
TEXT_SIZES = """() => {
    const out = [];
    const walk = document.createTreeWalker(document.querySelector('main'), NodeFilter.SHOW_TEXT);
    while (walk.nextNode()) {
        const el = walk.currentNode.parentElement;
        const text = walk.currentNode.textContent.trim();
        if (!text || !el.closest('.pin') || el.closest('title')) continue;
        const style = getComputedStyle(el);
        if (style.display === 'none' || style.visibility === 'hidden') continue;
        let size = parseFloat(style.fontSize);
        if (el instanceof SVGElement) {
            const m = el.getScreenCTM();
            size *= Math.hypot(m.a, m.b);
        }
        out.push({size: Math.round(size * 10) / 10, text: text.slice(0, 24),
                  svg: el instanceof SVGElement,
                  pin: el.closest('[data-pin]').querySelector('h2')?.textContent});
    }
    return out;
}"""

HITS = {"labels": ["Mon", "Tue", "Wed", "Thu"],
        "series": [{"name": "Hits", "data": [4, 950, 2500, 6300]}]}


@test
def chart_numbers_are_round_and_text_keeps_its_size_at_any_width(server, browser):
    board, _ = server.every_type_board("Readable")
    hits = server.pin("bar-chart", HITS, "Hits, 4 wide", board, {"x": 0, "y": 20, "w": 4, "h": 3})
    server.pin("bar-chart", HITS, "Hits, 2 wide", board, {"x": 4, "y": 20, "w": 2, "h": 3})
    for size, kiosk, least in [({"width": 1400, "height": 1000}, False, 11),
                               ({"width": 1920, "height": 1080}, True, 14)]:
        w = Watch(browser, viewport=size)
        w.open(f"{server.base}/share/{board}" + ("?kiosk=1" if kiosk else ""))
        w.live()
        labels = w.page.evaluate(f"[...document.querySelectorAll('[data-pin=\"{hits}\"] svg text')]"
                                 ".map(t => t.textContent)")
        ticks = [label for label in labels if label[0].isdigit()]
        assert "0" in ticks and 3 <= len(ticks) <= 8, labels
        assert all(re.fullmatch(r"\d{1,3}(,\d{3})*", t) for t in ticks), f"separators: {ticks}"
        values = [int(t.replace(",", "")) for t in ticks]
        steps = {b - a for a, b in zip(values, values[1:])}
        assert len(steps) == 1 and str(steps.pop()).strip("0") in {"1", "2", "25", "5"}, ticks
        assert values[-1] >= 6300, f"the ticks cover the data: {ticks}"
        sizes = w.page.evaluate(TEXT_SIZES)
        assert len(sizes) > 100, sizes[:5]
        small = [s for s in sizes if s["size"] < least]
        assert not small, f"text under {least} px at {size}: {small[:6]}"
        charts = {s["size"] for s in sizes
                  if s["svg"] and s["pin"] and s["pin"].startswith("Hits")}
        assert len(charts) == 1, f"the same size in 4 and 2 columns: {charts}"
        print(f"  {'kiosk' if kiosk else 'page'} {size['width']}: smallest text "
              f"{min(s['size'] for s in sizes)} px, chart text {charts.pop()} px")
        w.close()


@test
def status_words_and_stale_pins_redraw_live(server, browser):
    board = server.board("Signals")
    pin = server.api("POST", "/pins", {
        "pin_type": "kpi", "pin_config": {"label": "Errors", "value": 12},
        "metadata": {"title": "Errors"}, "expected_every_secs": 10,
        "status_rules": [{"path": "pin_config.value", "op": "gt", "value": 10,
                          "status": "critical"}]})["pin_id"]
    server.place(board, pin)
    w = Watch(browser, viewport={"width": 1400, "height": 1000})
    w.open(f"{server.base}/share/{board}")
    w.live()
    cell = f"document.querySelector('[data-pin=\"{pin}\"]')"
    word = w.page.evaluate(f"{cell}.querySelector('.pill')?.textContent")
    assert word and word.lower() == "critical", word
    assert w.page.evaluate(f"{cell}.classList.contains('sig-critical')")
    # No push for 10 s: the pin.stale event redraws it greyed, with how long.
    took = w.until(f"() => {cell}.querySelector('.stale-note')?.textContent.startsWith("
                   "'No update for')", timeout=20000, what="the stale note")
    assert w.page.evaluate(f"getComputedStyle({cell}.querySelector('.kpi')).opacity") == "0.45"
    server.api("PATCH", f"/pins/{pin}", {"pin_config": {"label": "Errors", "value": 3}})
    w.until(f"() => !{cell}.querySelector('.stale-note') && !{cell}.classList.contains('stale')",
            what="fresh again after a push")
    assert w.page.evaluate(f"{cell}.querySelector('.pill').textContent") == "OK"
    print(f"  stale shown {took:.1f} s after the page went live")
    w.close()


def main():
    wanted = sys.argv[1:]
    started = time.monotonic()
    # The freshness sweep every second: a stale pin shows within a second of its lapse.
    with Server(env={"CORKBOARD_FRESHNESS__CHECK_SECS": "1"}) as server, \
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
