#!/usr/bin/env python3
"""The documentation pages in a real headless Chromium (CONTRACT.md 17): /docs draws the
served OpenAPI document with the embedded Redoc (an operation's heading and the side menu
visible) under the page's CSP, asking no other site for anything; /docs/pin-types draws all
18 types beside their schemas; the front page links both. No console error, no CSP
violation, no failed request.

Usage: python3 tests/browser/docs_pages.py. Starts its own server (the debug binary,
`cargo build` first; CORKBOARD_BIN names another). With CORKBOARD_SHOTS=<dir>, also saves a
screenshot of the pin types page there (the reference is too long for a whole-page one).
Prints `N passed, M failed` last; exits non-zero when any failed."""

import os
import sys

from playwright.sync_api import sync_playwright

from harness import Server, launch, offline_images, run_tests, shot

# Init scripts run before the page's own and outside its CSP: they see every violation.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI));
"""


def watch(page, base):
    """Console errors, failed requests and requests to other sites of `page`."""
    problems = []

    def console(message):
        if message.type == "error":
            problems.append(f"console: {message.text} ({message.location.get('url')})")

    def request(req):
        if not req.url.startswith((base, "data:", "blob:")):
            problems.append(f"asked another site: {req.url}")

    page.on("console", console)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", request)
    page.on("response", lambda r: r.status >= 400 and problems.append(f"{r.status} {r.url}"))
    return problems


def the_reference_draws_the_served_document(server, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.add_init_script(RECORD_VIOLATIONS)
    page = context.new_page()
    problems = watch(page, server.base)
    assert page.goto(f"{server.base}/").status == 200
    page.click("a[href='/docs']")
    page.wait_for_url(f"{server.base}/docs")
    heading = page.locator("h2", has_text="Create a pin (shape A or B)")
    heading.wait_for(state="visible", timeout=15000)
    menu = page.locator("[role=menuitem]", has_text="Create pins, all or none").first
    assert menu.count() == 1, "the side menu lists the operations"
    assert page.evaluate("window.__violations") == [], page.evaluate("window.__violations")
    assert problems == [], problems
    context.close()


def pin_types_draws_every_type_beside_its_schema(server, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.add_init_script(RECORD_VIOLATIONS)
    offline_images(context)
    page = context.new_page()
    problems = watch(page, server.base)
    assert page.goto(f"{server.base}/docs/pin-types").status == 200
    assert page.locator("section.type").count() == 18
    for section in page.locator("section.type").all():
        assert section.locator(".pin").is_visible()
        schema = section.locator(".schema pre").first.inner_text()
        assert '"title"' in schema and '"type"' in schema, schema[:200]
    assert page.locator("section.type .pin svg").count() >= 7, "the charts are drawn"
    shot(page, "pin-types")
    assert page.evaluate("window.__violations") == [], page.evaluate("window.__violations")
    # The image example's picture is at example.com, answered here by offline_images.
    assert [p for p in problems if "https://example.com/" not in p] == [], problems
    context.close()


def main():
    with Server(binary=os.environ.get("CORKBOARD_BIN")) as server, sync_playwright() as p:
        browser = launch(p)
        passed, failed = run_tests([the_reference_draws_the_served_document,
                                    pin_types_draws_every_type_beside_its_schema],
                                   server, browser)
        browser.close()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
