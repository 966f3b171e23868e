-- GET with the key in KEY; prints p99 latency in ms on the last line.
wrk.method = "GET"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("KEY") or "")
done = function(summary, latency, requests)
  io.write(string.format("p99_ms=%.3f\n", latency:percentile(99) / 1000))
end
