#!/usr/bin/env python3
"""kill -9 under concurrent write load, on SQLite and on PostgreSQL (issue 22 point 3, issue
35): every acknowledged create and update is readable after the restart.

For each store: a fresh store (`migrate`), a key made with the CLI (`keys create`), then
several rounds of: start `serve` (rate limits raised by settings), run concurrent writers
(single creates, creates with an Idempotency-Key, batches of 10, every other batch keyed,
and updaters: each creates a pin of its own, then PATCHes its title in a loop) for a moment, `kill -9` the server while requests are in flight, start it again on the same
store and check that
- every id whose create was acknowledged (a 200 whose body named it, in any round so far)
  reads back, with the title it was sent with (POST /v1/pins/batch/get, 100 at a time);
- every acknowledged keyed create (single or batch) sent again with the same key and body
  replays the same ids (no second write);
- every keyed create left in doubt by the kill (sent, no answer) sent again with the same key
  and body succeeds (a 200: replayed if it had committed, stored now if it hadn't);
- every updater's pin (of any round so far) is at least at the version of its last
  acknowledged PATCH: at that version with that PATCH's title, or one further with the title
  of the PATCH the kill left without an answer (it committed before the kill), never else;
- a webhook of `pin.created` (to a receiver run by this script, delivering while the server is
  killed mid-way) brings, within a minute, every acknowledged pin's event (at least once:
  what a killed server had not saved comes again, with the same `webhook-id` and pin), each
  first arrival in event order, every one signed with the webhook's secret (Standard Webhooks).
Prints one line per check and closes with `N passed, M failed`; exits non-zero on any
failure (above all a lost acknowledged write).

Standard library only. Usage: .ci/crash_test.py [--binary target/debug/corkboard]
[--stores sqlite,postgres] [--rounds 3] [--seconds 2.5] [--threads 8]
PostgreSQL: the server at $PG_ADMIN (default postgres://postgres@127.0.0.1:5432), a
database made and dropped with psql.
"""

import argparse
import base64
import hashlib
import hmac
import http.client
import http.server
import json
import os
import random
import threading
import time
import uuid

from ci_support import Server, check, cli, over_stores, store_env

def pin_body(title):
    return {
        "pin_type": "stat-cards",
        "pin_config": {"cards": [{"title": "Revenue", "value": "$1.2M", "change": "+4%", "trend": "up"}]},
        "metadata": {"title": title, "tags": ["crash-test"]},
    }


# --- HTTP ----------------------------------------------------------------------------------


class Client:
    """One keep-alive connection; reconnects after any failure."""

    def __init__(self, port, key, timeout=15):
        self.port, self.key, self.timeout = port, key, timeout
        self.conn = None

    def call(self, method, path, body=None, headers=None):
        """Returns (status, headers, parsed JSON or None); raises OSError/HTTPException when the
        connection fails before the whole answer is read."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout)
        all_headers = {"Authorization": f"Bearer {self.key}"}
        if body is not None:
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        raw = None if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.conn.request(method, path, body=raw, headers=all_headers)
            response = self.conn.getresponse()
            data = response.read()
        except Exception:
            self.close()
            raise
        try:
            parsed = json.loads(data) if data else None
        except ValueError:
            parsed = None
        return response.status, response.headers, parsed

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


# --- servers and stores --------------------------------------------------------------------


# --- the load ------------------------------------------------------------------------------


class Ledger:
    """What the writers saw: acknowledged ids with their titles, acknowledged keyed creates
    (key, body, ids) to replay, keyed creates left in doubt, the updaters' pins, and counts."""

    def __init__(self):
        self.lock = threading.Lock()
        self.acked = {}  # id -> title
        self.keyed = []  # (path, key, raw body, [ids])
        self.doubt = []  # (path, key, raw body, [titles])
        # An updater's pin: id, the last acknowledged version and title, and the title of the
        # PATCH that had no answer (None when none).
        self.updated = []  # [{"id", "version", "title", "in_flight"}]
        self.requests = {"single": 0, "keyed": 0, "batch": 0, "update": 0}
        self.refused = []  # unexpected answers (not 200) while the server was up
        self.in_flight_at_kill = 0


def updater(index, port, key, stop, ledger, tag):
    """Creates a pin, then PATCHes its title, one request at a time, until the kill; what the
    server acknowledged, and the title in flight at the kill, go in `ledger.updated`."""
    client = Client(port, key)
    title = f"{tag}-update{index}-0"
    try:
        status, _, answer = client.call("POST", "/v1/pins", pin_body(title))
    except (OSError, http.client.HTTPException):
        with ledger.lock:
            ledger.in_flight_at_kill += 1
        client.close()
        return
    if status != 200 or not answer or not answer.get("success"):
        with ledger.lock:
            ledger.refused.append(("/v1/pins", status, answer))
        client.close()
        return
    pin = {"id": answer["data"]["pin_id"], "version": 1, "title": title, "in_flight": None}
    with ledger.lock:
        ledger.updated.append(pin)
    n = 0
    while not stop.is_set():
        n += 1
        title = f"{tag}-update{index}-{n}"
        try:
            status, _, answer = client.call("PATCH", f"/v1/pins/{pin['id']}", {"metadata": {"title": title}})
        except (OSError, http.client.HTTPException):
            with ledger.lock:
                ledger.in_flight_at_kill += 1
                pin["in_flight"] = title
            break
        if status != 200 or not answer or not answer.get("success"):
            with ledger.lock:
                ledger.refused.append((f"PATCH /v1/pins/{pin['id']}", status, answer))
            continue
        with ledger.lock:
            ledger.requests["update"] += 1
            pin["version"], pin["title"] = answer["data"]["version"], title
    client.close()


def writer(kind, index, port, key, stop, ledger, tag):
    if kind == "update":
        updater(index, port, key, stop, ledger, tag)
        return
    client = Client(port, key)
    n = 0
    while not stop.is_set():
        n += 1
        name = f"{tag}-{kind}{index}-{n}"
        if kind == "batch":
            titles = [f"{name}-{i}" for i in range(10)]
            body, path = {"pins": [pin_body(t) for t in titles]}, "/v1/pins/batch"
            keyed = n % 2 == 0
        else:
            titles = [name]
            body, path = pin_body(name), "/v1/pins"
            keyed = kind == "keyed"
        raw = json.dumps(body).encode()
        idem = f"{name}-{uuid.uuid4().hex}" if keyed else None
        headers = {"Idempotency-Key": idem} if keyed else {}
        try:
            status, _, answer = client.call("POST", path, raw, headers)
        except (OSError, http.client.HTTPException):
            # No answer: the kill (or its aftermath). Left in doubt, never counted as acked.
            with ledger.lock:
                ledger.in_flight_at_kill += 1
                if keyed:
                    ledger.doubt.append((path, idem, raw, titles))
            while not stop.is_set():
                time.sleep(0.01)
            break
        if status != 200 or not answer or not answer.get("success"):
            with ledger.lock:
                ledger.refused.append((path, status, answer))
            continue
        data = answer["data"]
        ids = [item["pin_id"] for item in data] if kind == "batch" else [data["pin_id"]]
        with ledger.lock:
            ledger.requests[kind] += 1
            for pin_id, title in zip(ids, titles):
                ledger.acked[pin_id] = title
            if keyed:
                ledger.keyed.append((path, idem, raw, ids))
    client.close()


KINDS = ["single", "keyed", "batch", "update"]


def load_and_kill(server, key, seconds, threads, ledger, tag):
    """Runs the writers, kills the server with SIGKILL in the middle of them, waits for them."""
    stop = threading.Event()
    workers = [threading.Thread(target=writer, args=(KINDS[i % len(KINDS)], i, server.port, key, stop, ledger, tag))
               for i in range(threads)]
    for w in workers:
        w.start()
    time.sleep(seconds * random.uniform(0.8, 1.2))
    server.kill9()
    stop.set()
    for w in workers:
        w.join(30)


# --- webhooks out --------------------------------------------------------------------------


class Receiver:
    """A webhook receiver on a free port: answers 200 to every POST and keeps, in arrival
    order, each delivery's headers and body."""

    def __init__(self):
        self.lock = threading.Lock()
        self.got = []  # (headers, body)
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):  # noqa: N802 - the standard library's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.lock:
                    receiver.got.append((self.headers, body))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def handle(self):
                try:
                    super().handle()
                except ConnectionError:
                    pass  # the server killed mid-delivery

            def log_message(self, *_):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/crash"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def deliveries(self, secret):
        """What arrived, in order: (webhook-id as an int, the pin named, whether the Standard
        Webhooks signature is `secret`'s)."""
        with self.lock:
            got = list(self.got)
        key = base64.b64decode(secret.removeprefix("whsec_"))
        out = []
        for headers, body in got:
            message_id, timestamp = headers.get("webhook-id", ""), headers.get("webhook-timestamp", "")
            mac = hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
            expected = "v1," + base64.b64encode(mac).decode()
            signed = any(hmac.compare_digest(expected, sig) for sig in headers.get("webhook-signature", "").split())
            try:
                pin = json.loads(body).get("id")
            except ValueError:
                pin = None
            out.append((int(message_id) if message_id.isdigit() else -1, pin, signed))
        return out

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def check_webhook(name, receiver, secret, acked, within=60):
    """Waits until `receiver` has a delivery for every pin of `acked`, then checks the order
    of first arrivals, that a repeat names the pin its first arrival did, and the signatures."""
    deadline = time.monotonic() + within
    while True:
        got = receiver.deliveries(secret)
        pins = {pin for _, pin, _ in got}
        missing = [pin_id for pin_id in acked if pin_id not in pins]
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    check(f"{name}: a pin.created delivery for each of the {len(acked)} acknowledged ids",
          not missing, f"{len(missing)} never delivered, e.g. {missing[:10]}")
    first_pin, firsts, changed = {}, [], []
    for event, pin, _ in got:
        if event not in first_pin:
            first_pin[event] = pin
            firsts.append(event)
        elif first_pin[event] != pin:
            changed.append((event, first_pin[event], pin))
    out_of_order = [(a, b) for a, b in zip(firsts, firsts[1:]) if b <= a]
    check(f"{name}: {len(firsts)} events first delivered in event order ({len(got) - len(firsts)} sent again "
          f"after a kill)", not out_of_order, out_of_order[:5])
    check(f"{name}: each event sent again names the pin it named the first time", not changed, changed[:5])
    unsigned = [event for event, _, signed in got if not signed]
    check(f"{name}: all {len(got)} deliveries signed with the webhook's secret", not unsigned, unsigned[:5])


# --- the checks after a restart ------------------------------------------------------------


def read_back(client, acked):
    """Returns (missing ids, ids whose title differs)."""
    ids = list(acked)
    missing, wrong = [], []
    for start in range(0, len(ids), 100):
        chunk = ids[start:start + 100]
        status, _, answer = client.call("POST", "/v1/pins/batch/get", {"pin_ids": chunk})
        if status != 200 or not answer or not answer.get("success"):
            raise RuntimeError(f"batch/get answered {status}: {answer}")
        found = {pin["id"]: pin for pin in answer["data"]}
        for pin_id in chunk:
            pin = found.get(pin_id)
            if pin is None:
                missing.append(pin_id)
            elif pin["metadata"].get("title") != acked[pin_id]:
                wrong.append((pin_id, acked[pin_id], pin["metadata"].get("title")))
    return missing, wrong


def check_updates(client, updated):
    """Reads each updater's pin; returns the ones not as acknowledged (see the module's
    docstring) and how many PATCHes in flight at the kill had committed and had not, and
    settles the rest: a PATCH in flight that committed becomes the acknowledged state, so
    later rounds check the pin again from there."""
    bad, committed, lost = [], 0, 0
    for start in range(0, len(updated), 100):
        chunk = updated[start:start + 100]
        status, _, answer = client.call("POST", "/v1/pins/batch/get", {"pin_ids": [p["id"] for p in chunk]})
        if status != 200 or not answer or not answer.get("success"):
            raise RuntimeError(f"batch/get answered {status}: {answer}")
        found = {pin["id"]: pin for pin in answer["data"]}
        for pin in chunk:
            stored = found.get(pin["id"])
            if stored is None:
                bad.append((pin["id"], "missing"))
                continue
            version, title = stored["version"], stored["metadata"].get("title")
            if version == pin["version"] and title == pin["title"]:
                lost += pin["in_flight"] is not None
                pin["in_flight"] = None
            elif version == pin["version"] + 1 and pin["in_flight"] is not None and title == pin["in_flight"]:
                committed += 1
                pin["version"], pin["title"], pin["in_flight"] = version, title, None
            else:
                bad.append((pin["id"], f"acknowledged v{pin['version']} {pin['title']!r} (in flight: "
                            f"{pin['in_flight']!r}), stored v{version} {title!r}"))
    return bad, committed, lost


def ids_of(path, answer):
    data = answer["data"]
    return [item["pin_id"] for item in data] if path.endswith("/batch") else [data["pin_id"]]


def parallel(items, threads, port, key, work):
    """Runs work(client, item) over items on a few connections; returns the non-None results."""
    results, lock = [], threading.Lock()
    queue = list(items)

    def run():
        client = Client(port, key)
        while True:
            with lock:
                if not queue:
                    break
                item = queue.pop()
            try:
                out = work(client, item)
            except Exception as err:  # noqa: BLE001 - reported as a failure of the item
                out = (item, f"{type(err).__name__}: {err}")
            if out is not None:
                with lock:
                    results.append(out)
        client.close()

    workers = [threading.Thread(target=run) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return results


def replay(client, item):
    path, idem, raw, ids = item
    status, headers, answer = client.call("POST", path, raw, {"Idempotency-Key": idem})
    if status != 200 or not answer or not answer.get("success"):
        return (idem, f"status {status}: {answer}")
    got = ids_of(path, answer)
    if got != ids:
        return (idem, f"first answer {ids}, replay {got} (replayed header: {headers.get('idempotent-replayed')})")
    return None


def settle_doubt(ledger):
    def work(client, item):
        path, idem, raw, titles = item
        status, _, answer = client.call("POST", path, raw, {"Idempotency-Key": idem})
        if status != 200 or not answer or not answer.get("success"):
            return (idem, f"status {status}: {answer}")
        return ("ok", list(zip(ids_of(path, answer), titles)))
    return work


def run_store(store, binary, work, pg_admin, args):
    try:
        with store_env(store, work, pg_admin, "crash") as env:
            run_rounds(store, binary, work, env, args)
    except Exception as err:  # noqa: BLE001 - a store that can't be set up fails its checks
        check(f"{store}: set-up", False, f"{type(err).__name__}: {err}")


def run_rounds(store, binary, work, env, args):
    # Limits raised by settings (thousands of writes a second from one key), never switched off.
    env.update({
        "CORKBOARD_RATE_LIMITS__TIERS__TEAM__PER_MINUTE": "10000000",
        "CORKBOARD_RATE_LIMITS__TIERS__TEAM__PER_HOUR": "10000000",
        "CORKBOARD_RATE_LIMITS__WRITE_BUCKET__CAPACITY": "10000000",
        # The receiver is on 127.0.0.1; a killed server's lease lapses in 2 s.
        "CORKBOARD_WEBHOOKS__ALLOW_PRIVATE_TARGETS": "true",
        "CORKBOARD_WEBHOOKS__TIMEOUT_SECS": "1",
        "CORKBOARD_WEBHOOKS__LEASE_SECS": "2",
        "CORKBOARD_WEBHOOKS__POLL_MS": "200",
    })
    log = os.path.join(work, f"{store}.log")
    ledger = Ledger()
    server = None
    receiver = Receiver()
    started = time.monotonic()
    try:
        cli(binary, env, "migrate")
        key = cli(binary, env, "keys", "create", "--name", "crash-test", "--scopes", "*", "--tier", "team")
        server = Server(binary, env, log)
        client = Client(server.port, key)
        status, _, answer = client.call("POST", "/v1/webhooks", {"url": receiver.url, "events": ["pin.created"]})
        client.close()
        if status != 200 or not answer or not answer.get("success"):
            raise RuntimeError(f"creating the webhook answered {status}: {answer}")
        secret = answer["data"]["secret"]
        for round_ in range(1, args.rounds + 1):
            before = len(ledger.acked)
            requests_before = dict(ledger.requests)
            ledger.doubt, ledger.in_flight_at_kill, keyed_before = [], 0, len(ledger.keyed)
            load_and_kill(server, key, args.seconds, args.threads, ledger, f"{store}-r{round_}")
            acked_now = len(ledger.acked) - before
            counts = ", ".join(f"{k} {ledger.requests[k] - requests_before[k]}" for k in KINDS)
            print(f"# {store} round {round_}: {acked_now} ids acknowledged ({counts} requests), "
                  f"{ledger.in_flight_at_kill} requests without an answer at the kill "
                  f"({len(ledger.doubt)} keyed); restarting")
            name = f"{store} round {round_}"
            check(f"{name}: writes acknowledged before the kill", acked_now > 0, "no create succeeded")
            check(f"{name}: updates acknowledged before the kill", ledger.requests["update"] > requests_before["update"],
                  "no PATCH succeeded")
            check(f"{name}: no refusal while the server was up", not ledger.refused, ledger.refused[:5])
            ledger.refused = []
            restart = time.monotonic()
            server = Server(binary, env, log)
            print(f"# {store} round {round_}: ready again in {time.monotonic() - restart:.2f} s")
            client = Client(server.port, key)
            missing, wrong = read_back(client, ledger.acked)
            client.close()
            check(f"{name}: all {len(ledger.acked)} acknowledged ids (every round so far) read back",
                  not missing, f"{len(missing)} lost, e.g. {missing[:10]}")
            check(f"{name}: each with the title it was created with", not wrong, wrong[:5])
            client = Client(server.port, key)
            bad, committed, lost = check_updates(client, ledger.updated)
            client.close()
            print(f"# {store} round {round_}: of the PATCHes without an answer, {committed} had committed "
                  f"and {lost} had not")
            check(f"{name}: all {len(ledger.updated)} updated pins (every round so far) at their last "
                  f"acknowledged version, or one further with the PATCH in flight", not bad, bad[:5])
            fresh_keyed = ledger.keyed[keyed_before:]
            bad = parallel(fresh_keyed, 4, server.port, key, replay)
            check(f"{name}: {len(fresh_keyed)} acknowledged keyed creates replay the same ids",
                  not bad, bad[:5])
            settled = parallel(ledger.doubt, 4, server.port, key, settle_doubt(ledger))
            bad = [s for s in settled if s[0] != "ok"]
            for s in settled:
                if s[0] == "ok":
                    ledger.acked.update(dict(s[1]))
            check(f"{name}: {len(ledger.doubt)} keyed creates left in doubt succeed when sent again",
                  not bad, bad[:5])
            check_webhook(name, receiver, secret, ledger.acked)
        print(f"# {store}: {len(ledger.acked)} ids checked after {args.rounds} kills, "
              f"{time.monotonic() - started:.1f} s")
    except Exception as err:  # noqa: BLE001 - a store that can't be set up fails its checks
        check(f"{store}: the run", False, f"{type(err).__name__}: {err}")
    finally:
        if server is not None:
            server.stop()
        receiver.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default="target/debug/corkboard")
    parser.add_argument("--stores", default="sqlite,postgres")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.5, help="load before each kill")
    parser.add_argument("--threads", type=int, default=8)
    args = parser.parse_args()
    over_stores("crash-test-", args.binary, args.stores,
                lambda store, binary, work, pg_admin: run_store(store, binary, work, pg_admin, args))


if __name__ == "__main__":
    main()
