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
-- At the end it prints one line: "answers: OK 200 of ALL; first other: STATUS BODY".

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  local file = assert(io.open(args[1], "rb"), "cannot read the batch template " .. tostring(args[1]))
  template = file:read("*a")
  file:close()
  label = args[2]
  assert(label and #label == 7, "LABEL must be 7 characters")
  counter = 0
  ok = 0
  other = 0
  first_other = ""
end

function request()
  counter = counter + 1
  local prefix = string.format("%s-t%02d-%010d", label, tid, counter)
  local body = template:gsub("@R", prefix)
  return wrk.format("POST", nil, nil, body)
end

function response(status, headers, body)
  if status == 200 then
    ok = ok + 1
  else
    other = other + 1
    if first_other == "" then first_other = status .. " " .. (string.sub(body or "", 1, 200):gsub("%c", " ")) end
  end
end

function done(summary, latency, requests)
  local total_ok, total, first = 0, 0, ""
  for _, thread in ipairs(threads) do
    total_ok = total_ok + thread:get("ok")
    total = total + thread:get("ok") + thread:get("other")
    if first == "" then first = thread:get("first_other") end
  end
  io.write(string.format("answers: %d 200 of %d; first other: %s\n", total_ok, total, first == "" and "none" or first))
end
