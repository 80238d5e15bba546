-- Lua 5.4 version of bench/programs/int_arith.st (integer subtype; all values stay positive,
-- so Lua's floor % equals IEC MOD). scan(now_ns) runs one scan; result() returns check.
local x, acc, hits, cycle, check = 1, 0, 0, 0, 0.0

function scan(_)
  cycle = cycle + 1
  if cycle >= 1000000 then cycle = 0 end
  x = cycle % 65521
  for i = 1, 1000 do
    x = (x * 31 + i) % 65521
    acc = (acc + x * 3 + i) % 1000003
    if x > 32760 then
      hits = hits + 1
    elseif x % 3 == 0 then
      hits = hits + 2
    end
  end
  hits = hits % 1000000
  check = acc + hits + 0.0
end

function result() return check end
