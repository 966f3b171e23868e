#!/usr/bin/env python3
"""A playlist on a wall (CONTRACT.md 17): `/share/playlist/{id}` with two public boards at
5 s each, in a 1920x1080 window, shows the first board in kiosk mode, live (a change made
while it is shown arrives), then the second board after its 5 s, live too; no console error
and no CSP violation (Chromium reports those as console errors).

Usage: python3 tests/browser/playlists.py. Starts its own server (the debug binary, `cargo
build` first) on a fresh SQLite store. Prints one line per test and, last, `N passed, M
failed`; exits non-zero when any failed."""

import sys
import time

from playwright.sync_api import sync_playwright

from harness import Server, fits, launch, run_tests, shot


def pin_text(pin):
    return f"document.querySelector('[data-pin=\"{pin}\"]')?.textContent || ''"


def a_shared_playlist_plays_its_boards_in_turn_each_live(server, browser):
    first = server.board("Ops wall")
    signups = server.pin("kpi", {"label": "Signups", "value": 10}, "Signups", first)
    second = server.board("Sales wall")
    orders = server.pin("kpi", {"label": "Orders", "value": 7}, "Orders", second)
    playlist = server.api("POST", "/playlists", {"name": "Lobby", "items": [
        {"pinboard_id": first, "seconds": 5}, {"pinboard_id": second, "seconds": 5}]})

    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = context.new_page()
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    live = "() => document.body.dataset.live === 'live'"

    started = time.monotonic()
    assert page.goto(playlist["share_url"]).status == 200
    assert page.title() == "Ops wall"
    assert page.evaluate("document.body.classList.contains('kiosk')"), "kiosk mode"
    assert not page.locator("header").is_visible(), "no header in kiosk mode"
    page.wait_for_function(live, timeout=5000)
    # A change on the board shown arrives without a reload.
    server.api("PATCH", f"/pins/{signups}", {"pin_config": {"label": "Signups", "value": 42}})
    page.wait_for_function(f"() => ({pin_text(signups)}).includes('42')", timeout=3000)
    scripts = page.evaluate("[...document.scripts].map(s => s.src.split('/').pop().split('-')[0])")
    assert sorted(scripts) == ["kiosk", "live", "play"], f"the page's scripts, nothing else: {scripts}"
    fits(page, 1920)
    shot(page, "playlist-first")

    # After its 5 s, the second board, live in turn.
    page.wait_for_function("() => document.title === 'Sales wall'", timeout=9000)
    took = time.monotonic() - started
    assert took >= 4.5, f"the first board was shown only {took:.1f} s"
    assert page.url.endswith("?at=1"), page.url
    assert "7" in page.evaluate(pin_text(orders))
    page.wait_for_function(live, timeout=5000)
    server.api("PATCH", f"/pins/{orders}", {"pin_config": {"label": "Orders", "value": 99}})
    page.wait_for_function(f"() => ({pin_text(orders)}).includes('99')", timeout=3000)
    shot(page, "playlist-second")
    assert not errors, f"console errors: {errors}"
    context.close()


def main():
    started = time.monotonic()
    with Server() as server, sync_playwright() as p:
        browser = launch(p)
        passed, failed = run_tests([a_shared_playlist_plays_its_boards_in_turn_each_live],
                                   server, browser)
        browser.close()
    print(f"browser tests took {time.monotonic() - started:.0f} s")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
