-- Lua 5.4 version of bench/programs/timers_edges.st: TON and R_TRIG as tables with the IEC
-- semantics of the native twin; scan(now_ns) gets the scan timestamp in ns (integer).
local function ton(t, now)
  if not t.IN then
    t.Q = false; t.ET = 0; t.running = false
    return
  end
  local et = 0
  if not t.running then
    t.start = now; t.running = true
  else
    et = now - t.start
    if et < 0 then et = 0 elseif et > t.PT then et = t.PT end
  end
  t.ET = et
  t.Q = et >= t.PT
end

local function rtrig(r)
  r.Q = r.CLK and not r.M
  r.M = r.CLK
end

local tons, trgs, inp = {}, {}, {}
for k = 0, 199 do
  tons[k] = {IN = false, PT = 0, Q = false, ET = 0, start = 0, running = false}
  trgs[k] = {CLK = false, Q = false, M = false}
  inp[k] = false
end
local cnt, fired, check = 0, 0, 0.0

function scan(now)
  cnt = cnt + 1
  if cnt >= 1000000 then cnt = 0 end
  for k = 0, 199 do inp[k] = ((cnt + k) % 50) < 25 end
  for k = 0, 199 do
    local t, r = tons[k], trgs[k]
    t.IN = inp[k]; t.PT = (5 + k % 20) * 1000000
    ton(t, now)
    r.CLK = t.Q
    rtrig(r)
    if r.Q then fired = fired + 1 end
  end
  fired = fired % 1000000000
  check = fired + 0.0
end

function result() return check end
