-- Lua 5.4 version of bench/programs/fb_calls.st: PID_LIKE as a table per instance with the
-- inputs set field by field and a method call, as the ST calls FB instances (double for REAL).
local Pid = {}
Pid.__index = Pid

local function newPid()
  return setmetatable({SP = 0.0, PV = 0.0, KP = 0.0, KI = 0.0, KD = 0.0, TS = 0.0,
                       OUT_MAX = 0.0, OUT_MIN = 0.0, OUT = 0.0, ERR = 0.0,
                       integ = 0.0, prev_err = 0.0, deriv = 0.0}, Pid)
end

function Pid:call()
  local err = self.SP - self.PV
  self.ERR = err
  local integ = self.integ + self.KI * err * self.TS
  if integ > self.OUT_MAX then
    integ = self.OUT_MAX
  elseif integ < self.OUT_MIN then
    integ = self.OUT_MIN
  end
  self.integ = integ
  self.deriv = (err - self.prev_err) / self.TS
  local out = self.KP * err + integ + self.KD * self.deriv
  if out > self.OUT_MAX then
    out = self.OUT_MAX
  elseif out < self.OUT_MIN then
    out = self.OUT_MIN
  end
  self.OUT = out
  self.prev_err = err
end

local pid, sp, pv = {}, {}, {}
for k = 0, 99 do pid[k] = newPid() end
local cycle, initdone, check = 0, false, 0.0

function scan(_)
  if not initdone then
    for k = 0, 99 do
      sp[k] = k * 0.5 + 10.0
      pv[k] = 0.0
    end
    initdone = true
  end
  cycle = cycle + 1
  if cycle >= 500 then
    cycle = 0
    for k = 0, 99 do sp[k] = -sp[k] end
  end
  for k = 0, 99 do
    local p = pid[k]
    p.SP = sp[k]; p.PV = pv[k]; p.KP = 1.2; p.KI = 0.5; p.KD = 0.01; p.TS = 0.01
    p.OUT_MAX = 100.0; p.OUT_MIN = -100.0
    p:call()
    pv[k] = pv[k] + (p.OUT - pv[k]) * 0.05
  end
  check = pv[0] + pv[50] + pv[99]
end

function result() return check end
