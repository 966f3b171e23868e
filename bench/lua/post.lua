-- POST (or METHOD) a body read from BODY_FILE with the key in KEY (none when KEY is empty).
local f = assert(io.open(os.getenv("BODY_FILE"), "r"))
wrk.method = os.getenv("METHOD") or "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
local key = os.getenv("KEY") or ""
if key ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. key
end
done = function(summary, latency, requests)
  io.write(string.format("p99_ms=%.3f\n", latency:percentile(99) / 1000))
end
