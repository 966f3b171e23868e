"""A small scenario through a client that openapi-python-client generated from the served
/v1/openapi.json (see .ci/generated-client): the document must stay usable by real
generators, with readable method names, optional filters and typed errors.

Usage: python3 .ci/generated_client.py <base URL> <API key> (the generated package
`corkboard_client` on sys.path). Exits non-zero on the first failed step.
"""

import sys

from corkboard_client import AuthenticatedClient
from corkboard_client.api.pinboards import create_pinboard, place_pin
from corkboard_client.api.pins import (
    append_to_pin_by_key, create_pin, get_pin, get_pin_by_key, list_pins, upsert_pin,
)
from corkboard_client.models import ChartAppend, CreateBoardBody, CreateBody, Error, PlaceBody
from corkboard_client.models.list_pins_pin_type import ListPinsPinType


def check(condition, what):
    if not condition:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


def main(base, key):
    client = AuthenticatedClient(base_url=base, token=key, raise_on_unexpected_status=True)

    body = CreateBody.from_dict({
        "pin_type": "stat-cards",
        "pin_config": {"cards": [{"title": "Revenue", "value": "1.2M", "trend": "up"}]},
        "metadata": {"title": "Revenue", "tags": ["finance"]},
    })
    created = create_pin.sync_detailed(client=client, body=body, idempotency_key="gen-1")
    check(created.status_code == 200, f"createPin answers 200 ({created.status_code})")
    pin_id = created.parsed.data.id
    check(pin_id.startswith("p-") and created.parsed.data.pin_id == pin_id, "createPin returns the pin id")

    read = get_pin.sync(client=client, id=pin_id)
    check(read.data.id == pin_id and read.data.version == 1, "getPin reads it back, version 1")
    check(read.data.metadata.tags == ["finance"], "getPin carries the tags")

    markdown = CreateBody.from_dict({"pin_type": "markdown", "pin_config": {"text": "# Notes"}})
    check(create_pin.sync_detailed(client=client, body=markdown).status_code == 200, "a second pin")

    everything = list_pins.sync(client=client)
    check(len(everything.data) == 2 and everything.pagination.has_more is False,
          "listPins without filters lists both")
    cards = list_pins.sync(client=client, pin_type=ListPinsPinType.STAT_CARDS)
    check([p.id for p in cards.data] == [pin_id], "listPins filtered by pin_type")
    tagged = list_pins.sync(client=client, tag="finance", limit=1)
    check([p.id for p in tagged.data] == [pin_id], "listPins filtered by tag, with a limit")
    first = list_pins.sync(client=client, limit=1)
    check(first.pagination.has_more and first.pagination.next_cursor, "a first page of one")
    second = list_pins.sync(client=client, limit=1, cursor=first.pagination.next_cursor)
    check(len(second.data) == 1 and second.data[0].id != first.data[0].id, "the next page by cursor")

    board = create_pinboard.sync(client=client, body=CreateBoardBody.from_dict({"title": "Ops"}))
    placed = place_pin.sync(client=client, id=board.data.id,
                            body=PlaceBody.from_dict({"pin_id": pin_id, "position": {"x": 0, "y": 0}}))
    check(placed.data.pin_id == pin_id, "createPinboard and placePin")
    on_board = list_pins.sync(client=client, pinboard_id=board.data.id)
    check([p.id for p in on_board.data] == [pin_id], "listPins filtered by pinboard_id")

    refused_body = CreateBody.from_dict({"pin_type": "kpi", "pin_config": {"text": "not a kpi"}})
    refused = create_pin.sync_detailed(client=client, body=refused_body)
    check(refused.status_code == 400 and isinstance(refused.parsed, Error),
          "a create of an invalid configuration is a typed 400")
    check(refused.parsed.error.code.value == "PIN_CONFIG_INVALID", "its code is PIN_CONFIG_INVALID")
    check(refused.parsed.error.details["field"].startswith("pin_config"), "its details name the field")
    # Automation writes (CONTRACT.md 14): upsert by key, twice, then append by key.
    chart = CreateBody.from_dict({
        "pin_type": "line-chart",
        "pin_config": {"labels": ["09:00"], "series": [{"name": "p95", "data": [210]}]},
    })
    first = upsert_pin.sync_detailed(client=client, key="latency", body=chart)
    check(first.status_code == 200 and first.parsed.to_dict()["data"]["created"] is True,
          "upsertPin creates the keyed pin")
    again = upsert_pin.sync_detailed(client=client, key="latency", body=chart).parsed.to_dict()["data"]
    check(again["created"] is False and again["changed"] is False and again["version"] == 1,
          "upsertPin of the same body changes nothing")
    point = ChartAppend.from_dict({"points": [{"label": "09:05", "values": {"p95": 230}}], "max_points": 2})
    appended = append_to_pin_by_key.sync_detailed(client=client, key="latency", body=point)
    data = appended.parsed.to_dict()["data"]
    check(appended.status_code == 200 and data["version"] == 2 and data["size"] == 2,
          "appendToPinByKey adds a point")
    keyed = get_pin_by_key.sync(client=client, key="latency")
    check(keyed.data.key == "latency" and keyed.data.version == 2, "getPinByKey reads it")
    print("generated client: every step passed")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
