#!/usr/bin/env python3
"""Web sign-in in a real headless Chromium (CONTRACT.md 13): a private board's page sends the
browser through a small OpenID Connect provider run here (discovery, an authorize endpoint
that signs in a chosen user, a token endpoint checking PKCE S256 and single-use codes, HS256
ID tokens) and ends on the live board, which redraws a changed pin; signing out ends the
session.

Usage: python3 tests/browser/sign_in.py. Starts its own provider and server (the debug binary,
`cargo build` first). Prints `N passed, M failed` last; exits non-zero when any failed."""

import base64
import hashlib
import hmac
import http.server
import json
import secrets
import sys
import threading
import time
import urllib.parse

from playwright.sync_api import sync_playwright

from harness import Server, free_port, launch, offline_images, run_tests

CLIENT_ID = "corkboard-web"
SECRET = secrets.token_hex(32)


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Provider:
    """The identity provider: signs in `user` at every authorization."""

    def __init__(self):
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.user = "browser-user"
        self.codes = {}
        provider = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *_):
                pass

            def send(self, status, body=b"", headers=()):
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                q = dict(urllib.parse.parse_qsl(url.query))
                if url.path == "/.well-known/openid-configuration":
                    doc = {"issuer": provider.issuer,
                           "authorization_endpoint": provider.issuer + "/authorize",
                           "token_endpoint": provider.issuer + "/token"}
                    return self.send(200, json.dumps(doc).encode(),
                                     [("Content-Type", "application/json")])
                if url.path == "/authorize":
                    ok = (q.get("client_id") == CLIENT_ID and q.get("response_type") == "code"
                          and q.get("code_challenge_method") == "S256")
                    if not ok:
                        return self.send(400, b"bad authorization request")
                    code = secrets.token_urlsafe(16)
                    provider.codes[code] = (q["code_challenge"], q["nonce"])
                    back = q["redirect_uri"] + "?" + urllib.parse.urlencode(
                        {"code": code, "state": q["state"]})
                    return self.send(302, headers=[("Location", back)])
                self.send(404)

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                found = provider.codes.pop(form.get("code", ""), None)
                verifier = form.get("code_verifier", "")
                if (self.path != "/token" or not found
                        or b64(hashlib.sha256(verifier.encode()).digest()) != found[0]):
                    return self.send(400, b'{"error":"invalid_grant"}',
                                     [("Content-Type", "application/json")])
                now = int(time.time())
                claims = {"iss": provider.issuer, "aud": CLIENT_ID, "sub": provider.user,
                          "email": provider.user + "@example.test", "email_verified": True,
                          "nonce": found[1], "iat": now, "exp": now + 600}
                head = b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
                body = b64(json.dumps(claims).encode())
                sig = b64(hmac.new(SECRET.encode(), f"{head}.{body}".encode(),
                                   hashlib.sha256).digest())
                token = {"access_token": "at", "token_type": "Bearer",
                         "id_token": f"{head}.{body}.{sig}"}
                self.send(200, json.dumps(token).encode(), [("Content-Type", "application/json")])

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def login_ends_on_the_live_board(server, browser, provider):
    board = server.board("Team board", public=False)
    pin = server.pin("kpi", {"label": "Open tickets", "value": 12}, "Tickets", board)
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    offline_images(context)
    page = context.new_page()
    errors, visited = [], []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(f"page error: {e}"))
    page.on("request", lambda r: r.is_navigation_request() and visited.append(r.url))
    res = page.goto(f"{server.base}/boards/{board}")
    assert res.status == 200, res.status
    assert page.url == f"{server.base}/boards/{board}", page.url
    assert any(u.startswith(provider.issuer + "/authorize") for u in visited), visited
    assert any("/auth/callback?" in u for u in visited), visited
    page.wait_for_function("() => document.body.dataset.live === 'live'", timeout=5000)
    assert page.locator(".account").inner_text().startswith(provider.user + "@example.test")
    server.api("PATCH", f"/pins/{pin}", {"metadata": {"title": "Tickets now"}})
    page.wait_for_function(
        f"() => document.querySelector('[data-pin=\"{pin}\"] > h2')?.textContent === 'Tickets now'",
        timeout=3000)
    cookies = {c["name"]: c for c in context.cookies()}
    assert cookies["corkboard_session"]["httpOnly"] and cookies["corkboard_session"]["sameSite"] == "Lax"
    # The board list names it; signing out ends the session.
    page.goto(f"{server.base}/boards")
    assert page.locator(f'a[href="/boards/{board}"]').inner_text() == "Team board"
    assert not errors, f"console errors: {errors}"
    # (`/`, where sign-out lands, is no page of this service yet: its 404 is expected.)
    page.click("text=Sign out")
    page.wait_for_url(f"{server.base}/")
    assert "corkboard_session" not in {c["name"] for c in context.cookies()}
    res = page.goto(f"{server.base}/boards")
    assert any(u.startswith(provider.issuer + "/authorize") for u in visited[-3:]), visited
    context.close()


def main():
    provider = Provider()
    env = {
        "CORKBOARD_AUTH__JWT__ISSUER": provider.issuer,
        "CORKBOARD_AUTH__JWT__AUDIENCE": CLIENT_ID,
        "CORKBOARD_AUTH__JWT__ALGORITHMS": "HS256",
        "CORKBOARD_AUTH__JWT__HS256_SECRET": SECRET,
        "CORKBOARD_AUTH__JWT__DEFAULT_ROLE": "viewer",
        "CORKBOARD_AUTH__OIDC__CLIENT_ID": CLIENT_ID,
        # The provider alone: /login goes straight to it (local_accounts.py has the form).
        "CORKBOARD_AUTH__LOCAL__ENABLED": "false",
    }
    with Server(env=env) as server, sync_playwright() as p:
        browser = launch(p)
        passed, failed = run_tests([login_ends_on_the_live_board], server, browser, provider)
        browser.close()
    provider.httpd.shutdown()
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed or not passed else 0)


if __name__ == "__main__":
    main()
