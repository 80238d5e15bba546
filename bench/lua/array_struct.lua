-- Lua 5.4 version of bench/programs/array_struct.st: the array of structs is an array of
-- tables; the bubble-sort swap copies the three fields, as the ST assigns whole structs.
local data = {}
for k = 0, 255 do data[k] = {id = 0, val = 0.0, avg = 0.0} end
local head, seed, swaps, check = 0, 12345, 0, 0.0

function scan(_)
  seed = (seed * 75 + 74) % 65537
  data[head].id = seed % 30000
  data[head].val = seed * 0.001
  head = (head + 1) % 256
  for i = 0, 255 do
    local sum = 0.0
    for j = 0, 7 do sum = sum + data[(i + j) % 256].val end
    data[i].avg = sum * 0.125
  end
  for i = 0, 254 do
    local a, b = data[i], data[i + 1]
    if a.id > b.id then
      local id, val, avg = a.id, a.val, a.avg
      a.id, a.val, a.avg = b.id, b.val, b.avg
      b.id, b.val, b.avg = id, val, avg
      swaps = swaps + 1
    end
  end
  swaps = swaps % 1000000
  check = data[0].avg + data[255].avg + swaps
end

function result() return check end
