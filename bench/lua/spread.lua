-- METHOD (default POST) a body to one of the paths in PATHS_FILE (one a line), picked at random
-- for each request, with the key in KEY, or the key after the path on its line (`path key`:
-- paths of several workspaces in one run). The body is BODY_FILE with `@U@` replaced by a string
-- no other request sends (the run's start second, the thread, a counter), so each request
-- changes the pin it names, and `@N@` by the counter. The URL given to wrk only names the
-- server. Prints p99 latency in ms on the last line.
local paths = {}
for line in io.lines(os.getenv("PATHS_FILE")) do
  local path, key = line:match("^(%S+)%s*(%S*)$")
  if path then
    table.insert(paths, { path = path, key = key ~= "" and key or os.getenv("KEY") })
  end
end
local f = assert(io.open(os.getenv("BODY_FILE"), "r"))
local template = f:read("*a")
f:close()
local method = os.getenv("METHOD") or "POST"
local headers = { ["Content-Type"] = "application/json" }

local threads = 0
local run = os.time() % 100000
function setup(thread)
  threads = threads + 1
  thread:set("thread_no", threads)
  thread:set("run", run)
end

local counter = 0
function init(args)
  math.randomseed(run * 100 + thread_no)
end

function request()
  counter = counter + 1
  local unique = string.format("%05d.%d.%06d", run, thread_no, counter)
  local body = template:gsub("@U@", unique):gsub("@N@", tostring(counter))
  local target = paths[math.random(#paths)]
  headers["Authorization"] = "Bearer " .. target.key
  return wrk.format(method, target.path, headers, body)
end

done = function(summary, latency, requests)
  io.write(string.format("p99_ms=%.3f\n", latency:percentile(99) / 1000))
end
