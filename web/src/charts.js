// The trend chart (chosen variables against time, several per chart) and the lateness
// histogram, both uPlot on a canvas.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { numeric } from './literal.js';

const COLORS = ['#2b6cb0', '#c53030', '#1f8a4c', '#b7791f', '#6b46c1', '#319795', '#d53f8c', '#4a5568'];
// Samples kept per variable: the longest window at the fastest poll, so memory stays bounded.
const MAX_POINTS = 4000;

function width(el) {
  return Math.max(320, el.clientWidth - 4);
}

export class Trend {
  constructor(el, namesEl) {
    this.el = el;
    this.namesEl = namesEl;
    this.names = [];
    this.x = [];
    this.ys = [];
    this.windowS = 30;
    this.plot = null;
  }

  has(name) {
    return this.names.includes(name);
  }

  toggle(name, on) {
    const i = this.names.indexOf(name);
    if (on && i < 0) {
      this.names.push(name);
      this.ys.push(this.x.map(() => null));
    } else if (!on && i >= 0) {
      this.names.splice(i, 1);
      this.ys.splice(i, 1);
    }
    this.rebuild();
  }

  setWindow(seconds) {
    this.windowS = seconds;
    this.redraw();
  }

  // One sample of every trended variable at time `t` (seconds): the latest values in IEC form.
  add(t, values) {
    if (this.names.length === 0) return;
    this.x.push(t);
    this.names.forEach((n, i) => this.ys[i].push(n in values ? numeric(values[n]) : null));
    const horizon = t - 600; // the longest window
    let drop = 0;
    while (drop < this.x.length && (this.x[drop] < horizon || this.x.length - drop > MAX_POINTS)) drop++;
    if (drop > 0) {
      this.x.splice(0, drop);
      this.ys.forEach((y) => y.splice(0, drop));
    }
    this.redraw();
  }

  rebuild() {
    this.plot?.destroy();
    this.plot = null;
    this.namesEl.textContent = this.names.length ? this.names.join(', ') : 'tick “trend” beside a variable to draw it here';
    if (this.names.length === 0) {
      this.x = [];
      this.el.dataset.points = '0';
      return;
    }
    const opts = {
      width: width(this.el),
      height: 260,
      legend: { live: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true } },
      series: [{}, ...this.names.map((n, i) => ({ label: n, stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: false }))],
      axes: [{}, { size: 60 }],
    };
    this.plot = new uPlot(opts, [this.x, ...this.ys], this.el);
  }

  redraw() {
    if (!this.plot) return;
    const end = this.x.length ? this.x[this.x.length - 1] : 0;
    this.plot.batch(() => {
      this.plot.setData([this.x, ...this.ys], false);
      this.plot.setScale('x', { min: end - this.windowS, max: end });
    });
    this.el.dataset.points = String(this.x.length);
  }

  resize() {
    this.plot?.setSize({ width: width(this.el), height: 260 });
  }
}

// runtime.histogram's lateness buckets ([low_us, high_us, count]) as bars on a log axis.
export class Histogram {
  constructor(el) {
    this.el = el;
    this.plot = null;
  }

  show(buckets) {
    const x = buckets.map(([lo, hi]) => Math.max(0.1, Math.sqrt(Math.max(lo, 0.05) * hi)));
    const y = buckets.map(([, , n]) => n);
    this.el.dataset.buckets = String(buckets.length);
    if (!this.plot) {
      this.plot = new uPlot(
        {
          width: width(this.el),
          height: 180,
          legend: { show: false },
          cursor: { show: false },
          scales: { x: { time: false, distr: 3 }, y: { distr: 3 } },
          axes: [{ label: 'µs', values: (u, v) => v.map((n) => (n == null ? '' : n >= 1000 ? `${n / 1000} ms` : `${n}`)) }, { size: 60 }],
          series: [{}, { label: 'cycles', stroke: '#2b6cb0', fill: 'rgba(43,108,176,.35)',
                         paths: uPlot.paths.bars({ size: [0.9, 12] }), points: { show: false } }],
        },
        [x, y],
        this.el,
      );
    } else {
      this.plot.setData([x, y]);
    }
  }

  resize() {
    this.plot?.setSize({ width: width(this.el), height: 180 });
  }
}

// A trace's samples (trace.read): every traced variable against the time from the trigger, in
// ms, with a vertical line at the trigger. BOOLs draw as 0/1, durations in ms; what is not a
// number is left out.
export class TraceChart {
  constructor(el) {
    this.el = el;
    this.plot = null;
  }

  show(read) {
    this.plot?.destroy();
    this.plot = null;
    const x = read.rows.map((r) => r[1]);
    const names = read.variables.map((v) => v.name);
    const ys = names.map((_, i) => read.rows.map((r) => {
      const v = r[i + 2];
      if (typeof v === 'number') return v;
      if (typeof v === 'boolean') return v ? 1 : 0;
      return typeof v === 'string' ? numeric(v) : null; // an IEC literal: T#1s as ms, …
    }));
    const drawn = names.map((n, i) => ({ n, y: ys[i] })).filter((s) => s.y.some((v) => v !== null));
    this.el.dataset.points = String(x.length);
    this.el.dataset.trace = String(read.id);
    if (x.length === 0 || drawn.length === 0) return;
    const trigger = read.trigger_index === null ? null : x[read.trigger_index];
    const opts = {
      width: width(this.el),
      height: 260,
      scales: { x: { time: false } },
      axes: [{ label: 'ms from the trigger' }, { size: 60 }],
      series: [{ label: 'ms' }, ...drawn.map((s, i) => ({ label: s.n, stroke: COLORS[i % COLORS.length], width: 1.5 }))],
      hooks: {
        draw: [(u) => {
          if (trigger === null) return;
          const px = Math.round(u.valToPos(trigger, 'x', true));
          u.ctx.save();
          u.ctx.strokeStyle = '#718096';
          u.ctx.setLineDash([4, 4]);
          u.ctx.beginPath();
          u.ctx.moveTo(px, u.bbox.top);
          u.ctx.lineTo(px, u.bbox.top + u.bbox.height);
          u.ctx.stroke();
          u.ctx.restore();
        }],
      },
    };
    this.plot = new uPlot(opts, [x, ...drawn.map((s) => s.y)], this.el);
  }

  resize() {
    this.plot?.setSize({ width: width(this.el), height: 260 });
  }
}
