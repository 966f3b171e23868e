#!/usr/bin/env python3
"""The board editor in a real headless Chromium (CONTRACT.md 16): the owner (set up with
`corkboard setup-link`) makes a board with "New board", adds three pins through the picker
(searched by title and by tag), arranges them by dragging, by a resize handle and by the
keyboard (each checked in the store through the API), shares the board as public and copies
its link; the link opened in a second page (no session: a viewer) shows no edit controls and
follows the owner's next keyboard move live. A change conflicting with someone else's shows
the notice and the current layout. At 390 px the editor fits and edits with its buttons;
finally the board is deleted after the confirmation. No console error, no CSP violation.

Usage: python3 tests/browser/board_editor.py. Starts its own server (the debug binary,
`cargo build` first). With CORKBOARD_SHOTS=<dir>, also saves screenshots of the editor there.
Prints `N passed, M failed` last; exits non-zero when any failed."""

import subprocess
import sys
import time

from playwright.sync_api import sync_playwright

from harness import Server, fits, launch, offline_images, run_tests, shot

PASSWORD = "correct horse battery"
def watch(page):
    """Console errors and CSP violations of `page`, as they come."""
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


def layout(server, board):
    """{pin id: (x, y, w, h)} as the API reads the board."""
    read = server.api("GET", f"/pinboards/{board}")
    return {p["pin_id"]: tuple(p["position"][k] for k in "xywh") for p in read["pins"]}


def eventually(check, what, within=5.0):
    """Waits for `check()` to be true (the store behind the page), else fails with `what`."""
    end = time.monotonic() + within
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(what)
        time.sleep(0.1)


def sign_up_owner(server, browser):
    """The owner, set up through the setup link: their signed-in browser state."""
    link = subprocess.run([server.binary, "setup-link"], env=server.env, check=True,
                          capture_output=True, text=True).stdout.strip()
    context = browser.new_context()
    page = context.new_page()
    page.goto(link)
    page.fill("input[name=name]", "Olga Owner")
    page.fill("input[name=email]", "olga@example.test")
    page.fill("input[name=password]", PASSWORD)
    page.fill("input[name=confirm]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server.base}/boards")
    state = context.storage_state()
    context.close()
    return state


def owner_signed_in(server, browser, viewport):
    context = browser.new_context(viewport=viewport, color_scheme="light",
                                  storage_state=server.owner)
    offline_images(context)
    page = context.new_page()
    page.goto(f"{server.base}/boards")
    return context, page


def cell(page, pin):
    return page.locator(f'main .board > [data-pin="{pin}"]')


def drag_by(page, source, dx, dy):
    """Drags `source` by (dx, dy) px, holding it in its first row (below its bar of buttons)."""
    box = source.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.35
    page.mouse.move(x, y)
    page.mouse.down()
    for i in range(1, 11):
        page.mouse.move(x + dx * i / 10, y + dy * i / 10)
    page.mouse.up()


def new_board_arranged_shared_and_live(server, browser):
    def pin(pin_type, config, title, tags):
        body = {"pin_type": pin_type, "pin_config": config,
                "metadata": {"title": title, "tags": tags}}
        return server.api("POST", "/pins", body)["pin_id"]

    pins = {
        "Revenue": pin("stat-cards", {"cards": [{"title": "Revenue", "value": "$1.2M"}]},
                       "Revenue", ["finance"]),
        "Latency": pin("kpi", {"label": "p95", "value": 171, "unit": "ms"}, "Latency", ["ops"]),
        "Signups": pin("kpi", {"label": "Signups", "value": 42}, "Signups", ["growth"]),
    }
    context, page = owner_signed_in(server, browser, {"width": 1400, "height": 1000})
    errors = watch(page)

    # "No boards yet", and the New board form (no script needed).
    assert "No boards yet" in page.locator("main").inner_text()
    fits(page, 1400)
    page.fill("input[name=title]", "Launch week")
    page.fill("textarea[name=description]", "Everything about the launch")
    page.click("text=Create board")
    page.wait_for_url("**/boards/pb-*?edit=1")
    board = page.url.split("/boards/")[1].split("?")[0]
    assert server.api("GET", f"/pinboards/{board}")["title"] == "Launch week"
    page.wait_for_function("() => document.body.dataset.live === 'live'", timeout=5000)
    assert "This board has no pins yet" in page.locator("main").inner_text()

    # Three pins through the picker: by title, by title, by tag.
    for search, title in [("rev", "Revenue"), ("LAT", "Latency"), ("growth", "Signups")]:
        page.fill("#tools input[name=q]", search)
        page.wait_for_function(
            "() => document.querySelectorAll('#picker [data-pick]').length === 1", timeout=3000)
        pick = page.locator(f'#picker [data-pick="{pins[title]}"]')
        assert pick.count() == 1, search
        pick.locator("button").click()
        cell(page, pins[title]).locator(".pin-bar").wait_for(state="attached", timeout=5000)
    placed = eventually(lambda: len(layout(server, board)) == 3 and layout(server, board),
                        "three pins placed")
    assert placed[pins["Revenue"]] == (0, 0, 3, 2), placed
    assert placed[pins["Signups"]] == (6, 0, 3, 2), placed
    shot(page, "editor-1400")

    # Dragged: Revenue nine columns right and two rows down.
    revenue = cell(page, pins["Revenue"])
    box = page.locator("main .board").bounding_box()
    column = (box["width"] + 12) / 12
    row = revenue.bounding_box()["height"] / 2
    drag_by(page, revenue, column * 9, row * 2 + 12)  # two rows: the pin's height and a gap
    eventually(lambda: layout(server, board)[pins["Revenue"]] == (9, 2, 3, 2),
               f"Revenue dragged to (9, 2): {layout(server, board)}")
    # Resized by its corner: a row taller.
    handle = revenue.locator(".resize")
    hb = handle.bounding_box()
    page.mouse.move(hb["x"] + 9, hb["y"] + 9)
    page.mouse.down()
    for i in range(1, 11):
        page.mouse.move(hb["x"] + 9, hb["y"] + 9 + (row + 6) * i / 10)
    page.mouse.up()
    eventually(lambda: layout(server, board)[pins["Revenue"]] == (9, 2, 3, 3),
               f"Revenue resized to 3 rows: {layout(server, board)}")

    # The keyboard: Latency down a row, then a row taller; the focus stays on it.
    latency = cell(page, pins["Latency"])
    latency.focus()
    page.keyboard.press("ArrowDown")
    eventually(lambda: layout(server, board)[pins["Latency"]] == (3, 1, 3, 2),
               f"Latency moved down: {layout(server, board)}")
    page.wait_for_function(
        f"() => document.activeElement && document.activeElement.dataset.pin === '{pins['Latency']}'",
        timeout=5000)
    page.keyboard.press("Shift+ArrowDown")
    eventually(lambda: layout(server, board)[pins["Latency"]] == (3, 1, 3, 3),
               f"Latency taller: {layout(server, board)}")

    # Shared as public, the link copied.
    page.click("#share > summary")
    page.check("#share input[name=is_public]")
    page.click("#share >> text=Save sharing")
    eventually(lambda: server.api("GET", f"/pinboards/{board}/share")["is_public"],
               "shared as public")
    page.locator("#notice").filter(has_text="Saved").wait_for(timeout=5000)
    link = page.input_value("#share-url")
    assert link == f"{server.base}/share/{board}", link
    assert page.locator("#share [data-copy]").is_visible()
    fits(page, 1400)
    shot(page, "editor-share-1400")
    page.click("#share > summary")

    # A viewer (the share link, no session) sees no edit controls and follows live.
    viewer = browser.new_context(viewport={"width": 1400, "height": 900})
    offline_images(viewer)
    other = viewer.new_page()
    other_errors = watch(other)
    other.goto(link)
    other.wait_for_function("() => document.body.dataset.live === 'live'", timeout=5000)
    assert other.locator("#tools, .pin-bar, .resize").count() == 0
    assert "editor-" not in other.content()
    signups = f'main .board > [data-pin="{pins["Signups"]}"]'
    assert other.get_attribute(signups, "data-y") == "0"
    cell(page, pins["Signups"]).focus()
    page.keyboard.press("ArrowDown")
    other.wait_for_function(
        f"() => document.querySelector('{signups}').dataset.y === '1'", timeout=5000)
    assert layout(server, board)[pins["Signups"]] == (6, 1, 3, 2)

    # A change made on a layout someone else changed meanwhile (the page held its redraws,
    # as during a drag): refused with the notice, then the layout as it is now.
    page.evaluate("document.body.setAttribute('data-hold', '1')")
    server.api("PUT", f"/pinboards/{board}/pins/{pins['Signups']}", {"position": {"x": 0, "y": 8}})
    time.sleep(0.5)
    cell(page, pins["Latency"]).focus()
    page.keyboard.press("ArrowLeft")
    notice = page.locator("#notice")
    notice.filter(has_text="someone else").wait_for(timeout=5000)
    page.wait_for_function(
        f"() => document.querySelector('{signups}').dataset.y === '8'", timeout=5000)
    assert layout(server, board)[pins["Latency"]] == (3, 1, 3, 3), "the refused move"
    page.wait_for_function(
        f"() => document.querySelector('[data-pin=\"{pins['Latency']}\"]').dataset.x === '3'",
        timeout=5000)
    other.wait_for_function(
        f"() => document.querySelector('{signups}').dataset.y === '8'", timeout=5000)
    # The refused request itself is logged by the browser as a failed load.
    errors[:] = [e for e in errors if "status of 409" not in e]

    assert not errors, f"console errors: {errors}"
    assert not other_errors, f"viewer's console errors: {other_errors}"
    viewer.close()
    context.close()


def phone_edits_with_buttons_then_deletes(server, browser):
    board = server.board("On the go", public=False)
    pins = [server.pin("kpi", {"label": f"KPI {i}", "value": i}, f"KPI {i}", board)
            for i in range(2)]
    context, page = owner_signed_in(server, browser, {"width": 390, "height": 844})
    errors = watch(page)
    page.goto(f"{server.base}/boards/{board}?edit=1")
    page.wait_for_function("() => document.body.dataset.live === 'live'", timeout=5000)
    cell(page, pins[1]).locator(".pin-bar").wait_for()
    fits(page, 390)
    shot(page, "editor-390")
    cell(page, pins[1]).locator("[data-act=down]").click()
    eventually(lambda: layout(server, board)[pins[1]] == (3, 1, 3, 2),
               f"moved with a button: {layout(server, board)}")
    cell(page, pins[0]).locator("[data-act=remove]").click()
    eventually(lambda: list(layout(server, board)) == [pins[1]], "taken off")
    server.api("GET", f"/pins/{pins[0]}")
    page.click("#share > summary")
    fits(page, 390)
    page.click("#share > summary")

    # Renamed through the settings form; deleting needs the box ticked.
    page.click("#board-settings > summary")
    page.fill("#board-settings input[name=title]", "On the road")
    page.click("#board-settings >> text=Save")
    eventually(lambda: server.api("GET", f"/pinboards/{board}")["title"] == "On the road",
               "renamed")
    page.locator("header h1").filter(has_text="On the road").wait_for(timeout=5000)
    page.click("text=Delete board")
    assert server.api("GET", f"/pinboards/{board}")["id"] == board, "not without the box"
    page.check("#board-settings input[name=confirm]")
    page.click("text=Delete board")
    page.wait_for_url(f"{server.base}/boards")
    server.api("GET", f"/pinboards/{board}", expect=(404,))
    assert not errors, f"console errors: {errors}"
    context.close()


def main():
    with Server() as server, sync_playwright() as p:
        browser = launch(p)
        server.owner = sign_up_owner(server, browser)
        passed, failed = run_tests(
            [new_board_arranged_shared_and_live, phone_edits_with_buttons_then_deletes],
            server, browser)
        browser.close()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
