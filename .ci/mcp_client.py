#!/usr/bin/env python3
"""Drives /mcp with the official MCP Python SDK client (PyPI `mcp`, its Streamable HTTP
client), as agent frameworks do, on SQLite and on PostgreSQL (CONTRACT.md 10, issue 19).

For each store: a fresh store (`migrate`), keys made with the CLI (`keys create`), a server
with raised limits for the tools' scenario, then a second server on the same store with a
write bucket of 3 for the rate-limit scenario. Every MCP call goes through the SDK's
`ClientSession` over its Streamable HTTP transport; the REST view is read with urllib and the
same key. Prints one line per check and closes with `N passed, M failed`; exits non-zero on
any failure.

Usage: .ci/mcp_client.py [--binary target/debug/corkboard] [--stores sqlite,postgres]
PostgreSQL: the server at $PG_ADMIN (default postgres://postgres@127.0.0.1:5432), databases
made and dropped with psql.
"""

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import tempfile
import traceback
import urllib.error
import urllib.request
import uuid

import httpx
from mcp import ClientSession

try:  # mcp >= 1.24: the client takes an httpx client
    from mcp.client.streamable_http import streamable_http_client as _new_client
except ImportError:  # older 1.x
    _new_client = None
from mcp.client.streamable_http import streamablehttp_client as _old_client

from ci_support import FAILED, Server, check, cli, finish, store_env

TOOLS = {
    "list_pin_types", "create_pin", "create_pins", "get_pin", "list_pins", "update_pin",
    "delete_pin", "share_pin", "create_pinboard", "list_pinboards", "get_pinboard",
    "update_pinboard", "place_pin", "create_dataset", "list_datasets", "get_dataset",
    "update_dataset", "delete_dataset", "upsert_pin", "append_to_pin",
}
WITH_ID = {
    "get_pin", "update_pin", "delete_pin", "share_pin", "get_pinboard", "update_pinboard",
    "place_pin", "get_dataset", "update_dataset", "delete_dataset",
}
CALL_TIMEOUT = 30

def stat_cards(title, tag=None, trend="up"):
    body = {
        "pin_type": "stat-cards",
        "pin_config": {"cards": [{"title": title, "value": "$1.2M", "change": "+4%", "trend": trend}]},
        "metadata": {"title": title},
    }
    if tag:
        body["metadata"]["tags"] = [tag]
    return body


# --- REST, with urllib -------------------------------------------------------------------


class Rest:
    def __init__(self, base, key):
        self.base, self.key = base, key

    def call(self, method, path, body=None):
        """(status, parsed JSON body or None, headers)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.key}")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=CALL_TIMEOUT) as res:
                status, raw, headers = res.status, res.read(), res.headers
        except urllib.error.HTTPError as err:
            status, raw, headers = err.code, err.read(), err.headers
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        return status, parsed, headers

    def get(self, path):
        return self.call("GET", path)

    def data(self, path):
        status, body, _ = self.get(path)
        if status != 200:
            raise AssertionError(f"GET {path}: {status} {body}")
        return body["data"]

    def page(self, path):
        status, body, _ = self.get(path)
        if status != 200:
            raise AssertionError(f"GET {path}: {status} {body}")
        return {"data": body["data"], "pagination": body["pagination"]}

    def count(self, tag):
        return len(self.data(f"/v1/pins?limit=100&tag={tag}"))


# --- MCP, with the official client -------------------------------------------------------


class Mcp:
    """One SDK session with a key; `last_headers` are the last /mcp response's headers."""

    def __init__(self, session, recorder):
        self.session, self.recorder = session, recorder

    @property
    def last_headers(self):
        return self.recorder.get("headers") or {}

    async def call(self, name, arguments):
        return await asyncio.wait_for(self.session.call_tool(name, arguments), CALL_TIMEOUT)

    async def ok(self, name, arguments):
        """A successful call's structuredContent (raises with the result otherwise)."""
        result = await self.call(name, arguments)
        if result.isError or not isinstance(result.structuredContent, dict):
            raise AssertionError(f"{name}: {result}")
        text = result.content[0].text if result.content else ""
        if not text:
            raise AssertionError(f"{name}: no text summary: {result}")
        return result.structuredContent

    async def refused(self, name, arguments):
        """A refused call's error object, or raises when the call was not refused."""
        result = await self.call(name, arguments)
        if not result.isError or not isinstance(result.structuredContent, dict):
            raise AssertionError(f"{name} was not refused: {result}")
        return result.structuredContent


@contextlib.asynccontextmanager
async def connect(url, key, initialize=True):
    """A ClientSession over the SDK's Streamable HTTP client with `Authorization: Bearer key`
    (no header when key is None). Yields (Mcp, InitializeResult)."""
    recorder = {}

    async def record(response):
        if response.request.method == "POST":
            recorder["headers"] = {k.lower(): v for k, v in response.headers.items()}

    headers = {} if key is None else {"Authorization": f"Bearer {key}"}
    timeout = httpx.Timeout(CALL_TIMEOUT, read=60)
    if _new_client is not None:
        client = httpx.AsyncClient(headers=headers, timeout=timeout, event_hooks={"response": [record]})
        transport = _new_client(url, http_client=client)
    else:
        def factory(headers=None, timeout=None, auth=None):
            return httpx.AsyncClient(headers=headers, timeout=timeout, auth=auth,
                                     event_hooks={"response": [record]})
        client = None
        transport = _old_client(url, headers=headers, httpx_client_factory=factory)
    async with contextlib.AsyncExitStack() as stack:
        if client is not None:
            await stack.enter_async_context(client)
        read, write, session_id = await stack.enter_async_context(transport)
        session = await stack.enter_async_context(ClientSession(read, write))
        init = None
        if initialize:
            init = await asyncio.wait_for(session.initialize(), CALL_TIMEOUT)
        yield Mcp(session, recorder), init, session_id


async def step(name, coroutine):
    """Runs one scenario step; an exception is a failed check named `name`."""
    try:
        await coroutine
    except Exception as err:  # noqa: BLE001 - reported as a failure
        check(name, False, f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=3)}")


# --- the scenarios -----------------------------------------------------------------------


async def protocol(store, url, rest, key):
    async with connect(url, key) as (mcp, init, session_id):
        check(f"{store}: initialize names corkboard", init.serverInfo.name == "corkboard", init)
        check(f"{store}: initialize offers tools", init.capabilities.tools is not None, init.capabilities)
        check(f"{store}: a protocol version was negotiated", bool(init.protocolVersion), init)
        check(f"{store}: stateless (no Mcp-Session-Id)", session_id() is None, session_id())
        check(f"{store}: the initialize response is JSON",
              mcp.last_headers.get("content-type", "").startswith("application/json"), mcp.last_headers)

        listed = await asyncio.wait_for(mcp.session.list_tools(), CALL_TIMEOUT)
        names = [t.name for t in listed.tools]
        check(f"{store}: tools/list has the 20 tools of CONTRACT.md 10 and 14",
              set(names) == TOOLS and len(names) == 20, sorted(names))
        bad = []
        for tool in listed.tools:
            schema = tool.inputSchema or {}
            required = schema.get("required") or []
            if schema.get("type") != "object" or not tool.description:
                bad.append(f"{tool.name}: type/description")
            if (tool.name in WITH_ID) != ("id" in required):
                bad.append(f"{tool.name}: id required={('id' in required)}")
        check(f"{store}: every inputSchema is an object schema, id where the REST path has one", not bad, bad)
        upsert = next((t for t in listed.tools if t.name == "upsert_pin"), None)
        check(f"{store}: upsert_pin requires key",
              upsert is not None and "key" in ((upsert.inputSchema or {}).get("required") or []),
              upsert.inputSchema if upsert else None)
        types = [t["pin_type"] for t in rest.data("/v1/pin-types")]
        create_pin = next((t for t in listed.tools if t.name == "create_pin"), None)
        text = json.dumps(create_pin.inputSchema if create_pin else {})
        missing = [t for t in types if f'"{t}"' not in text]
        check(f"{store}: create_pin's inputSchema names every pin type ({len(types)})",
              len(types) == 18 and not missing, missing)


async def tools_agree_with_rest(store, url, rest, key):
    tag = "mcp-" + uuid.uuid4().hex[:8]
    async with connect(url, key) as (mcp, _, _):
        async def list_pin_types():
            data = await mcp.ok("list_pin_types", {})
            check(f"{store}: list_pin_types = GET /v1/pin-types", data == {"data": rest.data("/v1/pin-types")}, data)
        await step(f"{store}: list_pin_types", list_pin_types())

        state = {}

        async def pins():
            created = await mcp.ok("create_pin", stat_cards("Revenue", tag))
            pin = state["pin"] = created["pin_id"]
            expected = {k: v for k, v in created.items() if k != "pin_id"}
            read = rest.data(f"/v1/pins/{pin}")
            check(f"{store}: create_pin = GET /v1/pins/{{id}} (version 1)", read == expected and read["version"] == 1,
                  (created, read))

            got = await mcp.ok("get_pin", {"id": pin})
            check(f"{store}: get_pin = GET /v1/pins/{{id}}", got == rest.data(f"/v1/pins/{pin}"), got)

            batch = await mcp.ok("create_pins", {"pins": [stat_cards(f"b{i}", tag) for i in range(3)]})
            items = batch.get("data") or []
            titles = [rest.data(f"/v1/pins/{item['pin_id']}")["metadata"]["title"] for item in items]
            check(f"{store}: create_pins created each pin (REST reads them)", titles == ["b0", "b1", "b2"], batch)

            listed = await mcp.ok("list_pins", {"tag": tag})
            check(f"{store}: list_pins = GET /v1/pins (4 tagged)",
                  listed == rest.page(f"/v1/pins?tag={tag}") and len(listed["data"]) == 4, listed)
            page = await mcp.ok("list_pins", {"tag": tag, "limit": 1})
            check(f"{store}: list_pins with limit = GET /v1/pins?limit=1",
                  page == rest.page(f"/v1/pins?tag={tag}&limit=1") and page["pagination"]["has_more"] is True, page)

            updated = await mcp.ok("update_pin", {"id": pin, "metadata": {"title": "Revenue (EU)"}})
            read = rest.data(f"/v1/pins/{pin}")
            check(f"{store}: update_pin changed the REST view (version 2, title)",
                  updated.get("version") == 2 and read["version"] == 2
                  and read["metadata"]["title"] == "Revenue (EU)"
                  and read["pin_config"] == stat_cards("Revenue")["pin_config"], (updated, read))

            shared = await mcp.ok("share_pin", {"id": pin, "is_public": True})
            status, _, _ = rest.call("GET", f"/share/{pin}")
            check(f"{store}: share_pin = GET /v1/pins/{{id}}/share, share page public",
                  shared == rest.data(f"/v1/pins/{pin}/share") and shared.get("is_public") is True
                  and rest.data(f"/v1/pins/{pin}")["is_public"] is True and status == 200, (shared, status))
        await step(f"{store}: pin tools", pins())

        async def boards():
            board = await mcp.ok("create_pinboard", {"title": "Ops", "tags": ["ops"]})
            board_id = board["id"]
            read = rest.data(f"/v1/pinboards/{board_id}")
            check(f"{store}: create_pinboard = GET /v1/pinboards/{{id}}",
                  all(read.get(k) == v for k, v in board.items()) and read["pins"] == [], (board, read))

            pin = state.get("pin") or (await mcp.ok("create_pin", stat_cards("On board", tag)))["pin_id"]
            position = {"x": 0, "y": 0, "w": 6, "h": 4}
            placed = await mcp.ok("place_pin", {"id": board_id, "pin_id": pin, "position": position})
            read = rest.data(f"/v1/pinboards/{board_id}")
            check(f"{store}: place_pin placed the pin (REST board)",
                  placed.get("pin_id") == pin and [(p["pin_id"], p["position"]) for p in read["pins"]] == [(pin, position)],
                  (placed, read))

            got = await mcp.ok("get_pinboard", {"id": board_id})
            check(f"{store}: get_pinboard = GET /v1/pinboards/{{id}}", got == rest.data(f"/v1/pinboards/{board_id}"), got)

            updated = await mcp.ok("update_pinboard", {"id": board_id, "title": "Ops (live)"})
            read = rest.data(f"/v1/pinboards/{board_id}")
            check(f"{store}: update_pinboard changed the REST view (only the sent fields)",
                  updated.get("title") == "Ops (live)" and read["title"] == "Ops (live)" and read["tags"] == ["ops"],
                  (updated, read))

            listed = await mcp.ok("list_pinboards", {})
            check(f"{store}: list_pinboards = GET /v1/pinboards", listed == rest.page("/v1/pinboards"), listed)
        await step(f"{store}: pinboard tools", boards())

        async def datasets():
            name = "sales_" + uuid.uuid4().hex[:6]
            created = await mcp.ok("create_dataset", {"name": name, "format": "json", "description": "Q3",
                                                      "data": {"total": 10, "regions": {"eu": 4, "us": 6}}})
            ds = created["id"]
            check(f"{store}: create_dataset = GET /v1/datasets/{{id}}", created == rest.data(f"/v1/datasets/{ds}"), created)
            got = await mcp.ok("get_dataset", {"id": ds})
            check(f"{store}: get_dataset = GET /v1/datasets/{{id}}", got == rest.data(f"/v1/datasets/{ds}"), got)
            listed = await mcp.ok("list_datasets", {})
            check(f"{store}: list_datasets = GET /v1/datasets", listed == rest.page("/v1/datasets"), listed)
            updated = await mcp.ok("update_dataset", {"id": ds, "data": {"regions": {"us": None, "apac": 1}}})
            read = rest.data(f"/v1/datasets/{ds}")
            check(f"{store}: update_dataset merge-patched the REST view",
                  updated == read and read["data"] == {"total": 10, "regions": {"eu": 4, "apac": 1}}
                  and read["version"] == 2, (updated, read))
            deleted = await mcp.ok("delete_dataset", {"id": ds})
            status, _, _ = rest.get(f"/v1/datasets/{ds}")
            check(f"{store}: delete_dataset: REST 404", deleted.get("id") == ds and status == 404, (deleted, status))
        await step(f"{store}: dataset tools", datasets())

        async def delete():
            victim = (await mcp.ok("create_pin", stat_cards("Doomed", tag)))["pin_id"]
            deleted = await mcp.ok("delete_pin", {"id": victim})
            status, body, _ = rest.get(f"/v1/pins/{victim}")
            check(f"{store}: delete_pin: REST 404 NOT_FOUND",
                  deleted.get("id") == victim and status == 404 and body["error"]["code"] == "NOT_FOUND", (deleted, status))
        await step(f"{store}: delete_pin", delete())

        async def refused_config():
            before = rest.count(tag)
            bad = stat_cards("Bad", tag, trend="sideways")
            error = await mcp.refused("create_pin", bad)
            status, body, _ = rest.call("POST", "/v1/pins", bad)
            check(f"{store}: a refused config is PIN_CONFIG_INVALID with details.field",
                  error.get("code") == "PIN_CONFIG_INVALID"
                  and error.get("details", {}).get("field") == "pin_config.cards[0].trend", error)
            check(f"{store}: the refused config's error is REST's (400)", status == 400 and body["error"] == error, body)
            check(f"{store}: the refused config wrote nothing", rest.count(tag) == before)
        await step(f"{store}: refused config", refused_config())

        async def upserts():
            key = tag + "-upsert"
            created = await mcp.ok("upsert_pin", dict(stat_cards("Upserted", tag), key=key))
            read = rest.data(f"/v1/pins/by-key/{key}")
            expected = {k: v for k, v in created.items() if k not in ("pin_id", "created")}
            check(f"{store}: upsert_pin of a new key = PUT /v1/pins/by-key (created, the create answer)",
                  created.get("created") is True and created.get("pin_id") == read["id"]
                  and read == expected and read["key"] == key and read["version"] == 1, (created, read))
            again = await mcp.ok("upsert_pin", dict(stat_cards("Upserted", tag), key=key))
            check(f"{store}: upsert_pin of the same body changes nothing (changed false, version 1)",
                  again.get("id") == read["id"] and again.get("created") is False and again.get("changed") is False
                  and again.get("version") == 1 and rest.data(f"/v1/pins/by-key/{key}") == read, again)
            changed = await mcp.ok("upsert_pin", dict(stat_cards("Upserted", tag, trend="down"), key=key))
            read = rest.data(f"/v1/pins/by-key/{key}")
            check(f"{store}: upsert_pin of a new body updates the pin (changed true, version 2)",
                  changed.get("created") is False and changed.get("changed") is True and changed.get("version") == 2
                  and read["version"] == 2 and read["pin_config"]["cards"][0]["trend"] == "down", (changed, read))
            error = await mcp.refused("upsert_pin", dict(stat_cards("Upserted", tag), key="-bad"))
            check(f"{store}: upsert_pin of a bad key is VALIDATION_FAILED at key",
                  error.get("code") == "VALIDATION_FAILED" and error.get("details", {}).get("field") == "key", error)
        await step(f"{store}: upsert_pin", upserts())

        async def appends():
            key = tag + "-append"
            chart = {"pin_type": "line-chart", "key": key, "metadata": {"title": "Latency", "tags": [tag]},
                     "pin_config": {"labels": ["Mon"], "series": [{"name": "p50", "data": [120]}]}}
            status, body, _ = rest.call("POST", "/v1/pins", chart)
            pin = body["data"]["pin_id"] if status == 200 else None
            by_key = await mcp.ok("append_to_pin", {"key": key, "points": [{"label": "Tue", "values": {"p50": 130}}]})
            by_id = await mcp.ok("append_to_pin", {"id": pin, "points": [{"label": "Wed", "values": {"p50": 125}}],
                                                   "max_points": 2})
            read = rest.data(f"/v1/pins/{pin}")
            check(f"{store}: append_to_pin by key and by id = POST .../append ({{id, updated_at, version, size}})",
                  set(by_key) == {"id", "updated_at", "version", "size"} and by_key["id"] == pin
                  and by_key["version"] == 2 and by_key["size"] == 2
                  and by_id["version"] == 3 and by_id["size"] == 2
                  and read["version"] == 3 and read["pin_config"]["labels"] == ["Tue", "Wed"], (by_key, by_id, read))
            bad = {"key": key, "points": [{"label": "Thu", "values": {"p50": "fast"}}]}
            error = await mcp.refused("append_to_pin", bad)
            status, body, _ = rest.call("POST", f"/v1/pins/by-key/{key}/append", {k: v for k, v in bad.items() if k != "key"})
            check(f"{store}: a refused append_to_pin is REST's error at the item's path, nothing written",
                  error.get("details", {}).get("field") == "points[0].values.p50" and status == 400
                  and body["error"] == error and rest.data(f"/v1/pins/{pin}")["version"] == 3, (error, body))
            cards = (await mcp.ok("create_pin", stat_cards("Not a series", tag)))["pin_id"]
            error = await mcp.refused("append_to_pin", {"id": cards, "items": [{"text": "x"}]})
            check(f"{store}: append_to_pin on stat-cards is VALIDATION_FAILED at pin_type",
                  error.get("code") == "VALIDATION_FAILED" and error.get("details", {}).get("field") == "pin_type", error)
        await step(f"{store}: append_to_pin", appends())

        async def not_found():
            for tool, args in [("get_pin", {"id": "p-nope"}),
                               ("update_pin", {"id": "p-nope", "metadata": {"title": "x"}}),
                               ("get_pinboard", {"id": "pb-nope"}), ("get_dataset", {"id": "ds-nope"})]:
                error = await mcp.refused(tool, args)
                check(f"{store}: {tool} of an unknown id is NOT_FOUND", error.get("code") == "NOT_FOUND", error)
        await step(f"{store}: NOT_FOUND", not_found())
    return tag, state.get("pin")


async def scope_required(store, url, rest, reader_key, tag, pin):
    reader = Rest(rest.base, reader_key)
    async with connect(url, reader_key) as (mcp, _, _):
        before, pin_before = rest.count(tag), rest.data(f"/v1/pins/{pin}")
        error = await mcp.refused("create_pin", stat_cards("No", tag))
        check(f"{store}: create_pin with only pins:read is SCOPE_REQUIRED (pins:write)",
              error.get("code") == "SCOPE_REQUIRED" and error.get("details", {}).get("required_scope") == "pins:write", error)
        error = await mcp.refused("update_pin", {"id": pin, "metadata": {"title": "No"}})
        check(f"{store}: update_pin with only pins:read is SCOPE_REQUIRED", error.get("code") == "SCOPE_REQUIRED", error)
        error = await mcp.refused("create_pinboard", {"title": "No"})
        check(f"{store}: create_pinboard with only pins:read is SCOPE_REQUIRED (pinboards:write)",
              error.get("details", {}).get("required_scope") == "pinboards:write", error)
        read = rest.data(f"/v1/pins/{pin}")
        check(f"{store}: SCOPE_REQUIRED wrote nothing", rest.count(tag) == before and read == pin_before, read)
        got = await mcp.ok("get_pin", {"id": pin})
        check(f"{store}: pins:read still reads (get_pin = REST)", got == reader.data(f"/v1/pins/{pin}"), got)
        key = tag + "-reader"
        error = await mcp.refused("upsert_pin", dict(stat_cards("No", tag), key=key))
        check(f"{store}: upsert_pin with only pins:read is SCOPE_REQUIRED (pins:write)",
              error.get("details", {}).get("required_scope") == "pins:write", error)
        error = await mcp.refused("append_to_pin", {"id": pin, "items": [{"text": "No"}]})
        check(f"{store}: append_to_pin with only pins:read is SCOPE_REQUIRED", error.get("code") == "SCOPE_REQUIRED", error)
        status, _, _ = rest.get(f"/v1/pins/by-key/{key}")
        check(f"{store}: the refused upsert_pin and append_to_pin wrote nothing",
              status == 404 and rest.data(f"/v1/pins/{pin}") == read, status)


async def other_workspace(store, url, rest, other_key, pin):
    before = rest.data(f"/v1/pins/{pin}")
    async with connect(url, other_key) as (mcp, _, _):
        for tool, args in [("get_pin", {"id": pin}), ("update_pin", {"id": pin, "metadata": {"title": "Stolen"}}),
                           ("share_pin", {"id": pin, "is_public": False}), ("delete_pin", {"id": pin})]:
            error = await mcp.refused(tool, args)
            check(f"{store}: another workspace's {tool} is NOT_FOUND", error.get("code") == "NOT_FOUND", error)
        listed = await mcp.ok("list_pins", {})
        check(f"{store}: another workspace lists none of ours", listed["data"] == [], listed)
    read = rest.data(f"/v1/pins/{pin}")
    check(f"{store}: another workspace's calls changed nothing", read == before and read["is_public"] is True, read)


async def unauthorized(store, url, rest, tag):
    before = rest.count(tag)
    for label, key in [("no credential", None), ("a bad key", "cbk_not-a-real-key")]:
        try:
            async with connect(url, key, initialize=False) as (mcp, _, _):
                await asyncio.wait_for(mcp.session.initialize(), CALL_TIMEOUT)
                await mcp.call("create_pin", stat_cards("No", tag))
            check(f"{store}: the SDK client with {label} is refused", False, "no error raised")
        except Exception as err:  # noqa: BLE001 - the client raises, in an ExceptionGroup
            text = repr(err)
            check(f"{store}: the SDK client with {label} raises on HTTP 401", "401" in text, text[:500])
    # The raw response: 401, WWW-Authenticate: Bearer, the error envelope.
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                       "params": {"name": "create_pin", "arguments": stat_cards("No", tag)}}).encode()
    req = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18"})
    try:
        with urllib.request.urlopen(req, timeout=CALL_TIMEOUT) as res:
            status, headers, raw = res.status, res.headers, res.read()
    except urllib.error.HTTPError as err:
        status, headers, raw = err.code, err.headers, err.read()
    try:
        code = json.loads(raw)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        code = None
    check(f"{store}: POST /mcp without credential is HTTP 401 UNAUTHORIZED with WWW-Authenticate: Bearer",
          status == 401 and code == "UNAUTHORIZED" and (headers.get("WWW-Authenticate") or "").startswith("Bearer"),
          (status, dict(headers), raw[:300]))
    check(f"{store}: the 401s wrote nothing", rest.count(tag) == before)


async def rate_limited(store, url, base, key):
    """Write bucket of 3: three MCP writes, the fourth refused, nothing written."""
    rest = Rest(base, key)
    tag = "rl-" + uuid.uuid4().hex[:8]
    async with connect(url, key) as (mcp, _, _):
        for i in range(3):
            await mcp.ok("create_pin", stat_cards(f"w{i}", tag))
        result = await mcp.call("create_pin", stat_cards("refused", tag))
        error = result.structuredContent or {}
        headers = mcp.last_headers
        check(f"{store}: the 4th write with a bucket of 3 is RATE_LIMIT_EXCEEDED (window write)",
              result.isError and error.get("code") == "RATE_LIMIT_EXCEEDED"
              and error.get("details", {}).get("window") == "write" and error.get("details", {}).get("limit") == 3,
              result)
        check(f"{store}: the refused call's HTTP response has the X-RateLimit headers (remaining 0)",
              headers.get("x-ratelimit-remaining-minute") == "0" and "x-ratelimit-limit-hour" in headers, headers)
        titles = [p["metadata"]["title"] for p in rest.data(f"/v1/pins?tag={tag}")]
        check(f"{store}: the rate-limited call wrote nothing", sorted(titles) == ["w0", "w1", "w2"], titles)
        error = await mcp.refused("create_pinboard", {"title": "refused"})
        check(f"{store}: other write tools are refused too (create_pinboard)",
              error.get("code") == "RATE_LIMIT_EXCEEDED"
              and all(b["title"] != "refused" for b in rest.data("/v1/pinboards?limit=100")), error)
        got = await mcp.ok("list_pins", {"tag": tag})
        check(f"{store}: reads still answer while the write bucket is empty", len(got["data"]) == 3, got)


async def shared_bucket(store, url, base, rest_first_key, mcp_first_key):
    """REST and MCP writes draw on one bucket of 3, in either order."""
    rest = Rest(base, rest_first_key)
    tag = "sb-" + uuid.uuid4().hex[:8]
    async with connect(url, rest_first_key) as (mcp, _, _):
        statuses = [rest.call("POST", "/v1/pins", stat_cards(f"rest{i}", tag))[0] for i in range(2)]
        await mcp.ok("create_pin", stat_cards("mcp0", tag))
        error = await mcp.refused("create_pin", stat_cards("mcp1", tag))
        status, body, _ = rest.call("POST", "/v1/pins", stat_cards("rest2", tag))
        check(f"{store}: 2 REST writes + 1 MCP write, then MCP is refused (used 3)",
              statuses == [200, 200] and error.get("code") == "RATE_LIMIT_EXCEEDED"
              and error.get("details", {}).get("used") == 3, (statuses, error))
        check(f"{store}: ... and REST is refused (429, window write)",
              status == 429 and body["error"]["details"]["window"] == "write", (status, body))
        check(f"{store}: ... and only the 3 accepted writes exist", rest.count(tag) == 3)
    rest = Rest(base, mcp_first_key)
    async with connect(url, mcp_first_key) as (mcp, _, _):
        await mcp.ok("create_pin", stat_cards("mcp0", tag))
        result = await mcp.call("create_pins", {"pins": [stat_cards(f"b{i}", tag) for i in range(11)]})
        cost = mcp.last_headers.get("x-ratelimit-token-cost")
        status, body, _ = rest.call("POST", "/v1/pins", stat_cards("rest0", tag))
        check(f"{store}: MCP create_pin + create_pins of 11 (cost {cost}) empty the bucket; REST is refused",
              not result.isError and cost == "2" and status == 429
              and body["error"]["details"]["window"] == "write", (result.isError, cost, status, body))
        check(f"{store}: ... and only the MCP writes exist", rest.count(tag) == 3 + 12)


# --- servers and stores ------------------------------------------------------------------


def run_store(store, binary, work, pg_admin):
    try:
        with store_env(store, work, pg_admin, "mcp") as env:
            run_scenarios(store, binary, work, env)
    except Exception as err:  # noqa: BLE001 - a store that can't be set up fails its checks
        check(f"{store}: set-up", False, f"{type(err).__name__}: {err}")


def run_scenarios(store, binary, work, env):
    servers = []
    try:
        cli(binary, env, "migrate")
        key = cli(binary, env, "keys", "create", "--name", "mcp", "--scopes", "*", "--tier", "team")
        reader = cli(binary, env, "keys", "create", "--name", "reader", "--scopes", "pins:read", "--tier", "team")
        other = cli(binary, env, "keys", "create", "--name", "other", "--scopes", "*", "--tier", "team",
                    "--workspace", "other")
        # The tools' scenario: limits raised by settings (never switched off).
        raised = dict(env, CORKBOARD_RATE_LIMITS__TIERS__TEAM__PER_MINUTE="100000",
                      CORKBOARD_RATE_LIMITS__TIERS__TEAM__PER_HOUR="100000",
                      CORKBOARD_RATE_LIMITS__WRITE_BUCKET__CAPACITY="100000")
        server = Server(binary, raised, os.path.join(work, f"{store}.log"))
        servers.append(server)
        url, rest = server.base + "/mcp", Rest(server.base, key)
        print(f"# {store}: {server.base}")

        async def main():
            await step(f"{store}: initialize and tools/list", protocol(store, url, rest, key))
            tag, pin = await tools_agree_with_rest(store, url, rest, key)
            if pin is None:
                check(f"{store}: a pin for the scope and workspace checks", False, "create_pin failed above")
                return
            await step(f"{store}: SCOPE_REQUIRED", scope_required(store, url, rest, reader, tag, pin))
            await step(f"{store}: another workspace", other_workspace(store, url, rest, other, pin))
            await step(f"{store}: 401", unauthorized(store, url, rest, tag))

        asyncio.run(main())
        server.stop()
        servers.remove(server)

        # The rate-limit scenario: the same store, a write bucket of 3 per 60 s, fresh keys.
        small = dict(env, CORKBOARD_RATE_LIMITS__WRITE_BUCKET__CAPACITY="3",
                     CORKBOARD_RATE_LIMITS__WRITE_BUCKET__WINDOW_SECS="60")
        keys = [cli(binary, env, "keys", "create", "--name", f"bucket{i}", "--scopes", "*", "--tier", "team")
                for i in range(3)]
        server = Server(binary, small, os.path.join(work, f"{store}-small.log"))
        servers.append(server)
        url = server.base + "/mcp"
        print(f"# {store}: {server.base} (write bucket of 3)")

        async def limited():
            await step(f"{store}: rate-limited call", rate_limited(store, url, server.base, keys[0]))
            await step(f"{store}: write bucket shared with REST", shared_bucket(store, url, server.base, keys[1], keys[2]))

        asyncio.run(limited())
    except Exception as err:  # noqa: BLE001 - a store that can't be set up fails its checks
        check(f"{store}: set-up", False, f"{type(err).__name__}: {err}")
    finally:
        for server in servers:
            server.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", default="target/debug/corkboard")
    parser.add_argument("--stores", default="sqlite,postgres")
    args = parser.parse_args()
    pg_admin = os.environ.get("PG_ADMIN", "postgres://postgres@127.0.0.1:5432")
    binary = os.path.abspath(args.binary)
    work = tempfile.mkdtemp(prefix="mcp-client-")
    try:
        for store in args.stores.split(","):
            run_store(store, binary, work, pg_admin)
    finally:
        if FAILED:
            print(f"# server logs kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()
