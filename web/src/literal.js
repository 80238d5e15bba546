// IEC literal text (var.read or var.subscribe with format = iec) as the number a trend draws.

// Trend values are numbers: numeric literals, TRUE/FALSE as 1/0, 16#/8#/2# bit strings, and
// T#/LT# durations in milliseconds. Anything else (a string, a structure) is not drawn.
const UNITS_MS = { d: 86400000, h: 3600000, m: 60000, s: 1000, ms: 1, us: 1e-3, ns: 1e-6 };
export function numeric(literal) {
  if (literal === 'TRUE') return 1;
  if (literal === 'FALSE') return 0;
  const body = literal.replace(/^[A-Z_]+#(?=[-0-9])/, '');
  const radix = /^(2|8|16)#([0-9A-Fa-f_]+)$/.exec(body);
  if (radix) return parseInt(radix[2].replace(/_/g, ''), Number(radix[1]));
  const time = /^L?T(?:IME)?#(-?)([0-9dhmsun_.]+)$/i.exec(literal);
  if (time) {
    let ms = 0;
    for (const [, n, unit] of time[2].replace(/_/g, '').matchAll(/([0-9.]+)(ms|us|ns|d|h|m|s)/g)) {
      ms += Number(n) * UNITS_MS[unit];
    }
    return time[1] ? -ms : ms;
  }
  const n = Number(body);
  return Number.isFinite(n) ? n : null;
}
