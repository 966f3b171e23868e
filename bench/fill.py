"""Fill a Corkboard store up to N pins with batches of 100 over one keep-alive connection.

usage: fill.py BASE_URL KEY N
"""
import http.client
import json
import sys
import urllib.parse

base, key, total = sys.argv[1], sys.argv[2], int(sys.argv[3])
url = urllib.parse.urlparse(base)
conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
card = {"title": "Revenue", "value": "$1.2M", "change": "+4%", "trend": "up"}
done = 0
while done < total:
    n = min(100, total - done)
    body = {"pins": [{"pin_type": "stat-cards", "pin_config": {"cards": [card]},
                      "metadata": {"title": f"fill {done + i}", "tags": ["bench"]}} for i in range(n)]}
    conn.request("POST", "/v1/pins/batch", json.dumps(body), headers)
    res = conn.getresponse()
    res.read()
    if res.status != 200:
        sys.exit(f"fill failed with HTTP {res.status}")
    done += n
