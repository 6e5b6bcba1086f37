-- wrk script for bench/reports.sh: POSTs a batch of report events, every request with event IDs
-- and a device ID of its own, and counts the answers by status.
--
--   wrk … -s reports_events.lua URL TEMPLATE LABEL
--
-- TEMPLATE is a file holding the batch's JSON with "@R" where the request's prefix goes (in every
-- event ID and in the device ID); LABEL (7 characters) tells this run from the others. The prefix
-- is LABEL-tTT-NNNNNNNNNN (thread, request counter), always 22 characters, so every request's body
-- has the same size and no event ID or device ID repeats: neither the server's idempotency set nor
-- its per-device budget comes into play. wrk's -H headers (authorization, content type) are sent.
-- At the end it prints one line: "answers: OK below 400 of ALL" (the server answers a batch with 200
-- or an error status; wrk counts answers of 400 and above).
--
-- The client shares the two cores with the server, so it does as little as it can per request: the
-- template is split at its "@R"s once, and the request line and headers (the same for every request:
-- every body has the same size) are made once. It has no response() hook: with one, wrk hands every
-- answer's headers and body to Lua, and that hook and gsub() took a third of the machine's CPU
-- (perf, 2026-11-25) away from the server.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  local file = assert(io.open(args[1], "rb"), "cannot read the batch template " .. tostring(args[1]))
  local template = file:read("*a")
  file:close()
  label = args[2]
  assert(label and #label == 7, "LABEL must be 7 characters")
  counter = 0
  -- parts: the request's head, then the template's pieces with a slot for the prefix after each one
  -- but the last; slots holds the slots' indexes.
  parts, slots = {""}, {}
  local from = 1
  while true do
    local at = string.find(template, "@R", from, true)
    if not at then break end
    table.insert(parts, string.sub(template, from, at - 1))
    table.insert(parts, "")
    table.insert(slots, #parts)
    from = at + 2
  end
  table.insert(parts, string.sub(template, from))
  local body = fill(string.rep("x", 22))
  local request = wrk.format("POST", nil, nil, body)
  parts[1] = string.sub(request, 1, #request - #body)
end

-- The request (head and body) with PREFIX in every slot.
function fill(prefix)
  for i = 1, #slots do parts[slots[i]] = prefix end
  return table.concat(parts)
end

function request()
  counter = counter + 1
  return fill(string.format("%s-t%02d-%010d", label, tid, counter))
end

function done(summary, latency, requests)
  io.write(string.format("answers: %d below 400 of %d\n", summary.requests - summary.errors.status, summary.requests))
end
