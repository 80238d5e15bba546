-- Lua 5.4 version of bench/programs/real_math.st. Lua has one float type (double), so the REAL
-- variables are computed in double here; the work per scan is the same.
local sqrt, sin = math.sqrt, math.sin
local cnt, base, acc, accr, check = 0, 0.0, 0.0, 0.0, 0.0

function scan(_)
  cnt = cnt + 1
  if cnt >= 1000 then cnt = 0 end
  base = cnt * 0.001
  for i = 1, 1000 do
    local r = base + i * 0.0005
    local s = sqrt(r * r + 1.0)
    local lr = sin(s * 2.5) * 0.5 + r / 3.0
    acc = acc * 0.999 + lr
    accr = accr * 0.99 + s * 0.01
  end
  check = acc + accr
end

function result() return check end
