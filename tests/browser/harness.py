"""What the browser tests, the screenshots and the browser benchmark share: a corkboard
server on a fresh SQLite store with a `*` key, a small API client, the 18-type board, and a
headless Chromium (Debian's `chromium`, driven by Playwright for Python)."""

import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import traceback
import urllib.error
import urllib.request
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`corkboard serve` on a store of its own (SQLite in a temporary directory)."""

    def __init__(self, binary=None, env=None):
        self.binary = binary or os.path.join(ROOT, "target/debug/corkboard")
        self.work = tempfile.mkdtemp(prefix="corkboard-browser-")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ)
        self.env.update({
            "CORKBOARD_DATA_DIR": os.path.join(self.work, "data"),
            "DATABASE_URL": "",
            "CORKBOARD_LISTEN": f"127.0.0.1:{self.port}",
            "CORKBOARD_PUBLIC_URL": self.base,
            "RUST_LOG": "warn",
            # The API's limits raised for setting up boards quickly; share pages keep the
            # default per-address limit, which the page script must stay within.
            "CORKBOARD_RATE_LIMITS__TIERS__TEAM__PER_MINUTE": "1000000",
            "CORKBOARD_RATE_LIMITS__TIERS__TEAM__PER_HOUR": "1000000",
            "CORKBOARD_RATE_LIMITS__WRITE_BUCKET__CAPACITY": "1000000",
        })
        self.env.update(env or {})
        self.proc = None
        self.key = None

    def __enter__(self):
        run = lambda *args: subprocess.run(  # noqa: E731
            [self.binary, *args], env=self.env, check=True, capture_output=True, text=True)
        run("migrate")
        self.key = run("keys", "create", "--name", "browser", "--scopes", "*",
                       "--tier", "team").stdout.strip()
        self.log = open(os.path.join(self.work, "server.log"), "w")
        self.proc = subprocess.Popen([self.binary, "serve"], env=self.env,
                                     stdout=self.log, stderr=subprocess.STDOUT)
        for _ in range(100):
            try:
                urllib.request.urlopen(self.base + "/healthz", timeout=1)
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the server did not come up")

    def __exit__(self, *_):
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.work, ignore_errors=True)

    def api(self, method, path, body=None, expect=(200, 201)):
        """Calls /v1`path` with the key; returns the envelope's `data`."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + "/v1" + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.key)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=10) as res:
                status, text = res.status, res.read()
        except urllib.error.HTTPError as e:
            status, text = e.code, e.read()
        if status not in expect:
            raise AssertionError(f"{method} {path}: {status} {text[:300]!r}")
        return json.loads(text).get("data") if text else None

    def get(self, path):
        """GETs `path` without a credential: (status, headers, text)."""
        try:
            with urllib.request.urlopen(self.base + path, timeout=10) as res:
                return res.status, res.headers, res.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()

    def board(self, title, description=None, public=True):
        body = {"title": title, "is_public": public}
        if description:
            body["description"] = description
        return self.api("POST", "/pinboards", body)["id"]

    def pin(self, pin_type, config, title=None, board=None, position=None):
        body = {"pin_type": pin_type, "pin_config": config}
        if title is not None:
            body["metadata"] = {"title": title}
        pin = self.api("POST", "/pins", body)["pin_id"]
        if board:
            self.place(board, pin, position)
        return pin

    def place(self, board, pin, position=None):
        body = {"pin_id": pin}
        if position:
            body["position"] = position
        return self.api("POST", f"/pinboards/{board}/pins", body)

    def every_type_board(self, title="Everything", description="All 18 pin types"):
        """A public board with one pin of each of the 18 types (the catalogue's examples),
        titled `Pin of <type>`; returns (board id, {type: pin id})."""
        board = self.board(title, description)
        pins = {}
        for t in self.api("GET", "/pin-types"):
            pins[t["pin_type"]] = self.pin(t["pin_type"], t["example"],
                                           "Pin of " + t["pin_type"], board)
        return board, pins


def png(width=240, height=120):
    """A small PNG (a blue gradient), for the image examples' https://example.com URLs."""
    rows = b"".join(
        b"\x00" + bytes(v for x in range(width)
                        for v in (37 + x // 8, 99 + y // 2, 235, 255))
        for y in range(height))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


IMAGE = png()


def shot(page, name):
    """Saves a full-page screenshot of `page` as <name>.png under $CORKBOARD_SHOTS, if set."""
    shots = os.environ.get("CORKBOARD_SHOTS")
    if shots:
        page.screenshot(path=os.path.join(shots, f"{name}.png"), full_page=True)


def fits(page, width):
    """Asserts that `page` needs no horizontal scrolling at `width` CSS px."""
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{scroll} px wide at {width}"


def launch(playwright):
    """Headless Chromium: the system's browser, never a downloaded one."""
    return playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                      args=["--no-sandbox", "--disable-gpu"])


def offline_images(context):
    """Answers the examples' https://example.com/... images locally (no network in CI)."""
    context.route("https://example.com/**",
                  lambda route: route.fulfill(status=200, content_type="image/png", body=IMAGE))


class Proxy:
    """A TCP relay to the server whose network can break: `cut()` drops every connection and
    refuses new ones (as a lost network would), `mend()` lets them through again."""

    def __init__(self, port):
        import threading
        self.upstream = ("127.0.0.1", port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.base = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.down = False
        self.open = set()
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        import threading
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.down:
                client.close()
                continue
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.open.update((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, src, dst):
        try:
            while chunk := src.recv(65536):
                dst.sendall(chunk)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        self.down = True
        with self.lock:
            for s in self.open:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.open.clear()

    def mend(self):
        self.down = False

    def close(self):
        self.cut()
        self.listener.close()


def run_tests(tests, *args):
    """Runs each test function with `args`, printing `ok` with its time or `FAIL` with its
    traceback; returns (passed, failed)."""
    passed = failed = 0
    for fn in tests:
        t = time.monotonic()
        try:
            fn(*args)
            passed += 1
            print(f"ok    {fn.__name__} ({time.monotonic() - t:.1f} s)", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL  {fn.__name__}\n{traceback.format_exc()}", flush=True)
    return passed, failed
