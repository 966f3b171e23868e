-- POST /mcp a JSON-RPC message read from BODY_FILE (a tools/call) with the key in KEY, with the
-- headers a Streamable HTTP client sends. A tool error is HTTP 200 with "isError":true, so the
-- answers are counted too: `tool_errors=N` on the last lines (run.sh fails when N > 0).
local f = assert(io.open(os.getenv("BODY_FILE"), "r"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2025-06-18"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("KEY")

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

tool_errors = 0
function response(status, headers, body)
  if status == 200 and not string.find(body, '"isError":false', 1, true) then
    tool_errors = tool_errors + 1
  end
end

done = function(summary, latency, requests)
  local errors = 0
  for _, thread in ipairs(threads) do
    errors = errors + thread:get("tool_errors")
  end
  io.write(string.format("p99_ms=%.3f\n", latency:percentile(99) / 1000))
  io.write(string.format("tool_errors=%d\n", errors))
end
