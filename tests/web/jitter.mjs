// The scan's start lateness with the live page closed and open, side by side in one run of
// `takt run` on the demo: phases alternate (closed, open and trending, closed, open, …) and each
// phase's lateness is the difference of runtime.histogram's buckets at its ends, so both
// figures come from the same process on the same machine minutes apart at most.
// `node jitter.mjs [--phase-seconds N] [--phases N] [--fifo] [--no-browser] [--out FILE]`; --fifo
// runs the scan thread as SCHED_FIFO 80 with its memory locked, as a PLC is deployed;
// --no-browser sends the page's requests from this process instead of Chromium (the server's
// share of the cost without the browser's rendering on the same machine). Timing is never
// asserted.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ENGINEER_TOKEN, launchBrowser, openPage, rpc, showVariable, sleep, startDemo } from './support.mjs';

const { values: args } = parseArgs({
  options: {
    'phase-seconds': { type: 'string', default: '15' },
    phases: { type: 'string', default: '6' },
    fifo: { type: 'boolean', default: false },
    'no-browser': { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const phaseMs = Number(args['phase-seconds']) * 1000;
const phases = Number(args.phases);

// Cumulative buckets [low_us, high_us, count] -> a map high_us -> count.
const counts = (buckets) => new Map(buckets.map(([, hi, n]) => [hi, n]));

function summary(before, after) {
  const diff = [...after].map(([hi, n]) => [hi, n - (before.get(hi) ?? 0)]).filter(([, n]) => n > 0).sort((a, b) => a[0] - b[0]);
  const total = diff.reduce((s, [, n]) => s + n, 0);
  const at = (q) => {
    let seen = 0;
    for (const [hi, n] of diff) {
      seen += n;
      if (seen >= q * total) return hi;
    }
    return 0;
  };
  return { cycles: total, p50_us: at(0.5), p99_us: at(0.99), p999_us: at(0.999), max_us: diff.length ? diff[diff.length - 1][0] : 0 };
}

const realtime = '\n[runtime.realtime]\nscheduler = "fifo"\npriority = 80\nlock_memory = true\n';
// The page's traffic without the page: its two poll loops, each waiting for its answer.
function pageTraffic(url, names) {
  let running = true;
  const fast = (async () => {
    while (running) {
      await rpc(url, 'var.read', { names, format: 'iec' }, ENGINEER_TOKEN);
      await sleep(250);
    }
  })();
  const slow = (async () => {
    while (running) {
      for (const m of ['runtime.status', 'runtime.stats', 'events.recent', 'runtime.histogram']) {
        await rpc(url, m, {}, ENGINEER_TOKEN);
      }
      await rpc(url, 'var.list', { pattern: 'Line', offset: 0, limit: 40 }, ENGINEER_TOKEN);
      await sleep(1000);
    }
  })();
  return { close: async () => { running = false; await Promise.all([fast, slow]); } };
}

const demo = await startDemo({ extraToml: args.fifo ? realtime : '' });
const browser = args['no-browser'] ? null : await launchBrowser();
const results = { closed: [], open: [] };
try {
  const snapshot = async () => counts((await rpc(demo.url, 'runtime.histogram')).body.result.lateness);
  await sleep(3000); // past the start
  for (let p = 0; p < phases; ++p) {
    const open = p % 2 === 1;
    let page;
    if (open && args['no-browser']) {
      const list = (await rpc(demo.url, 'var.list', { pattern: 'Line', limit: 40 })).body.result.variables;
      const names = list.filter((v, i) => !list[i + 1]?.path.startsWith(`${v.path}.`)).map((v) => v.path);
      page = pageTraffic(demo.url, [...names, 'gTankLevel']);
    } else if (open) {
      page = await openPage(browser, demo.url, ENGINEER_TOKEN);
      for (const name of ['gTankLevel', 'Line.Tank.Pump', 'Line.Belt.Run']) {
        await (await showVariable(page.page, name)).locator('input.trend').check();
      }
      await page.page.fill('#search', 'Line');
    }
    const before = await snapshot();
    await sleep(phaseMs);
    const s = summary(before, await snapshot());
    results[open ? 'open' : 'closed'].push(s);
    console.log(`${open ? 'page open   ' : 'page closed '} ${JSON.stringify(s)}`);
    await page?.close();
  }
} finally {
  await browser?.close();
  await demo.stop();
}
const mean = (list, key) => list.reduce((s, r) => s + r[key], 0) / list.length;
const report = {
  scheduler: args.fifo ? 'fifo 80, memory locked' : 'other',
  client: args['no-browser'] ? "the page's requests from node" : 'chromium on the same machine',
  phase_seconds: phaseMs / 1000,
  phases: results,
  p99_ratio_open_closed: mean(results.open, 'p99_us') / mean(results.closed, 'p99_us'),
  p50_ratio_open_closed: mean(results.open, 'p50_us') / mean(results.closed, 'p50_us'),
};
console.log(`p50 open / closed: ${report.p50_ratio_open_closed.toFixed(2)}  p99 open / closed: ${report.p99_ratio_open_closed.toFixed(2)}`);
if (args.out) writeFileSync(args.out, `${JSON.stringify(report, null, 2)}\n`);
