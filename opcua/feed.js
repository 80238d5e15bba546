'use strict';
// The values of monitored variables, fed by the runtime's change stream (docs/opcua.md
// "Subscriptions"), not by reading each variable at each sampling: the variables some monitored
// item watches are subscribed with var.subscribe on the private channel, and the runtime sends a
// var.changed with the values that changed at a cycle boundary, sampled every `intervalMs` (the
// base cycle's interval, at least 10 ms). The runtime keeps one watch of every subscribed variable
// for the scan thread to publish; this side only says which.
//
// A var.subscribe holds at most 1000 variables and its set is fixed, so the watched variables come
// in groups, one feed each: the variables watched in one turn of the event loop are subscribed
// together, and a group's feed is closed once no monitored item watches any variable of it.

const kGroup = 1000; // var.subscribe's most names

class ValueFeed {
  // `onValues(values)` gets a var.changed's values ({path: typed value}) in the order they came.
  constructor(channel, intervalMs, onValues, log) {
    this.channel = channel;
    this.intervalMs = Math.max(10, intervalMs);
    this.onValues = onValues;
    this.log = log;
    this.watchers = new Map(); // path -> monitored items watching it
    this.groupOf = new Map(); // path -> the group that feeds it
    this.groups = new Map(); // stream id -> group
    this.waiting = new Set(); // paths to subscribe at the end of this turn
    // Bumped when an online change removes a path: a monitored item of the removed node that ends
    // later must not count against one of a variable added again under that path.
    this.epochs = new Map(); // path -> number
    channel.on('var.changed', (params) => {
      if (this.groups.has(params.stream)) {
        this.onValues(params.values);
      }
    });
  }

  // True when the stream carries `path`'s changes, or will once its var.subscribe is answered:
  // the variable's value is kept current without a read.
  covers(path) {
    return this.groupOf.has(path);
  }

  // Returns what unwatch takes back.
  watch(path) {
    const epoch = this.epochs.get(path) || 0;
    const n = this.watchers.get(path) || 0;
    this.watchers.set(path, n + 1);
    if (n > 0) {
      return epoch;
    }
    const group = this.groupOf.get(path);
    if (group) {
      group.live++;
      group.closing = false; // watched again before its feed was answered
      return epoch;
    }
    if (this.waiting.size === 0) {
      setImmediate(() => this.flush());
    }
    this.waiting.add(path);
    return epoch;
  }

  unwatch(path, epoch) {
    if (epoch !== (this.epochs.get(path) || 0)) {
      return; // its node was removed, and with it what it counted
    }
    const n = this.watchers.get(path) || 0;
    if (n > 1) {
      this.watchers.set(path, n - 1);
      return;
    }
    this.watchers.delete(path);
    if (this.waiting.delete(path)) {
      return;
    }
    const group = this.groupOf.get(path);
    if (group && --group.live === 0) {
      this.close(group);
    }
  }

  // Forgets `paths` (an online change removed them): their groups lose them for good.
  forget(paths) {
    for (const path of paths) {
      this.epochs.set(path, (this.epochs.get(path) || 0) + 1);
      this.waiting.delete(path);
      if (this.watchers.delete(path)) {
        const group = this.groupOf.get(path);
        if (group && --group.live === 0) {
          this.close(group);
        }
      }
    }
  }

  flush() {
    const paths = [...this.waiting];
    this.waiting.clear();
    for (let i = 0; i < paths.length; i += kGroup) {
      this.subscribe(paths.slice(i, i + kGroup));
    }
  }

  subscribe(names) {
    const group = { names, live: names.length, stream: null, closing: false };
    for (const path of names) {
      this.groupOf.set(path, group);
    }
    // No deadband here: each monitored item has its own filter, which node-opcua applies.
    this.channel.call('var.subscribe', { names, interval_ms: this.intervalMs }).then(
      (answer) => {
        group.stream = answer.stream;
        this.groups.set(answer.stream, group);
        if (group.closing) {
          this.close(group);
        }
      },
      (err) => {
        // The variables stay served by reads (an online change may have removed one of them
        // between the address space and this call; the next one rebuilds the space).
        this.log(`the change stream of ${names.length} variables was refused: ${err.message}`);
        for (const path of names) {
          if (this.groupOf.get(path) === group) {
            this.groupOf.delete(path);
          }
        }
      },
    );
  }

  close(group) {
    if (group.stream === null) {
      group.closing = true; // closed once its answer came
      return;
    }
    for (const path of group.names) {
      if (this.groupOf.get(path) === group) {
        this.groupOf.delete(path);
      }
    }
    this.groups.delete(group.stream);
    this.channel.call('opcua.unsubscribe', { stream: group.stream }).catch(() => {});
  }
}

module.exports = { ValueFeed };
