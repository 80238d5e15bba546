// What the OPC UA measurements (load.mjs, demo_load.mjs) share: a process's CPU time and RSS from
// /proc, a quantile of a list, a quantile of the scan's lateness over a window from two
// runtime.histogram answers, and a call of `takt ctl`.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { takt } from './support.mjs';

// utime + stime of `pid`, in seconds (USER_HZ 100).
export const cpuOf = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};

export const rssOf = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;

export const quantile = (list, q) =>
  list.length === 0 ? null : Math.round(list.slice().sort((a, b) => a - b)[Math.min(list.length - 1, Math.floor(list.length * q))]);

// The lateness quantile `q` of the scans between two runtime.histogram answers: the upper edge of
// the bucket it falls in, in µs.
export const histogramQuantile = (before, after, q) => {
  const delta = after.lateness.map(([low, high, n], i) => [low, high, n - (before.lateness[i] ? before.lateness[i][2] : 0)]);
  const total = delta.reduce((s, b) => s + b[2], 0);
  let seen = 0;
  for (const [, high, n] of delta) {
    seen += n;
    if (seen >= total * q) return high;
  }
  return null;
};

// `takt ctl --project dir method`, its answer parsed.
export const ctl = async (dir, method) => JSON.parse((await promisify(execFile)(takt, ['ctl', '--project', dir, method])).stdout);
