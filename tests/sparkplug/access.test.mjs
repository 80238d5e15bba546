// Who the edge node is to its broker and what NCMD may do: a mosquitto that refuses anonymous
// clients takes the node's `username` and `password_file` (a wrong password: no session, and
// runtime.status says why), and NCMD writes are made with `command_role` (audited with it; a
// an operator's are refused: var.write takes an engineer).
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import { sleep, startBroker, startHost, startTakt, until } from './support.mjs';

const cleanups = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()();
});

async function run(options) {
  const takt = await startTakt(options);
  cleanups.push(async () => {
    const { code, output } = await takt.stop();
    takt.remove();
    assert.equal(code, 0, output);
  });
  return takt;
}

const kPassword = 'line3-broker-pass-0451';

const noPasswd = existsSync('/usr/bin/mosquitto_passwd') ? false : 'mosquitto_passwd is not installed (the mosquitto package has it)';

test('a broker that refuses anonymous clients takes username and password_file; a wrong password gets no session', { skip: noPasswd }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'takt-sp-login-'));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const passwd = path.join(dir, 'passwd');
  execFileSync('mosquitto_passwd', ['-c', '-b', passwd, 'line3', kPassword], { stdio: 'ignore' });
  // The later allow_anonymous wins over the one startBroker writes.
  // As root mosquitto would read the file as its own user, which the test's folder does not let in.
  const broker = await startBroker(`user root\nallow_anonymous false\npassword_file ${passwd}\n`);
  cleanups.push(() => broker.stop());
  const host = await mqtt.connectAsync(`mqtt://127.0.0.1:${broker.port}`, { username: 'line3', password: kPassword, reconnectPeriod: 0 });
  cleanups.push(() => host.endAsync());
  const births = [];
  host.on('message', (topic) => births.push(topic));
  await host.subscribeAsync('spBv1.0/Plant1/NBIRTH/+', { qos: 1 });
  await assert.rejects(mqtt.connectAsync(`mqtt://127.0.0.1:${broker.port}`, { reconnectPeriod: 0, connectTimeout: 5000 }),
    /Not authorized|not authori[sz]ed/i, 'anonymous clients are refused');

  const secret = (name, text) => {
    const file = path.join(dir, name);
    writeFileSync(file, `${text}\n`, { mode: 0o600 });
    return file;
  };
  const good = await run({ servers: [broker.url], node: 'Login1',
    toml: `username = "line3"\npassword_file = "${secret('good.password', kPassword)}"\n` });
  await until('the NBIRTH of Login1', () => births.includes('spBv1.0/Plant1/NBIRTH/Login1'), 20000);
  assert.equal((await good.status()).sparkplug.state, 'online');

  const bad = await run({ servers: [broker.url], node: 'Login2',
    toml: `username = "line3"\npassword_file = "${secret('bad.password', 'not-the-password-0451')}"\n` });
  const health = await until('a refused session of Login2', async () => {
    const { sparkplug } = await bad.status();
    return sparkplug.reason ? sparkplug : null;
  }, 20000);
  assert.notEqual(health.state, 'online');
  assert.match(health.reason, /connection refused: .*not authori[sz]ed/i, JSON.stringify(health));
  await sleep(300);
  assert.ok(!births.includes('spBv1.0/Plant1/NBIRTH/Login2'), births.join(', '));
});

test('NCMD writes are made with command_role: audited as admin; an operator\'s are refused', async () => {
  const broker = await startBroker();
  const host = await startHost(broker);
  cleanups.push(() => broker.stop(), () => host.close().catch(() => {}));

  const admin = await run({ servers: [broker.url], node: 'Role1', toml: 'command_role = "admin"\n' });
  await host.next('NBIRTH', 0, (m) => m.topic.endsWith('/Role1'));
  await host.ncmd('Role1', [{ name: 'P/level', type: 'UInt16', value: 42 }]);
  await until('P.level written as admin', async () => (await admin.read('P.level')).value === 42);
  await until('the admin\'s write in the audit', () => /peer=sparkplug:\S+ role=admin method=var\.write ok/.test(admin.audit()), 10000);

  const operator = await run({ servers: [broker.url], node: 'Role2', toml: 'command_role = "operator"\n' });
  await host.next('NBIRTH', 0, (m) => m.topic.endsWith('/Role2'));
  await host.ncmd('Role2', [{ name: 'P/level', type: 'UInt16', value: 43 }]);
  await until('the operator\'s write refused in the audit',
    () => /peer=sparkplug:\S+ role=operator method=var\.write error=-32011/.test(operator.audit()), 10000);
  await sleep(300);
  assert.equal((await operator.read('P.level')).value, 7, 'an operator writes nothing');
});
