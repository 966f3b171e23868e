#!/usr/bin/env python3
"""Local accounts in a real headless Chromium (CONTRACT.md 16): the owner's setup link (made
with `corkboard setup-link`) filled in at phone width with JavaScript off, ending signed in on
the boards; signing out; then a password sign-in at desktop width from a private board's
page, a wrong password first, ending back on that board. No identity provider.

Usage: python3 tests/browser/local_accounts.py. Starts its own server (the debug binary,
`cargo build` first). With CORKBOARD_SHOTS=<dir>, also saves screenshots of the forms there.
Prints `N passed, M failed` last; exits non-zero when any failed."""

import subprocess
import sys

from playwright.sync_api import sync_playwright

from harness import Server, fits, launch, run_tests, shot

PASSWORD = "correct horse battery"
def setup_then_password_sign_in(server, browser):
    board = server.board("Home board", public=False)
    link = subprocess.run([server.binary, "setup-link"], env=server.env, check=True,
                          capture_output=True, text=True).stdout.strip()
    assert link.startswith(f"{server.base}/setup/"), link

    # The setup form, on a phone, without JavaScript.
    phone = browser.new_context(viewport={"width": 390, "height": 844}, java_script_enabled=False)
    page = phone.new_page()
    res = page.goto(link)
    assert res.status == 200, res.status
    fits(page, 390)
    page.fill("input[name=name]", "Olga Owner")
    page.fill("input[name=email]", "olga@example.test")
    page.fill("input[name=password]", PASSWORD)
    page.fill("input[name=confirm]", PASSWORD + "!")
    page.click("button[type=submit]")
    assert "differ" in page.locator(".error").inner_text()
    assert page.input_value("input[name=email]") == "olga@example.test"
    shot(page, "setup-390")
    page.fill("input[name=password]", PASSWORD)
    page.fill("input[name=confirm]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server.base}/boards")
    assert page.locator(f'a[href="/boards/{board}"]').inner_text() == "Home board"
    cookies = {c["name"]: c for c in phone.cookies()}
    assert cookies["corkboard_session"]["httpOnly"] and cookies["corkboard_session"]["sameSite"] == "Lax"
    page.click("text=Sign out")
    page.wait_for_url(f"{server.base}/")
    assert page.goto(link).status == 404, "the link works once"
    phone.close()

    # A password sign-in on a desktop, from the private board's page.
    desk = browser.new_context(viewport={"width": 1400, "height": 900})
    page = desk.new_page()
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto(f"{server.base}/boards/{board}")
    assert page.url.startswith(f"{server.base}/login?next="), page.url
    fits(page, 1400)
    shot(page, "login-1400")
    page.fill("input[name=email]", "olga@example.test")
    page.fill("input[name=password]", "not the password")
    page.click("button[type=submit]")
    assert "Wrong email or password" in page.locator(".error").inner_text()
    errors.clear()  # the browser reports the 401 document itself as an error
    page.fill("input[name=email]", "Olga@Example.test")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server.base}/boards/{board}")
    page.wait_for_function("() => document.body.dataset.live === 'live'", timeout=5000)
    assert page.locator(".account").inner_text().startswith("olga@example.test")
    assert not errors, f"console errors: {errors}"
    desk.close()


def main():
    with Server() as server, sync_playwright() as p:
        browser = launch(p)
        passed, failed = run_tests([setup_then_password_sign_in], server, browser)
        browser.close()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
