-- POST a body read from BODY_FILE with the key in KEY.
local f = assert(io.open(os.getenv("BODY_FILE"), "r"))
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("KEY")
done = function(summary, latency, requests)
  io.write(string.format("p99_ms=%.3f\n", latency:percentile(99) / 1000))
end
