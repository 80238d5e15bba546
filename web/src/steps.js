// The Steps part of the page: the active steps of every SFC chart in the program, with how long
// each has been active, as CODESYS's online SFC view colours them. The steps are the variables of
// type SFC_STEP (var.list), read again when the program changes; their X and T flags ride on the
// page's one value subscription.

// At most this many variables are browsed for steps (10 pages of var.list): beyond, a chart's
// steps are still in the Variables part.
const MAX_BROWSED = 10000;

export class Steps {
  constructor(panel, body) {
    this.panel = panel;
    this.body = body;
    this.hash = null;
    this.paths = []; // the steps' paths, in declaration order
    this.shown = '';
  }

  // The flags to subscribe to.
  names() {
    return this.paths.flatMap((p) => [`${p}.X`, `${p}.T`]);
  }

  // A flag the subscription refused (gone after an online change, before load() saw the new
  // program): its step is dropped until then.
  forget(name) {
    this.paths = this.paths.filter((p) => name !== `${p}.X` && name !== `${p}.T`);
  }

  // Browses the program for steps when `hash` (the program's) is new; `call` is rpc.js's.
  async load(hash, call) {
    if (hash === this.hash) return;
    const paths = [];
    let total = 1;
    for (let offset = 0; offset < total && offset < MAX_BROWSED;) {
      const r = await call('var.list', { offset, limit: 1000 });
      if (r.variables.length === 0) break;
      total = r.total;
      offset += r.variables.length;
      for (const v of r.variables) if (v.type === 'SFC_STEP') paths.push(v.path);
    }
    this.hash = hash;
    this.paths = paths;
    this.show({});
  }

  // One row per chart (the POU instance the steps are in): its active steps and their T, from
  // `latest` (path -> IEC literal text). Redrawn only when what it says changed.
  show(latest) {
    const charts = new Map();
    for (const p of this.paths) {
      const dot = p.lastIndexOf('.');
      const chart = p.slice(0, dot);
      if (!charts.has(chart)) charts.set(chart, []);
      if (latest[`${p}.X`] === 'TRUE') charts.get(chart).push(`${p.slice(dot + 1)} ${latest[`${p}.T`] ?? ''}`.trim());
    }
    const shown = JSON.stringify([...charts]);
    if (shown === this.shown) return;
    this.shown = shown;
    this.panel.hidden = charts.size === 0;
    this.body.replaceChildren(...[...charts].map(([chart, active]) => {
      const row = document.createElement('tr');
      row.dataset.chart = chart;
      const name = document.createElement('td');
      name.textContent = chart;
      const steps = document.createElement('td');
      steps.className = 'active-steps';
      steps.textContent = active.length > 0 ? active.join(', ') : '—';
      row.append(name, steps);
      return row;
    }));
  }
}
