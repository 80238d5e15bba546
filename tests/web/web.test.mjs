// The live page of `takt run` in a real headless Chromium against the running demo: values change
// on the page, a trend draws, a force made on the page reaches the runtime (seen by `takt watch`
// and by the control endpoint), a viewer cannot force, and the page survives an online change.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import {
  ENGINEER_TOKEN, VIEWER_TOKEN, haveChromium, launchBrowser, openPage, rpc, showVariable, startDemo, until,
} from './support.mjs';

const skip = haveChromium() ? false : 'chromium is not installed (scripts/setup.sh installs it)';

// What the page says about its link and its last action, for a failure message.
async function pageState(page) {
  const link = await page.textContent('#link').catch(() => '?');
  const action = await page.textContent('#action-error').catch(() => '?');
  const state = await page.textContent('#state').catch(() => '?');
  const fault = await page.textContent('#fault').catch(() => '?');
  return `page link: '${link}', action error: '${action}', state: '${state}', fault: '${fault}'`;
}

// `until`, with the page's state in the message when it times out.
async function untilOnPage(page, what, fn, timeoutMs) {
  try {
    return await until(what, fn, timeoutMs);
  } catch (err) {
    throw new Error(`${err.message}; ${await pageState(page)}`);
  }
}

describe('the live page', { skip }, () => {
  let demo;
  let browser;

  before(async () => {
    demo = await startDemo();
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await demo?.stop();
  });

  // The values come from a subscription (/api/events), not from polling var.read: every request
  // the page makes is recorded, and no /api/rpc body asks for var.read.
  test('the tank level changes on the page without any var.read', async () => {
    const { page, errors, close } = await openPage(browser, demo.url);
    const rpcMethods = [];
    const streams = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname === '/api/rpc') rpcMethods.push(JSON.parse(r.postData() ?? '{}').method);
      if (url.pathname === '/api/events') streams.push(JSON.parse(r.postData() ?? '{}'));
    });
    const row = await showVariable(page, 'gTankLevel');
    const value = row.locator('td.value');
    const first = await until('a first value', async () => (await value.textContent()) || null);
    assert.match(first, /^-?\d+(\.\d+)?$/, 'a REAL as an IEC literal');
    await untilOnPage(page, 'the level to change', async () => (await value.textContent()) !== first);
    const second = await value.textContent();
    await untilOnPage(page, 'the level to change again', async () => (await value.textContent()) !== second);
    await until('the state badge', async () => (await page.textContent('#state')) === 'running');
    assert.ok(rpcMethods.length > 0, 'the page polls the status');
    assert.deepEqual(rpcMethods.filter((m) => m === 'var.read'), [], `no var.read among ${rpcMethods.join(', ')}`);
    assert.ok(streams.some((p) => p.names?.includes('gTankLevel') && p.format === 'iec'),
      `a subscription of the shown variables: ${JSON.stringify(streams)}`);
    // One stream for the one set of variables shown, not one per value.
    assert.ok(streams.length <= 5, `${streams.length} streams opened`);
    assert.deepEqual(errors, []);
    await close();
  });

  // The tree is paged (40 rows a page, values polled for the shown page only), so a program with a
  // few hundred variables stays as quick to browse as the demo: every page is reachable and live.
  test('a few hundred variables stay browsable page by page', async () => {
    const lines = ['VAR_GLOBAL'];
    for (let i = 0; i < 400; i++) lines.push(`    gMany${String(i).padStart(3, '0')} : INT := ${i};`);
    lines.push('END_VAR', '');
    const big = await startDemo({ extraFiles: { 'src/many.st': lines.join('\n') } });
    try {
      const { page, errors, close } = await openPage(browser, big.url);
      await page.fill('#search', 'gMany');
      await until('the first page', async () => (await page.textContent('#page')) === '1–40 of 400');
      for (let i = 0; i < 9; i++) await page.click('#next');
      await until('the last page', async () => (await page.textContent('#page')) === '361–400 of 400');
      const last = page.locator('#vars tr[data-path="gMany399"] td.value');
      await until('the last variable\'s value', async () => (await last.textContent()) === '399');
      assert.deepEqual(errors, []);
      await close();
    } finally {
      await big.stop();
    }
  });

  // The OPC UA server's health from runtime.status: absent without [runtime.opcua], its state,
  // restarts, sessions and monitored items with it.
  test('the OPC UA server shows in the Runtime panel when it is enabled', async () => {
    const plain = await openPage(browser, demo.url);
    await until('the state badge', async () => (await plain.page.textContent('#state')) === 'running');
    assert.equal(await plain.page.isVisible('#opcua-panel'), false, 'no OPC UA server, no panel');
    await plain.close();
    const port = await new Promise((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = s.address();
        s.close(() => resolve(p));
      });
    });
    const served = await startDemo({ extraToml: `\n[runtime.opcua]\nenabled = true\nlisten = "127.0.0.1:${port}"\n` });
    try {
      const { page, errors, close } = await openPage(browser, served.url);
      await untilOnPage(page, 'the OPC UA server running on the page', async () =>
        (await page.isVisible('#opcua-panel')) && /running/.test(await page.textContent('#opcua')), 60000);
      const text = await page.textContent('#opcua');
      assert.match(text, new RegExp(`opc\\.tcp://127\\.0\\.0\\.1:${port}`));
      assert.match(text, /restarts0/);
      assert.match(text, /monitored items0/);
      assert.deepEqual(errors, []);
      await close();
    } finally {
      await served.stop();
    }
  });

  test('a trend of two variables draws new points on its canvas', async () => {
    const { page, errors, close } = await openPage(browser, demo.url);
    for (const name of ['gTankLevel', 'Line.Tank.Pump']) {
      const row = await showVariable(page, name);
      await row.locator('input.trend').check();
    }
    const points = async () => Number(await page.getAttribute('#trend', 'data-points'));
    const start = await until('the first points', async () => ((await points()) > 2 ? points() : 0));
    await until('more points', async () => (await points()) > start + 4);
    // The canvas holds painted pixels of the series colour, not only the background. The line
    // grows with the time the trend covers, so a loaded machine, which delivers fewer points at
    // first, is given until the bound to draw it.
    const painted = () =>
      page.evaluate(() => {
        const c = document.querySelector('#trend canvas');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let blue = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i + 2] > 150 && d[i] < 100 && d[i + 3] > 0) blue++;
        return blue;
      });
    await until("the tank level's line drawn on the canvas", async () => (await painted()) > 50);
    assert.ok(Number(await page.getAttribute('#histogram', 'data-buckets')) > 0, 'the lateness histogram has buckets');
    assert.deepEqual(errors, []);
    await close();
  });

  // The demo's CONFIGURATION has two tasks, so each runs on a scan thread of its own: the page
  // shows each one's priority, interval, cycles, overruns, last and longest execution time and
  // lateness p99 as runtime.stats gives them, and the cycles move on.
  test('each task on its own thread has its figures on the page', async () => {
    const { page, errors, close } = await openPage(browser, demo.url);
    const columns = await page.locator('#tasks thead th').allTextContents();
    const cell = async (task, column) => {
      const i = columns.indexOf(column);
      assert.ok(i >= 0, `a column '${column}' among ${columns.join(', ')}`);
      return page.locator(`#tasks tbody tr[data-task="${task}"] td`).nth(i).textContent();
    };
    const duration = /^\d+\.\d+ (µs|ms)$/;
    const ms = (text) => Number(text.replace(/ (µs|ms)$/, '')) / (text.endsWith('µs') ? 1000 : 1);
    const spreadOf = (text) => text.split(' / ').map((part) => { assert.match(part, duration); return ms(part); });
    await until('both tasks on the page', async () => (await page.locator('#tasks tbody tr.thread').count()) === 2);
    assert.match(await page.textContent('#tasks-mode'), /own/);
    const expected = { FastTask: { priority: '1', interval: '10 ms' }, SlowTask: { priority: '2', interval: '50 ms' } };
    const first = {};
    for (const [task, want] of Object.entries(expected)) {
      assert.equal(await cell(task, 'task'), task);
      assert.equal(await cell(task, 'priority'), want.priority);
      assert.equal(await cell(task, 'interval'), want.interval);
      assert.equal(await cell(task, 'runs on'), 'own thread');
      assert.match(await cell(task, 'overruns'), /^\d+$/);
      assert.match(await cell(task, 'exec last'), duration);
      const [, , max] = spreadOf(await cell(task, 'exec p50 / p99 / max'));
      assert.ok(ms(await cell(task, 'exec last')) <= max, `${task}: the last execution time is within the longest`);
      const [p50, p99] = spreadOf(await cell(task, 'lateness p50 / p99 / max'));
      assert.ok(p50 <= p99, `${task}: lateness p50 ${p50} ms <= p99 ${p99} ms`);
      first[task] = Number(await cell(task, 'cycles'));
    }
    // The figures are runtime.stats' own, and they move on.
    const stats = (await rpc(demo.url, 'runtime.stats')).body.result;
    for (const t of stats.tasks) {
      assert.equal(t.thread, true, `${t.name} runs on a thread of its own`);
      assert.ok(first[t.name] <= t.cycles, `${t.name}: page ${first[t.name]} cycles, runtime.stats ${t.cycles} later`);
      assert.ok(typeof t.last_exec_us === 'number' && t.last_exec_us > 0, `${t.name}: last_exec_us ${t.last_exec_us}`);
    }
    await untilOnPage(page, 'the slow task to run again', async () => Number(await cell('SlowTask', 'cycles')) > first.SlowTask + 2);
    const fast = Number(await cell('FastTask', 'cycles'));
    const slow = Number(await cell('SlowTask', 'cycles'));
    assert.ok(fast > first.FastTask && fast > 2 * slow, `FastTask every 10 ms ran ${fast}, SlowTask every 50 ms ${slow}`);
    assert.equal(await page.locator('#tasks tbody tr.base td').first().textContent(), 'base cycle');
    assert.deepEqual(errors, []);
    await close();
  });

  test('a force made on the page is seen by takt watch and the control endpoint', async () => {
    const { page, errors, close } = await openPage(browser, demo.url, ENGINEER_TOKEN);
    assert.equal(await page.textContent('#role'), 'engineer');
    const row = await showVariable(page, 'aiTankLevel');
    await row.locator('input.value-input').fill('13824');
    await row.locator('button.force').click();
    await until('the row to show the force', async () => (await row.getAttribute('class')) === 'forced' || (await page.textContent('#action-error')) || null);
    assert.equal(await row.getAttribute('class'), 'forced', await page.textContent('#action-error'));
    const forced = await rpc(demo.url, 'var.forced', {}, ENGINEER_TOKEN);
    await untilOnPage(page, `the forced value on the page (forced: ${JSON.stringify(forced.body.result)})`,
      async () => (await row.locator('td.value').textContent()) === '13824', 60000);

    const watched = JSON.parse((await demo.takt('watch', 'aiTankLevel', 'gTankLevel', '--count', '1', '--json')).trim());
    assert.equal(watched.values.aiTankLevel.literal, '13824');
    assert.match(watched.values.gTankLevel.literal, /^50(\.0*)?$/, 'half of the raw range is 50 %');
    const listed = JSON.parse(await demo.takt('vars', 'aiTankLevel', '--json'));
    assert.equal(listed.variables[0].forced, true);
    const read = await rpc(demo.url, 'var.forced', {}, ENGINEER_TOKEN);
    assert.ok(read.body.result.forced.some((f) => f.name === 'aiTankLevel'), JSON.stringify(read.body));

    await row.locator('button.unforce').click();
    await until('the force to be released', async () => (await row.getAttribute('class')) === '');
    const released = JSON.parse(await demo.takt('vars', 'aiTankLevel', '--json'));
    assert.equal(released.variables[0].forced, false);
    assert.deepEqual(errors, []);
    await close();
  });

  // A failed force test must not leave the tank level forced for the tests after it.
  afterEach(async () => {
    await rpc(demo.url, 'var.unforce', { name: 'aiTankLevel' }, ENGINEER_TOKEN).catch(() => {});
  });

  test('a viewer has no force controls and the server refuses a force anyway', async () => {
    const { page, errors, close } = await openPage(browser, demo.url);
    assert.equal(await page.textContent('#role'), 'viewer');
    const row = await showVariable(page, 'aiTankLevel');
    await until('the value', async () => (await row.locator('td.value').textContent()) !== '');
    assert.equal(await row.locator('button.force').count(), 0);
    assert.equal(await row.locator('input.value-input').count(), 0);
    // What a hand-made request from the same page gets: forbidden for its role.
    const refused = await page.evaluate(async () => {
      const res = await fetch('/api/rpc', {
        method: 'POST',
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'var.force', params: { name: 'aiTankLevel', value: '1' } }),
      });
      return res.json();
    });
    assert.equal(refused.error?.code, -32011, JSON.stringify(refused));
    const listed = JSON.parse(await demo.takt('vars', 'aiTankLevel', '--json'));
    assert.equal(listed.variables[0].forced, false);
    assert.deepEqual(errors, []);
    await close();
  });

  // A trace started from the shell (`takt trace start`) is listed on the page with its state, and
  // once done its samples are drawn: one point per FastTask cycle, the tank level's line painted.
  test('a trace started with takt trace is listed and drawn once it is done', async () => {
    const { page, errors, close } = await openPage(browser, demo.url);
    const id = (await demo.takt('trace', 'start', 'gTankLevel', 'Line.Tank.Pump', '--task', 'FastTask', '--post', '150'))
      .trim();
    const row = page.locator(`#traces tbody tr[data-id="${id}"]`);
    await untilOnPage(page, 'the trace listed as done', async () =>
      (await row.count()) === 1 && (await row.getAttribute('data-state')) === 'done', 30000);
    assert.match(await row.textContent(), /FastTask.*gTankLevel, Line\.Tank\.Pump/);
    await row.locator('button').click();
    await untilOnPage(page, 'the samples drawn', async () =>
      (await page.getAttribute('#trace-chart', 'data-points')) === '150', 20000);
    const painted = await page.evaluate(() => {
      const c = document.querySelector('#trace-chart canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let blue = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i + 2] > 150 && d[i] < 100 && d[i + 3] > 0) blue++;
      return blue;
    });
    assert.ok(painted > 50, `the tank level's line on the trace chart (${painted} pixels)`);
    await demo.takt('trace', 'remove', id);
    await untilOnPage(page, 'the trace gone from the list', async () => (await row.count()) === 0, 10000);
    assert.deepEqual(errors, []);
    await close();
  });

  test('the page keeps working through an online change and lists it', async () => {
    const { page, errors, close } = await openPage(browser, demo.url);
    const row = await showVariable(page, 'gTankLevel');
    await until('a value', async () => (await row.locator('td.value').textContent()) !== '');
    const before = await page.locator('#reloads tbody tr').count();
    // A changed program: one more function.
    const tank = path.join(demo.dir, 'src/tank.st');
    const source = readFileSync(tank, 'utf8');
    writeFileSync(tank, `${source}\nFUNCTION OnlineChangeMarker : INT\nOnlineChangeMarker := 7;\nEND_FUNCTION\n`);
    await demo.takt('reload');
    const applied = page.locator('#reloads tbody tr.reload_applied');
    await until('the online change in the history', async () => (await applied.count()) > before);
    const hash = (await rpc(demo.url, 'runtime.status')).body.result.program_hash;
    assert.equal(await applied.first().locator('td.hash').textContent(), hash.slice(0, 12));
    await until('the new program in the header', async () => (await page.textContent('#program')) === `program ${hash.slice(0, 12)}`);
    await until('the event log entry', async () =>
      (await page.locator('#events tbody td', { hasText: 'reload_applied' }).count()) > 0);
    const was = await row.locator('td.value').textContent();
    await untilOnPage(page, 'values to go on changing', async () => (await row.locator('td.value').textContent()) !== was,
      60000);
    assert.deepEqual(errors, []);
    if (process.env.TAKT_WEB_SCREENSHOT) {
      await page.screenshot({ path: process.env.TAKT_WEB_SCREENSHOT, fullPage: true });
    }
    await close();
  });
});

describe('the live page with auth = "token"', { skip }, () => {
  let demo;
  let browser;

  before(async () => {
    demo = await startDemo({ auth: 'token' });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await demo?.stop();
  });

  test('asks for a token, then works with the role of the token it was given', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(demo.url);
    await until('the request for a token', async () => (await page.textContent('#link')) === 'log in with a control token');
    assert.equal(await page.locator('#vars tbody tr').count(), 0, 'nothing is shown without a token');
    await page.fill('#token', VIEWER_TOKEN);
    await page.click('#login button[type=submit]');
    await until('the viewer role', async () => (await page.textContent('#role')) === 'viewer' && (await page.isVisible('#logout')));
    const row = await showVariable(page, 'gTankLevel');
    await until('a value', async () => (await row.locator('td.value').textContent()) !== '');
    assert.equal(await row.locator('button.force').count(), 0);
    // The token lives in the tab's sessionStorage and goes out as a Bearer header.
    assert.equal(await page.evaluate(() => sessionStorage.getItem('takt.token')), VIEWER_TOKEN);
    const sent = await Promise.all([
      page.waitForRequest((r) => r.url().endsWith('/api/rpc')),
    ]);
    assert.equal(sent[0].headers().authorization, `Bearer ${VIEWER_TOKEN}`);
    await context.close();
  });
});

// An SFC chart beside the demo's programs: the Steps part lists its active steps with their time,
// follows a transition, and after an online change that adds a step shows the chart as it is now
// (the active step kept).
describe('the Steps part', { skip }, () => {
  const chart = (extra) => `PROGRAM Sequence
VAR go : BOOL; END_VAR
    INITIAL_STEP Idle:
    END_STEP
    STEP Fill:
    END_STEP
    TRANSITION FROM Idle TO Fill := go; END_TRANSITION
${extra}END_PROGRAM
`;
  const config = readFileSync(new URL('../../examples/demo/src/configuration.st', import.meta.url), 'utf8')
    .replace('PROGRAM Alarms WITH SlowTask : AlarmHandler;', 'PROGRAM Alarms WITH SlowTask : AlarmHandler;\n        PROGRAM Seq WITH SlowTask : Sequence;');
  let demo;
  let browser;

  before(async () => {
    demo = await startDemo({ extraFiles: { 'src/configuration.st': config, 'src/sequence.st': chart('') } });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await demo?.stop();
  });

  test('shows the active steps, follows a transition and an online change', async () => {
    const { page, errors, close } = await openPage(browser, demo.url);
    try {
      const active = page.locator('#steps tr[data-chart="Seq"] td.active-steps');
      const shows = (re) => async () => re.test((await active.textContent().catch(() => '')) ?? '');
      await untilOnPage(page, 'Idle active with its time', shows(/^Idle T#\S+$/), 20000);
      assert.equal(await page.isVisible('#steps-panel'), true);
      const { body } = await rpc(demo.url, 'var.write', { name: 'Seq.go', value: 'TRUE' }, ENGINEER_TOKEN);
      assert.ok(body.result, JSON.stringify(body));
      await untilOnPage(page, 'Fill active', shows(/^Fill T#\S+$/), 20000);

      // A step added by an online change: the chart keeps Fill active, and Done is known (its
      // flags are subscribed once the page has browsed the new program).
      writeFileSync(path.join(demo.dir, 'src', 'sequence.st'), chart(`    STEP Done:
    END_STEP
    TRANSITION FROM Fill TO Done := NOT go; END_TRANSITION
`));
      await demo.takt('reload', '--yes');
      await rpc(demo.url, 'var.write', { name: 'Seq.go', value: 'FALSE' }, ENGINEER_TOKEN);
      await untilOnPage(page, 'Done active after the online change', shows(/^Done T#\S+$/), 20000);
      assert.deepEqual(errors, []);
    } finally {
      await close();
    }
  });
});
