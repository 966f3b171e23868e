#!/usr/bin/env python3
"""Share pages in the browser (issue 17): the bytes of a 20-pin board's page (HTML with its
style sheet, and the page script), and commit-to-DOM latency measured in headless Chromium
over N updates (p50/p99; target p99 < 100 ms).

Usage: bench/browser.py BINARY [--smoke]. Starts BINARY on a fresh SQLite store. Each update
is a PATCH of one pin's title; its latency runs from just before the PATCH is sent (so it
includes the request and the commit) to the moment a MutationObserver in the page sees the
new title in the DOM (same machine, same clock). Updates are 1.1 s apart, past the page
script's one-fetch-a-second spacing, so each shows the path of one change, not a burst's.
Prints `name: ours=... baseline=... ratio=...` lines like bench/run.sh; fails when a figure
is missing."""

import gzip
import os
import statistics
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "browser"))
from harness import Server, launch, offline_images  # noqa: E402
from playwright.sync_api import sync_playwright  # noqa: E402


def line(name, ours, baseline):
    print(f"{name}: ours={ours} baseline={baseline} ratio={ours / baseline:.3f}")


def main():
    binary = sys.argv[1]
    smoke = "--smoke" in sys.argv
    updates = 3 if smoke else 50
    with Server(binary=binary) as server, sync_playwright() as p:
        board, pins = server.every_type_board("Twenty pins")
        for i in range(2):
            server.pin("kpi", {"label": f"Extra {i}", "value": i}, f"Extra {i}", board)
        watched = pins["kpi"]
        status, _, html = server.get(f"/share/{board}")
        assert status == 200
        script = html.split('<script src="')[1].split('"')[0]
        js = urllib.request.urlopen(server.base + script).read()
        css = html.split("<style>")[1].split("</style>")[0]
        page_bytes = len(html.encode())
        total = page_bytes + len(js)
        zipped = len(gzip.compress(html.encode())) + len(gzip.compress(js))
        print(f"browser.page_bytes_20_pins: html={page_bytes - len(css.encode())} "
              f"css={len(css.encode())} js={len(js)} total={total} gzip={zipped}")
        # What a browser that takes gzip is sent (the server's own compression: level 6 for
        # the page and script, 1 for the fragment).
        wire = [len(urllib.request.urlopen(urllib.request.Request(
            server.base + path, headers={"Accept-Encoding": "gzip"})).read())
            for path in (f"/share/{board}", f"/share/{board}/fragment", script)]
        print(f"browser.wire_bytes_20_pins: page={wire[0]} fragment={wire[1]} js={wire[2]} "
              f"total={wire[0] + wire[2]}")

        browser = launch(p)
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        offline_images(context)
        page = context.new_page()
        errors = []
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.goto(f"{server.base}/share/{board}")
        page.wait_for_function("() => document.body.dataset.live === 'live'")
        page.evaluate("""(pin) => {
            window.__seen = {};
            new MutationObserver(() => {
                const h = document.querySelector(`[data-pin="${pin}"] > h2`);
                if (h && !(h.textContent in window.__seen)) window.__seen[h.textContent] = Date.now();
            }).observe(document.body, {childList: true, subtree: true, characterData: true});
        }""", watched)
        latencies = []
        for i in range(updates):
            time.sleep(1.1)
            title = f"tick {i}"
            sent = time.time() * 1000
            server.api("PATCH", f"/pins/{watched}", {"metadata": {"title": title}})
            page.wait_for_function("(t) => t in window.__seen", arg=title, timeout=5000)
            latencies.append(page.evaluate("(t) => window.__seen[t]", title) - sent)
        browser.close()
        assert not errors, errors
    latencies.sort()
    p50 = statistics.median(latencies)
    p99 = latencies[min(len(latencies) - 1, round(0.99 * (len(latencies) - 1)))]
    print("browser.commit_to_dom_ms_sorted:", " ".join(f"{v:.0f}" for v in latencies))
    print(f"browser.commit_to_dom_ms: p50={p50:.1f} p99={p99:.1f} max={latencies[-1]:.1f} "
          f"n={len(latencies)}")
    line("browser.commit_to_dom_p99_ms (target < 100)", round(p99, 1), 100)


if __name__ == "__main__":
    main()
