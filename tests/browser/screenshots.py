#!/usr/bin/env python3
"""The README's screenshots: a live board (docs/share-page.png, 1440 wide, light), the
same board on a phone (docs/phone.png, 390 wide) and in kiosk mode (docs/kiosk.png,
1920x1080), a shared playlist's turn on a wall (docs/playlist.png, 1920x1080), the board
editor of a signed-in owner (docs/board-editor.png, 1440 wide) and their keys page just
after generating a key (docs/keys-page.png), drawn by a fresh server in Chromium.
Rerun after changing the pages: python3 tests/browser/screenshots.py (needs the debug
binary and what .ci/browser installs)."""

import os
import subprocess

from playwright.sync_api import sync_playwright

from harness import ROOT, Server, launch, offline_images


def main():
    with Server() as server, sync_playwright() as p:
        board, pins = server.every_type_board(
            "Operations", "Every pin type, live: pushed by scripts and agents through the API")
        browser = launch(p)
        for name, url, size, full in [
            ("share-page.png", f"/share/{board}", {"width": 1440, "height": 900}, True),
            ("phone.png", f"/share/{board}", {"width": 390, "height": 844}, False),
            ("kiosk.png", f"/share/{board}?kiosk=1", {"width": 1920, "height": 1080}, False),
        ]:
            context = browser.new_context(viewport=size, color_scheme="light")
            offline_images(context)
            page = context.new_page()
            page.goto(server.base + url)
            page.wait_for_function("() => document.body.dataset.live === 'live'")
            # A live change, so the picture shows a redrawn pin.
            server.api("PATCH", f"/pins/{pins['kpi']}", {"pin_config": {
                "label": "p95 latency", "value": 171, "unit": "ms", "change": "-6%",
                "trend": "down", "trend_good": "down",
                "sparkline": [240, 221, 198, 190, 182.5, 171]}})
            page.wait_for_function(
                f"() => document.querySelector('[data-pin=\"{pins['kpi']}\"]')"
                ".textContent.includes('171')")
            path = os.path.join(ROOT, "docs", name)
            page.screenshot(path=path, full_page=full)
            print(f"wrote {os.path.relpath(path, ROOT)}")
            context.close()
        playlist(server, browser, board, pins)
        editor(server, browser, pins)
        browser.close()


def playlist(server, browser, operations, pins):
    """A shared playlist on a 1920x1080 wall: its first board's turn, in kiosk mode."""
    board = server.board("Support desk", "Queues and response times, turning with Operations")
    for kind, at in [("stat-cards", {"x": 0, "y": 0, "w": 6, "h": 2}),
                     ("gauge", {"x": 6, "y": 0, "w": 3, "h": 2}),
                     ("progress", {"x": 9, "y": 0, "w": 3, "h": 2}),
                     ("bar-chart", {"x": 0, "y": 2, "w": 6, "h": 3}),
                     ("timeline", {"x": 6, "y": 2, "w": 6, "h": 3})]:
        server.place(board, pins[kind], at)
    made = server.api("POST", "/playlists", {"name": "Lobby wall", "items": [
        {"pinboard_id": board, "seconds": 30}, {"pinboard_id": operations, "seconds": 30}]})
    context = browser.new_context(viewport={"width": 1920, "height": 1080}, color_scheme="light")
    offline_images(context)
    page = context.new_page()
    page.goto(f"{server.base}/share/playlist/{made['id']}")
    page.wait_for_function("() => document.body.dataset.live === 'live'")
    path = os.path.join(ROOT, "docs", "playlist.png")
    page.screenshot(path=path)
    print(f"wrote {os.path.relpath(path, ROOT)}")
    context.close()


def editor(server, browser, pins):
    """The owner (set up through the setup link) editing a board: the picker, a pin focused
    for the keyboard with its buttons."""
    board = server.board("Launch week", "Arranged in the browser: drag, resize, keys", False)
    for kind, at in [("kpi", {"x": 0, "y": 0, "w": 3, "h": 2}),
                     ("line-chart", {"x": 3, "y": 0, "w": 6, "h": 3}),
                     ("gauge", {"x": 9, "y": 0, "w": 3, "h": 2}),
                     ("status-grid", {"x": 0, "y": 2, "w": 3, "h": 2})]:
        server.place(board, pins[kind], at)
    link = subprocess.run([server.binary, "setup-link"], env=server.env, check=True,
                          capture_output=True, text=True).stdout.strip()
    context = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme="light")
    offline_images(context)
    page = context.new_page()
    page.goto(link)
    page.fill("input[name=name]", "Olga Owner")
    page.fill("input[name=email]", "olga@example.test")
    page.fill("input[name=password]", "correct horse battery")
    page.fill("input[name=confirm]", "correct horse battery")
    page.click("button[type=submit]")
    page.wait_for_url(f"{server.base}/boards")
    page.goto(f"{server.base}/boards/{board}?edit=1&q=pin")
    page.wait_for_function("() => document.body.dataset.live === 'live'")
    page.focus(f'[data-pin="{pins["line-chart"]}"]')
    path = os.path.join(ROOT, "docs", "board-editor.png")
    page.screenshot(path=path, full_page=True)
    print(f"wrote {os.path.relpath(path, ROOT)}")
    keys(server, page)
    context.close()


def keys(server, page):
    """/settings/keys just after "Generate key": the new key shown once, the list below."""
    page.goto(f"{server.base}/settings/keys")
    page.fill("input[name=name]", "Nightly deploy job")
    page.check('input[name=scopes][value="pins:read"]')
    page.check('input[name=scopes][value="pins:write"]')
    page.select_option("select[name=tier]", "professional")
    page.click("button:has-text('Generate key')")
    page.wait_for_selector("#key-secret")
    path = os.path.join(ROOT, "docs", "keys-page.png")
    page.screenshot(path=path, full_page=True)
    print(f"wrote {os.path.relpath(path, ROOT)}")


if __name__ == "__main__":
    main()
