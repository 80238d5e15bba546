// The live page of `takt run` (docs/web.md): the values of the shown variables and the trends come
// as changes from a subscription (/api/events), the rest is polled from /api/rpc. Each poll loop
// waits for its answer before the next request, so a slow runtime or network never piles requests
// up; a hidden tab polls slowly.
import { call, RpcError, setToken, subscribe, token } from './rpc.js';
import { Histogram, TraceChart, Trend } from './charts.js';
import { Steps } from './steps.js';
import './style.css';

const FAST_MS = 250; // values of the visible variables and the trends: the subscription's interval
const SLOW_MS = 1000; // status, statistics, events, histogram, variable list
const HIDDEN_MS = 5000;
const PAGE_SIZE = 40;
const RANKS = { viewer: 0, operator: 1, engineer: 2, admin: 3 };

const $ = (sel) => document.querySelector(sel);
const state = { role: 'viewer', pattern: '', offset: 0, total: 0, vars: [], eventsSince: 0, events: [] };
const trend = new Trend($('#trend'), $('#trend-names'));
const histogram = new Histogram($('#histogram'));
const traceChart = new TraceChart($('#trace-chart'));
const steps = new Steps($('#steps-panel'), $('#steps tbody'));

function el(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  Object.assign(e, props);
  e.append(...children);
  return e;
}

function canEngineer() {
  return RANKS[state.role] >= RANKS.engineer;
}

function setRole(role) {
  state.role = role;
  $('#role').textContent = role;
  document.body.classList.toggle('viewer', !canEngineer());
  $('#logout').hidden = !token();
  $('#token').hidden = !!token();
  document.querySelector('#login button[type=submit]').hidden = !!token();
  renderVars();
}

function showError(where, err) {
  const box = $(where);
  box.hidden = !err;
  box.textContent = err ? err.message : '';
}

function link(ok, text) {
  $('#link').textContent = text;
  if (!ok) {
    $('#state').className = 'badge offline';
    $('#state').textContent = 'offline';
  }
}

// --- runtime --------------------------------------------------------------------------------

const us = (v) => (v >= 1000 ? `${(v / 1000).toFixed(2)} ms` : `${v.toFixed(1)} µs`);
const spread = (h) => `${us(h.p50_us)} / ${us(h.p99_us)} / ${us(h.max_us)}`;

// One row per TASK, then the base cycle. A task on a scan thread of its own has its own last
// execution time, skipped releases and longest park for an online change; a task in the base
// cycle has none of these ('—').
const NONE = '—';

function taskRow(name, className, texts) {
  const row = el('tr', { className }, ...texts.map((t) => el('td', { textContent: String(t) })));
  row.dataset.task = name;
  return row;
}

function renderTasks(stats) {
  const threaded = stats.tasks.some((t) => t.thread);
  $('#tasks-mode').textContent = stats.tasks.length === 0 ? 'no TASK: the programs run in the base cycle'
    : threaded ? 'each on a scan thread of its own' : 'all in the base cycle';
  $('#tasks tbody').replaceChildren(
    ...stats.tasks.map((t) => taskRow(t.name, t.thread ? 'thread' : 'shared', [
      t.name, t.priority, t.interval_ms > 0 ? `${t.interval_ms} ms` : NONE, t.thread ? 'own thread' : 'base cycle',
      t.cycles, t.overruns, t.thread ? t.missed_releases : NONE, t.last_exec_us != null ? us(t.last_exec_us) : NONE,
      spread(t.exec), spread(t.lateness), t.thread ? us(t.max_pause_us) : NONE])),
    taskRow('', 'base', [
      threaded ? 'base cycle' : 'all', NONE, `${stats.period_ms} ms`, threaded ? 'scan thread' : NONE, stats.cycles,
      stats.overruns, stats.missed_releases, NONE, spread(stats.exec), spread(stats.lateness), NONE]),
  );
}

function renderStatus(s, stats) {
  $('#state').className = `badge ${s.state}`;
  $('#state').textContent = s.state;
  $('#program').textContent = `program ${s.program_hash.slice(0, 12)}`;
  $('#uptime').textContent = `up ${Math.floor(s.uptime_ms / 1000)} s`;
  const fault = $('#fault');
  fault.hidden = !s.fault;
  fault.textContent = s.fault ? `${s.fault.kind}: ${s.fault.message} (${s.fault.pou} line ${s.fault.line}, cycle ${s.fault.cycle})` : '';
  const counters = [
    ['cycles', s.cycles], ['overruns', stats.overruns], ['faults', s.faults], ['restarts', s.restarts],
    ['reloads', s.reloads], ['forced', s.forced], ['watchdog', stats.watchdog_trips], ['memory', `${(stats.rss_bytes / 1048576).toFixed(1)} MiB`],
  ];
  $('#counters').replaceChildren(...counters.flatMap(([k, v]) => [el('dt', { textContent: k }), el('dd', { textContent: String(v) })]));
  renderTasks(stats);
  $('#drivers tbody').replaceChildren(
    ...s.drivers.map((d) =>
      el('tr', {}, el('td', { textContent: d.name }), el('td', {}, el('span', { className: `badge ${d.health}`, textContent: d.health })),
        el('td', { textContent: d.reason }))),
  );
  // The OPC UA server's health, as runtime.status has it (absent: not enabled).
  const ua = s.opcua;
  $('#opcua-panel').hidden = !ua;
  if (ua) {
    const up = ua.state === 'running' ? 'ok' : ua.state === 'stopped' ? 'faulted' : 'degraded';
    const figures = [
      ['state', el('span', { className: `badge ${up}`, textContent: ua.state })], ['restarts', ua.restarts],
      ['sessions', ua.sessions ?? 0], ['monitored items', ua.monitored_items ?? 0],
      ['endpoint', ua.endpoint || NONE], ['last end', ua.reason || NONE],
    ];
    $('#opcua').replaceChildren(...figures.flatMap(([k, v]) =>
      [el('dt', { textContent: k }), typeof v === 'object' ? el('dd', {}, v) : el('dd', { textContent: String(v) })]));
  }
}

// --- events and online changes --------------------------------------------------------------

const clock = (ts) => (typeof ts === 'number' ? new Date(ts).toLocaleTimeString() : String(ts ?? ''));

function details(e) {
  const { seq, type, ts, ...rest } = e;
  return Object.entries(rest).map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`).join(' ');
}

// The newest 200 events, of which at most 20 overruns: a busy machine's overruns never push a
// fault out of the list.
function keepRecent(events) {
  let overruns = 0;
  return events.filter((e) => e.type !== 'cycle_overrun' || ++overruns <= 20).slice(0, 200);
}

function renderEvents(recent) {
  state.eventsSince = recent.next - 1;
  state.events = keepRecent([...recent.events.reverse(), ...state.events]);
  $('#events tbody').replaceChildren(
    ...state.events.map((e) => el('tr', {}, el('td', { textContent: String(e.seq) }), el('td', { textContent: clock(e.ts) }),
      el('td', { textContent: e.type }), el('td', { textContent: details(e) }))),
  );
  $('#reloads tbody').replaceChildren(
    ...[...recent.reloads].reverse().map((r) =>
      el('tr', { className: r.type },
        el('td', { textContent: clock(r.ts) }),
        el('td', { textContent: r.type === 'reload_applied' ? `applied at cycle ${r.cycle}, the swap paused the scan ${r.swap_pause_us} µs` : `rejected: ${r.reason}` }),
        el('td', { className: 'hash', textContent: String(r.program_hash ?? '').slice(0, 12) }))),
  );
}

// --- variables ------------------------------------------------------------------------------

const rows = new Map(); // path -> {row, value}
const typed = new Map(); // path -> the text in its value field

// Elementary values only: an instance or a structure is browsed by its members (listed right
// after it), an array by its elements.
const compound = (v, i, list) => /^ARRAY\b/.test(v.type) || !!list[i + 1]?.path.startsWith(`${v.path}.`);
const readable = (v, i, list) => !compound(v, i, list);

function action(method, name, value) {
  const params = value === undefined ? { name } : { name, value };
  call(method, params)
    .then(() => { showError('#action-error', null); return loadVars(); })
    .catch((err) => showError('#action-error', err));
}

function renderVars() {
  rows.clear();
  const body = $('#vars tbody');
  body.replaceChildren(
    ...state.vars.map((v, i) => {
      const text = live.latest[v.path] ?? ''; // a redraw keeps the value the subscription sent last
      const value = el('td', { className: 'value', textContent: text, title: text });
      const check = el('input', { type: 'checkbox', className: 'trend', checked: trend.has(v.path), title: 'draw in the trend' });
      check.addEventListener('change', () => trend.toggle(v.path, check.checked));
      const cells = [el('td', { textContent: v.path }), el('td', { textContent: v.type + (v.address ? ` ${v.address}` : '') }), value, el('td', {}, check)];
      if (canEngineer() && !compound(v, i, state.vars)) {
        // What was typed survives a redraw of the list (a force elsewhere changes its flags).
        const input = el('input', { className: 'value-input', placeholder: 'IEC literal', disabled: v.constant,
          value: typed.get(v.path) ?? '' });
        input.addEventListener('input', () => typed.set(v.path, input.value));
        const button = (label, cls, fn) => {
          const b = el('button', { type: 'button', className: cls, textContent: label, disabled: v.constant });
          b.addEventListener('click', fn);
          return b;
        };
        cells.push(el('td', { className: 'actions engineer' }, input,
          button('write', 'write', () => action('var.write', v.path, input.value)),
          button('force', 'force', () => action('var.force', v.path, input.value)),
          button('unforce', 'unforce', () => action('var.unforce', v.path))));
      } else {
        cells.push(el('td', { className: 'engineer' }));
      }
      const row = el('tr', { className: v.forced ? 'forced' : '' }, ...cells);
      row.dataset.path = v.path;
      rows.set(v.path, { row, value });
      return row;
    }),
  );
  $('#page').textContent = state.total ? `${state.offset + 1}–${state.offset + state.vars.length} of ${state.total}` : 'none';
}

async function loadVars() {
  const { pattern, offset } = state;
  const r = await call('var.list', { pattern, offset, limit: PAGE_SIZE });
  if (pattern !== state.pattern || offset !== state.offset) return; // the filter changed meanwhile
  const same = r.variables.length === state.vars.length &&
    r.variables.every((v, i) => v.path === state.vars[i].path && v.forced === state.vars[i].forced);
  state.total = r.total;
  state.vars = r.variables;
  if (!same) renderVars();
}


// The values come from one subscription of the shown variables and the trended ones; a change of
// that set (another page, a filter, a trend ticked) replaces it. Every FAST_MS the trends get a
// point of the latest values, so they move on while nothing changes.
const live = { key: '', abort: null, latest: {} };

function showValues(values) {
  Object.assign(live.latest, values);
  steps.show(live.latest);
  for (const [name, text] of Object.entries(values)) {
    const row = rows.get(name);
    if (row && row.value.textContent !== text) {
      row.value.textContent = text;
      row.value.title = text;
    }
  }
}

function watchValues() {
  const names = [...new Set([...state.vars.filter(readable).map((v) => v.path), ...trend.names, ...steps.names()])];
  const key = names.join('\n');
  if (key === live.key && live.abort) return;
  live.abort?.abort();
  live.key = key;
  live.abort = null;
  live.latest = {};
  if (names.length === 0) return;
  const abort = new AbortController();
  live.abort = abort;
  subscribe({ names, format: 'iec', interval_ms: FAST_MS }, (n) => showValues(n.values), abort.signal)
    .then(() => link(true, ''))
    .catch((err) => {
      if (abort.signal.aborted) return;
      // After an online change a name may be gone: drop it and go on with the others.
      const gone = /^names\[(\d+)\]$/.exec(err.data?.param ?? '');
      if (err instanceof RpcError && gone) {
        const name = names[Number(gone[1])];
        if (trend.has(name)) trend.toggle(name, false);
        steps.forget(name);
        state.vars = state.vars.filter((v) => v.path !== name);
        return;
      }
      link(false, err.status === 401 ? 'log in with a control token' : err.message);
    })
    .finally(() => {
      if (live.abort === abort) live.abort = null; // ended: the next tick opens it again
    });
}

// --- traces ---------------------------------------------------------------------------------

// The runtime's traces (trace.list), each with a button that draws its samples once it is done
// or stopped; a trace being drawn is drawn again when it completes.
const traces = { shown: 0, shownState: '' };

async function showTrace(id) {
  // Page by page, up to 100,000 samples: enough for a chart, bounded for the page.
  const read = await call('trace.read', { id, limit: 10000 });
  while (read.rows.length < read.samples && read.rows.length < 100000) {
    const more = await call('trace.read', { id, offset: read.rows.length, limit: 10000 });
    if (more.rows.length === 0) break;
    read.rows.push(...more.rows);
  }
  traces.shown = id;
  traces.shownState = read.state;
  traceChart.show(read);
}

function renderTraces(list) {
  const body = $('#traces tbody');
  body.replaceChildren(...list.traces.map((t) => {
    const state = t.running || t.state === 'done' ? t.state : 'stopped';
    const ready = !t.running;
    const button = el('button', { type: 'button', disabled: !ready, textContent: 'show' });
    button.addEventListener('click', () => showTrace(t.id).catch((err) => showError('trace', err)));
    const row = el('tr', {},
      el('td', { textContent: String(t.id) }),
      el('td', { textContent: t.task || '—' }),
      el('td', { textContent: t.variables.map((v) => v.name).join(', ') }),
      el('td', { textContent: t.trigger ?? '—' }),
      el('td', { textContent: t.ended ? `${state} (${t.ended})` : state }),
      el('td', { textContent: String(t.samples_taken) }),
      el('td', {}, button));
    row.dataset.id = String(t.id);
    row.dataset.state = state;
    return row;
  }));
  $('#traces-none').hidden = list.traces.length > 0;
  const shown = list.traces.find((t) => t.id === traces.shown);
  if (shown && !shown.running && traces.shownState !== shown.state) showTrace(shown.id).catch(() => {});
}

// --- polling --------------------------------------------------------------------------------

async function slow() {
  // One request at a time: a page holds at most two of the server's four workers (this loop and
  // the values').
  const status = await call('runtime.status');
  const stats = await call('runtime.stats');
  const recent = await call('events.recent', { since: state.eventsSince });
  const hist = await call('runtime.histogram');
  renderStatus(status, stats);
  if (recent.events.length || recent.reloads.length !== $('#reloads tbody').children.length) renderEvents(recent);
  histogram.show(hist.lateness);
  renderTraces(await call('trace.list'));
  await loadVars();
  await steps.load(status.program_hash, call);
}

function loop(fn, periodMs) {
  const tick = async () => {
    try {
      await fn();
      link(true, '');
    } catch (err) {
      if (err.status === 401) {
        link(false, 'log in with a control token');
        $('#token').hidden = false;
      } else {
        link(false, err.message);
      }
    }
    setTimeout(tick, document.hidden ? HIDDEN_MS : periodMs);
  };
  tick();
}

async function login(value) {
  setToken(value);
  try {
    const r = await call('auth.login', { token: value });
    setRole(r.role);
  } catch (err) {
    setToken('');
    setRole('viewer');
    link(false, err.message);
  }
}

function wire() {
  $('#login').addEventListener('submit', (e) => {
    e.preventDefault();
    login($('#token').value.trim());
    $('#token').value = '';
  });
  $('#logout').addEventListener('click', () => { setToken(''); setRole('viewer'); });
  let searchTimer;
  $('#search').addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => { state.pattern = $('#search').value.trim(); state.offset = 0; loadVars().catch(() => {}); }, 200);
  });
  $('#prev').addEventListener('click', () => { state.offset = Math.max(0, state.offset - PAGE_SIZE); loadVars().catch(() => {}); });
  $('#next').addEventListener('click', () => {
    if (state.offset + PAGE_SIZE < state.total) { state.offset += PAGE_SIZE; loadVars().catch(() => {}); }
  });
  $('#window').addEventListener('change', () => trend.setWindow(Number($('#window').value)));
  window.addEventListener('resize', () => { trend.resize(); histogram.resize(); traceChart.resize(); });
}

wire();
setRole('viewer');
if (token()) login(token());
loop(slow, SLOW_MS);
setInterval(() => {
  watchValues();
  trend.add(Date.now() / 1000, live.latest);
}, FAST_MS);
