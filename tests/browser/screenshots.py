#!/usr/bin/env python3
"""The README's screenshots: a live board (docs/share-page.png, 1440 wide, light) and the
same board in kiosk mode (docs/kiosk.png, 1920x1080), drawn by a fresh server in Chromium.
Rerun after changing the pages: python3 tests/browser/screenshots.py (needs the debug
binary and what .ci/browser installs)."""

import os

from playwright.sync_api import sync_playwright

from harness import ROOT, Server, launch, offline_images


def main():
    with Server() as server, sync_playwright() as p:
        board, pins = server.every_type_board(
            "Operations", "Every pin type, live: pushed by scripts and agents through the API")
        browser = launch(p)
        for name, url, size, full in [
            ("share-page.png", f"/share/{board}", {"width": 1440, "height": 900}, True),
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
        browser.close()


if __name__ == "__main__":
    main()
