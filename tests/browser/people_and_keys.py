#!/usr/bin/env python3
"""People and keys in a real headless Chromium (CONTRACT.md 16): the owner (from a setup
link) generates a key on /settings/keys, copies it, uses it over HTTP, and revokes it on the
page (after its confirmation), after which it is refused; then invites a colleague as a
viewer on /settings/people, and the colleague, in a second browser context, opens the link,
sets a password and lands signed in on the boards, where the owners' pages are the 404 page
to them. The pages are checked at 1400 and 390 px, with no console error or CSP violation.

Usage: python3 tests/browser/people_and_keys.py. Starts its own server (the debug binary,
`cargo build` first; CORKBOARD_BIN names another). With CORKBOARD_SHOTS=<dir>, also saves
screenshots of the keys and people pages there. Prints `N passed, M failed` last; exits
non-zero when any failed."""

import os
import subprocess
import sys
import urllib.error
import urllib.request

from playwright.sync_api import sync_playwright

from harness import Server, fits, launch, run_tests, shot

PASSWORD = "correct horse battery"
def status_with(server, key, path="/pins"):
    req = urllib.request.Request(server.base + "/v1" + path)
    req.add_header("Authorization", "Bearer " + key)
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return res.status
    except urllib.error.HTTPError as e:
        return e.code


def watch(page):
    """Console errors and CSP violations of `page`, as they happen."""
    errors = []

    def console(message):
        if message.type == "error":
            errors.append(f"{message.text} ({message.location.get('url')})")

    page.on("console", console)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("response", lambda r: r.status >= 400 and errors.append(f"{r.status} {r.url}"))
    return errors


def owner_session(server, browser):
    link = subprocess.run([server.binary, "setup-link"], env=server.env, check=True,
                          capture_output=True, text=True).stdout.strip()
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.base)
    page = context.new_page()
    page.goto(link)
    page.fill("input[name=name]", "Olga Owner")
    page.fill("input[name=email]", "olga@example.test")
    page.fill("input[name=password]", PASSWORD)
    page.fill("input[name=confirm]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server.base}/boards")
    return context, page


def a_key_generated_on_the_page_works_until_revoked(server, browser):
    context, page = owner_session(server, browser)
    errors = watch(page)
    assert page.goto(f"{server.base}/settings/keys").status == 200
    fits(page, 1400)
    page.fill("input[name=name]", "Deploy bot")
    page.check('input[name=scopes][value="pins:read"]')
    page.check('input[name=scopes][value="pins:write"]')
    page.select_option("select[name=tier]", "professional")
    page.click("button:has-text('Generate key')")
    secret = page.locator("#key-secret")
    key = secret.input_value()
    assert key.startswith("cbk_"), key
    assert secret.get_attribute("readonly") is not None
    copy = page.locator("button[data-copy=key-secret]")
    assert copy.is_visible(), "the script shows the copy button"
    copy.click()
    page.wait_for_function("() => document.querySelector('[data-copy=key-secret]').textContent === 'Copied'")
    assert page.evaluate("navigator.clipboard.readText()") == key
    shot(page, "keys-1400")

    # The key works over HTTP, within its scopes.
    assert status_with(server, key) == 200
    assert status_with(server, key, "/pinboards") == 403

    # Listed without its secret; revoked after the confirmation.
    page.goto(f"{server.base}/settings/keys")
    assert key not in page.content()
    row = page.locator("tr", has_text="Deploy bot")
    assert "pins:write" in row.inner_text()
    row.locator("summary", has_text="Revoke").click()
    confirm = row.locator("button", has_text="Revoke key")
    assert confirm.is_visible()
    confirm.click()
    page.wait_for_url(f"{server.base}/settings/keys?revoked=1")
    assert "Key revoked" in page.locator(".notice").inner_text()
    assert "revoked" in page.locator("tr", has_text="Deploy bot").inner_text()
    assert status_with(server, key) == 401
    assert not errors, f"console errors: {errors}"
    context.close()

    # On a phone, without JavaScript: the page fits and a key is still shown once.
    phone = browser.new_context(viewport={"width": 390, "height": 844}, java_script_enabled=False,
                                storage_state=context_state(server, browser))
    page = phone.new_page()
    page.goto(f"{server.base}/settings/keys")
    fits(page, 390)
    page.fill("input[name=name]", "Phone key")
    page.check('input[name=scopes][value="pins:read"]')
    page.click("button:has-text('Generate key')")
    assert page.locator("#key-secret").input_value().startswith("cbk_")
    assert not page.locator("button[data-copy=key-secret]").is_visible()
    fits(page, 390)
    shot(page, "keys-390")
    phone.close()


def context_state(server, browser):
    """A signed-in owner's cookies, by password sign-in."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{server.base}/login")
    page.fill("input[name=email]", "olga@example.test")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server.base}/boards")
    state = context.storage_state()
    context.close()
    return state


def a_colleague_joins_by_invitation_as_viewer(server, browser):
    board = server.board("Team board", public=False)
    context = browser.new_context(viewport={"width": 1400, "height": 900},
                                  storage_state=context_state(server, browser))
    page = context.new_page()
    errors = watch(page)
    assert page.goto(f"{server.base}/settings/people").status == 200
    fits(page, 1400)
    page.fill("input[name=email]", "colleague@example.test")
    page.select_option("select[name=role]", "viewer")
    page.click("button:has-text('Invite')")
    link = page.locator("#invite-link").input_value()
    assert link.startswith(f"{server.base}/invite/"), link
    page.goto(f"{server.base}/settings/people")
    assert "colleague@example.test" in page.locator("#pending ~ table").inner_text()
    shot(page, "people-1400")
    assert not errors, f"console errors: {errors}"

    # The colleague, in a browser of their own, on a phone.
    other = browser.new_context(viewport={"width": 390, "height": 844})
    theirs = other.new_page()
    their_errors = watch(theirs)
    assert theirs.goto(link).status == 200
    fits(theirs, 390)
    assert "viewer" in theirs.content() and "colleague@example.test" in theirs.content()
    theirs.fill("input[name=name]", "Cole League")
    theirs.fill("input[name=password]", PASSWORD)
    theirs.fill("input[name=confirm]", PASSWORD)
    theirs.click("button:has-text('Join')")
    theirs.wait_for_url(f"{server.base}/boards")
    assert theirs.locator(".account").inner_text().startswith("colleague@example.test")
    assert theirs.locator(f'a[href="/boards/{board}"]').inner_text() == "Team board"
    assert not their_errors, f"console errors: {their_errors}"
    # A viewer reads the board but is offered no editing, even when asking for it.
    for path in (f"/boards/{board}", f"/boards/{board}?edit=1"):
        assert theirs.goto(f"{server.base}{path}").status == 200
        assert theirs.locator("#edit-board, #tools, .pin-bar, .resize").count() == 0, path
    assert theirs.goto(f"{server.base}/settings/keys").status == 404
    assert theirs.goto(link).status == 404, "the link works once"
    other.close()

    # The owner sees them as a member, with their role.
    page.goto(f"{server.base}/settings/people")
    members = page.locator("#members ~ table").inner_text()
    assert "Cole League" in members and "viewer" in members, members
    context.close()


def main():
    with Server(binary=os.environ.get("CORKBOARD_BIN")) as server, sync_playwright() as p:
        browser = launch(p)
        passed, failed = run_tests([a_key_generated_on_the_page_works_until_revoked,
                                    a_colleague_joins_by_invitation_as_viewer], server, browser)
        browser.close()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
