// The scan's start lateness with the live page closed and open, side by side in one run of
// `takt run` on the demo: phases alternate (closed, open and trending, closed, open, …) and each
// phase's lateness is the difference of runtime.histogram's buckets at its ends, so both
// figures come from the same process on the same machine minutes apart at most.
// `node jitter.mjs [--phase-seconds N] [--phases N] [--out FILE]`; timing is never asserted.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ENGINEER_TOKEN, launchBrowser, openPage, rpc, showVariable, sleep, startDemo } from './support.mjs';

const { values: args } = parseArgs({
  options: { 'phase-seconds': { type: 'string', default: '15' }, phases: { type: 'string', default: '6' }, out: { type: 'string' } },
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

const demo = await startDemo();
const browser = await launchBrowser();
const results = { closed: [], open: [] };
try {
  const snapshot = async () => counts((await rpc(demo.url, 'runtime.histogram')).body.result.lateness);
  await sleep(3000); // past the start
  for (let p = 0; p < phases; ++p) {
    const open = p % 2 === 1;
    let page;
    if (open) {
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
  await browser.close();
  await demo.stop();
}
const mean = (list, key) => list.reduce((s, r) => s + r[key], 0) / list.length;
const report = {
  phase_seconds: phaseMs / 1000,
  phases: results,
  p99_ratio_open_closed: mean(results.open, 'p99_us') / mean(results.closed, 'p99_us'),
  p50_ratio_open_closed: mean(results.open, 'p50_us') / mean(results.closed, 'p50_us'),
};
console.log(`p50 open / closed: ${report.p50_ratio_open_closed.toFixed(2)}  p99 open / closed: ${report.p99_ratio_open_closed.toFixed(2)}`);
if (args.out) writeFileSync(args.out, `${JSON.stringify(report, null, 2)}\n`);
