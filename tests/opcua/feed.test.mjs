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
  assert.ok(!feed.covers('Main.a'), 'no value fed yet: read');
  await turn();
  const subscribes = channel.calls.filter((c) => c.method === 'var.subscribe').map((c) => c.params);
  assert.deepEqual(subscribes, [
    { names: ['Main.a', 'Main.b'], interval_ms: 10 },
    { names: ['Main.a'], interval_ms: 640 },
  ]);
  assert.ok(!feed.covers('Main.a'), 'answered, but no value fed yet: read');
  channel.notify(1, { 'Main.a': 1, 'Main.b': 0 });
  channel.notify(99, { 'Main.a': 2 }); // not a feed of this server: ignored
  assert.deepEqual(values, [{ 'Main.a': 1, 'Main.b': 0 }]);
  assert.ok(feed.covers('Main.a') && feed.covers('Main.b') && !feed.covers('Main.c'));

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
  channel.notify(2, { 'Main.x': 0 });
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

// Answers that the test hands out itself, each with what came in the same read of the channel.
class ChunkChannel extends FakeChannel {
  constructor() {
    super();
    this.answers = [];
  }
  call(method, params) {
    this.calls.push({ method, params });
    if (method === 'var.subscribe') {
      return new Promise((resolve) => this.answers.push(resolve));
    }
    return Promise.resolve({});
  }
  // One read holding the answer to the first unanswered var.subscribe and then `lines`: as with
  // channel.js, each line is handled at once, the answer's promise settles after the read.
  chunk(stream, lines) {
    this.answers.shift()({ stream });
    for (const [s, values] of lines) {
      this.notify(s, values);
    }
  }
}

test('a stream first notification in the same read as its answer is not lost; reads until it came', async () => {
  const channel = new ChunkChannel();
  const values = [];
  const feed = new ValueFeed(channel, 10, (v) => values.push(v), () => {});
  feed.watch('Main.a', 0);
  await turn();
  assert.ok(!feed.covers('Main.a'));
  // A read of the watched variable waits for its first values; one of another is read at once.
  const reads = [];
  feed.whenFed('Main.a', (fed) => reads.push(['Main.a', fed, values.length]));
  feed.whenFed('Main.z', (fed) => reads.push(['Main.z', fed, values.length]));
  assert.deepEqual(reads, [['Main.z', false, 0]]);
  channel.chunk(7, [
    [7, { 'Main.a': 5 }],
    [8, { 'Main.a': 6 }], // another server's stream
  ]);
  assert.ok(!feed.covers('Main.a'), 'the answer is not handled yet: read');
  await turn();
  assert.deepEqual(values, [{ 'Main.a': 5 }]);
  assert.deepEqual(reads, [['Main.z', false, 0], ['Main.a', true, 1]], 'answered from the first fed values');
  assert.ok(feed.covers('Main.a'));
  channel.notify(7, { 'Main.a': 9 });
  channel.notify(8, { 'Main.a': 10 }); // nothing unanswered: not kept
  assert.deepEqual(values, [{ 'Main.a': 5 }, { 'Main.a': 9 }]);
  assert.deepEqual(feed.early, []);
});

test('a read waiting for a feed that is refused reads', async () => {
  const channel = new FakeChannel();
  channel.call = (method) => (method === 'var.subscribe' ? Promise.reject(new Error('no such variable')) : Promise.resolve({}));
  const feed = new ValueFeed(channel, 10, () => {}, () => {});
  feed.watch('Main.gone', 0);
  const reads = [];
  feed.whenFed('Main.gone', (fed) => reads.push(fed));
  await turn();
  assert.deepEqual(reads, [false]);
});
