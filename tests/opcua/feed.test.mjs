// opcua/feed.js against a channel that records the calls: which var.subscribe feeds the monitored
// items make, at which rate, and when they are closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { ValueFeed } = require('../../opcua/feed.js');

class FakeChannel {
  constructor() {
    this.calls = [];
    this.handlers = new Map();
    this.nextStream = 1;
  }
  on(method, handler) {
    this.handlers.set(method, handler);
  }
  call(method, params) {
    this.calls.push({ method, params });
    if (method === 'var.subscribe') {
      return Promise.resolve({ stream: this.nextStream++, names: params.names, interval_ms: params.interval_ms });
    }
    return Promise.resolve({});
  }
  notify(stream, values) {
    this.handlers.get('var.changed')({ stream, values });
  }
}

const turn = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

test('the feed rate follows the sampling interval: the base cycle for 0, base * 2^k below it', () => {
  const feed = new ValueFeed(new FakeChannel(), 10, () => {}, () => {});
  assert.equal(feed.rateFor(0), 10);
  assert.equal(feed.rateFor(10), 10);
  assert.equal(feed.rateFor(100), 80);
  assert.equal(feed.rateFor(1000), 640);
  assert.equal(feed.rateFor(3600000), 40960);
  assert.equal(new ValueFeed(new FakeChannel(), 4, () => {}, () => {}).rateFor(0), 10); // never below 10 ms
});

test('items watched in one turn share a feed per rate; it closes when the last item ends', async () => {
  const channel = new FakeChannel();
  const values = [];
  const feed = new ValueFeed(channel, 10, (v) => values.push(v), () => {});
  const a = feed.watch('Main.a', 0);
  const b = feed.watch('Main.b', 0);
  const slow = feed.watch('Main.a', 1000);
  const again = feed.watch('Main.a', 0);
  assert.ok(feed.covers('Main.a') && feed.covers('Main.b') && !feed.covers('Main.c'));
  await turn();
  const subscribes = channel.calls.filter((c) => c.method === 'var.subscribe').map((c) => c.params);
  assert.deepEqual(subscribes, [
    { names: ['Main.a', 'Main.b'], interval_ms: 10 },
    { names: ['Main.a'], interval_ms: 640 },
  ]);
  channel.notify(1, { 'Main.a': 1 });
  channel.notify(99, { 'Main.a': 2 }); // not a feed of this server: ignored
  assert.deepEqual(values, [{ 'Main.a': 1 }]);

  feed.unwatch(a);
  feed.unwatch(again);
  assert.equal(channel.calls.filter((c) => c.method === 'opcua.unsubscribe').length, 0, 'Main.b still watched');
  feed.unwatch(b);
  feed.unwatch(slow);
  const closed = channel.calls.filter((c) => c.method === 'opcua.unsubscribe').map((c) => c.params.stream);
  assert.deepEqual(closed, [1, 2]);
  assert.ok(!feed.covers('Main.a') && !feed.covers('Main.b'));
});

test('an online change forgets a removed path; its old items ending later change nothing', async () => {
  const channel = new FakeChannel();
  const feed = new ValueFeed(channel, 10, () => {}, () => {});
  const old = feed.watch('Main.x', 0);
  await turn();
  feed.forget(['Main.x']);
  assert.ok(!feed.covers('Main.x'));
  assert.deepEqual(channel.calls.filter((c) => c.method === 'opcua.unsubscribe').map((c) => c.params.stream), [1]);
  const fresh = feed.watch('Main.x', 0); // the variable added again, with a new item
  await turn();
  feed.unwatch(old); // the removed node's item ends: the new feed stays
  assert.ok(feed.covers('Main.x'));
  feed.unwatch(fresh);
  assert.ok(!feed.covers('Main.x'));
});

test('an item ended before its feed was answered closes the feed once it is', async () => {
  const channel = new FakeChannel();
  const feed = new ValueFeed(channel, 10, () => {}, () => {});
  const t = feed.watch('Main.y', 0);
  feed.unwatch(t); // still waiting for the turn: nothing is subscribed
  await turn();
  assert.equal(channel.calls.length, 0);
  const u = feed.watch('Main.y', 0);
  setImmediate(() => feed.unwatch(u)); // after the subscribe went out
  await turn();
  await turn();
  assert.deepEqual(channel.calls.map((c) => c.method), ['var.subscribe', 'opcua.unsubscribe']);
});
