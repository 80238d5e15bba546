'use strict';
// The values of monitored variables, fed by the runtime's change stream (docs/opcua.md
// "Subscriptions"), not by reading each variable at each sampling: the variables some monitored
// item watches are subscribed with var.subscribe on the private channel, and the runtime sends a
// var.changed with the values that changed at a cycle boundary, sampled at the feed's rate. The
// runtime keeps one watch of every subscribed variable for the scan thread to publish; this side
// only says which, and how often it wants them.
//
// The rate follows the monitored item: an exception-based one (sampling interval 0) is fed every
// base cycle (at least 10 ms), a sampled one at the largest base * 2^k not above its sampling
// interval, so an item sampled every second does not make the runtime send its variable a hundred
// times a second. A variable watched at several rates is fed at each of them.
//
// A var.subscribe holds at most 1000 variables and its set is fixed, so the watched variables come
// in groups, one feed each: the variables watched at one rate in one turn of the event loop are
// subscribed together, and a group's feed is closed once no monitored item watches any variable
// of it at its rate.

const kGroup = 1000; // var.subscribe's most names
const kMaxRate = 60000; // var.subscribe takes up to an hour; a slower item is fed every minute
const kFirstValues = 2000; // how long a read of a watched variable waits for its first values
const kEarly = 1000; // most notifications kept for streams whose var.subscribe is not answered

const keyOf = (path, rate) => `${rate}\n${path}`; // no path has a line break

class ValueFeed {
  // `onValues(values)` gets a var.changed's values ({path: typed value}) in the order they came.
  constructor(channel, baseMs, onValues, log) {
    this.channel = channel;
    this.baseMs = Math.max(10, baseMs);
    this.onValues = onValues;
    this.log = log;
    this.watchers = new Map(); // key -> monitored items watching the path at the rate
    this.groupOf = new Map(); // key -> the group that feeds the path at the rate
    this.fed = new Map(); // path -> keys of it in groupOf
    this.groups = new Map(); // stream id -> group
    this.waiting = new Map(); // rate -> paths to subscribe at that rate at the end of this turn
    // Bumped when an online change removes a path: a monitored item of the removed node that ends
    // later must not count against one of a variable added again under that path.
    this.epochs = new Map(); // path -> number
    // A var.subscribe's answer and the stream's first var.changed can come in one read: the
    // notification is handled before the answer's promise settles. It is kept until the answer
    // says whose stream it is; without a feed waiting for its answer, an unknown stream is not
    // this server's.
    this.unanswered = 0; // feeds whose var.subscribe is not answered yet
    this.early = []; // var.changed params of streams not yet known, in the order they came
    this.waiters = new Map(); // path -> callbacks of whenFed waiting for its first values
    this.waitTimer = null;
    channel.on('var.changed', (params) => {
      const group = this.groups.get(params.stream);
      if (group) {
        this.deliver(group, params);
      } else if (this.unanswered > 0 && this.early.length < kEarly) {
        this.early.push(params);
      }
    });
  }

  deliver(group, params) {
    group.primed = true;
    this.onValues(params.values);
    this.wake(group.names, true);
  }

  // `callback(fed)` once `path` is fed (true) or will not be soon (false: read it). A watched
  // variable is read from its feed's first values, not by a read of its own: a read would be
  // sampled at another cycle than the values fed after it, and could show a newer value than the
  // next fed one.
  whenFed(path, callback) {
    if (this.covers(path) || !this.fed.has(path)) {
      callback(this.covers(path));
      return;
    }
    const list = this.waiters.get(path) || [];
    list.push(callback);
    this.waiters.set(path, list);
    if (!this.waitTimer) {
      this.waitTimer = setTimeout(() => {
        this.waitTimer = null;
        this.wake([...this.waiters.keys()], false);
      }, kFirstValues);
    }
  }

  wake(paths, fed) {
    for (const path of paths) {
      const list = this.waiters.get(path);
      if (list) {
        this.waiters.delete(path);
        for (const callback of list) {
          callback(fed);
        }
      }
    }
    if (this.waiters.size === 0 && this.waitTimer) {
      clearTimeout(this.waitTimer);
      this.waitTimer = null;
    }
  }

  // The feed's rate for a monitored item sampled every `samplingMs` (0: exception-based).
  rateFor(samplingMs) {
    let rate = this.baseMs;
    while (samplingMs > 0 && rate * 2 <= Math.min(samplingMs, kMaxRate)) {
      rate *= 2;
    }
    return rate;
  }

  // True once a feed of `path` brought its first values (which carry every value of the feed):
  // from then on the variable's value is kept current without a read. Until then a value is read.
  covers(path) {
    for (const key of this.fed.get(path) || []) {
      const group = this.groupOf.get(key);
      if (group && group.primed) {
        return true;
      }
    }
    return false;
  }

  // A monitored item starts watching `path`, sampled every `samplingMs`; returns what unwatch
  // takes back.
  watch(path, samplingMs) {
    const rate = this.rateFor(samplingMs);
    const token = { path, rate, epoch: this.epochs.get(path) || 0 };
    const key = keyOf(path, rate);
    const n = this.watchers.get(key) || 0;
    this.watchers.set(key, n + 1);
    if (n > 0) {
      return token;
    }
    const group = this.groupOf.get(key);
    if (group) {
      group.live++;
      group.closing = false; // watched again before its feed was answered
      return token;
    }
    if (this.waiting.size === 0) {
      setImmediate(() => this.flush());
    }
    const list = this.waiting.get(rate) || new Set();
    list.add(path);
    this.waiting.set(rate, list);
    this.mark(path, key, true);
    return token;
  }

  unwatch(token) {
    const { path, rate, epoch } = token;
    if (epoch !== (this.epochs.get(path) || 0)) {
      return; // its node was removed, and with it what it counted
    }
    const key = keyOf(path, rate);
    const n = this.watchers.get(key) || 0;
    if (n > 1) {
      this.watchers.set(key, n - 1);
      return;
    }
    this.watchers.delete(key);
    const list = this.waiting.get(rate);
    if (list && list.delete(path)) {
      this.mark(path, key, false);
      return;
    }
    const group = this.groupOf.get(key);
    if (group && --group.live === 0) {
      this.close(group);
    }
  }

  // Forgets `paths` (an online change removed them): their groups lose them for good.
  forget(paths) {
    for (const path of paths) {
      this.epochs.set(path, (this.epochs.get(path) || 0) + 1);
      for (const key of [...(this.fed.get(path) || [])]) {
        const rate = Number(key.slice(0, key.indexOf('\n')));
        this.watchers.set(key, 1);
        this.unwatch({ path, rate, epoch: this.epochs.get(path) });
      }
    }
  }

  // `path` is (or stops being) fed under `key`.
  mark(path, key, on) {
    const keys = this.fed.get(path) || new Set();
    if (on) {
      keys.add(key);
      this.fed.set(path, keys);
    } else if (keys.delete(key) && keys.size === 0) {
      this.fed.delete(path);
    }
  }

  flush() {
    const waiting = this.waiting;
    this.waiting = new Map();
    for (const [rate, list] of waiting) {
      const paths = [...list];
      for (let i = 0; i < paths.length; i += kGroup) {
        this.subscribe(paths.slice(i, i + kGroup), rate);
      }
    }
  }

  subscribe(names, rate) {
    const group = { names, rate, live: names.length, stream: null, closing: false, primed: false };
    for (const path of names) {
      this.groupOf.set(keyOf(path, rate), group);
    }
    this.unanswered++;
    // No deadband here: each monitored item has its own filter, which node-opcua applies.
    this.channel.call('var.subscribe', { names, interval_ms: rate }).then(
      (answer) => {
        group.stream = answer.stream;
        this.groups.set(answer.stream, group);
        // What came for the stream before its answer, in order, before anything after it.
        const early = this.early.filter((params) => params.stream === answer.stream);
        this.early = this.early.filter((params) => params.stream !== answer.stream);
        this.answered();
        for (const params of early) {
          this.deliver(group, params);
        }
        if (group.closing) {
          this.close(group);
        }
      },
      (err) => {
        this.answered();
        // The variables stay served by reads (an online change may have removed one of them
        // between the address space and this call; the next one rebuilds the space).
        this.log(`the change stream of ${names.length} variables was refused: ${err.message}`);
        this.release(group);
      },
    );
  }

  answered() {
    if (--this.unanswered === 0) {
      this.early = []; // every answer is in: what is left is no feed of this server
    }
  }

  release(group) {
    for (const path of group.names) {
      const key = keyOf(path, group.rate);
      if (this.groupOf.get(key) === group) {
        this.groupOf.delete(key);
        this.mark(path, key, false);
      }
    }
    // Whoever still waits for a value of the feed reads it.
    this.wake(group.names.filter((path) => !this.fed.has(path)), false);
  }

  close(group) {
    if (group.stream === null) {
      group.closing = true; // closed once its answer came
      return;
    }
    this.release(group);
    this.groups.delete(group.stream);
    this.channel.call('opcua.unsubscribe', { stream: group.stream }).catch(() => {});
  }
}

module.exports = { ValueFeed };
