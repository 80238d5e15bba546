'use strict';
// The OPC UA server of takt (docs/opcua.md): node-opcua, started and supervised by `takt run`
// when runtime.toml has [runtime.opcua] enabled = true. It knows the runtime only through the
// private channel on descriptor 3 (channel.js) and its typed calls: the address space comes from
// var.list (space.js), the values of monitored variables from the change stream (feed.js), other
// values from var.read, the runtime's state from runtime.status (runtime_nodes.js), and online
// changes from its events. It holds no password and decides no role: logins and role checks are
// the runtime's.

// Debian 12's Node.js 18 has the Web Crypto API only as require('node:crypto').webcrypto, not as
// the global `crypto` that node-opcua's certificate code (@peculiar/x509) expects (Node.js 19 made
// it global). Node's own implementation, exposed where the library looks for it.
if (globalThis.crypto === undefined) {
  globalThis.crypto = require('node:crypto').webcrypto;
}

const opcua = require('node-opcua');
const { Channel } = require('./channel');
const { ValueFeed } = require('./feed');
const { ProgramSpace, writeOrder } = require('./space');
const { RuntimeNodes } = require('./runtime_nodes');
const { followTrustFolders } = require('./trust');

const channel = new Channel(3);

function log(message) {
  process.stderr.write(`opcua: ${message}\n`);
}

// The runtime's events that change what the Runtime nodes show, and the online change, after
// which the address space follows the new program.
const kEvents = ['runtime_started', 'runtime_stopped', 'paused', 'resumed', 'fault', 'reload_applied'];

// Every monitored item of a program variable makes the change stream carry that variable, at the
// item's sampling rate, while the item exists (feed.js), whichever session's subscription it is in.
function followMonitoredItems(server, space, feed) {
  const watchSubscription = (subscription) => {
    subscription.on('monitoredItem', (item) => {
      const path = item.itemToMonitor.attributeId === opcua.AttributeIds.Value ? space.pathOf(item.node) : null;
      if (!path) {
        return;
      }
      item.taktWatch = feed.watch(path, item.samplingInterval);
      // The item's initial value waits for the feed's first values (space.js), which reach the
      // item as a change before the initial read is answered: that same value is not queued twice.
      const record = item.recordValue.bind(item);
      item.recordValue = (dataValue, skipChangeTest, ...rest) => {
        const last = item.oldDataValue;
        if (
          skipChangeTest &&
          last &&
          last.statusCode.isGood() &&
          dataValue.statusCode.isGood() &&
          opcua.sameVariant(last.value, dataValue.value)
        ) {
          return false;
        }
        return record(dataValue, skipChangeTest, ...rest);
      };
      // ModifyMonitoredItems may change the sampling interval: the feed's rate follows.
      const modify = item.modify.bind(item);
      item.modify = (...args) => {
        const result = modify(...args);
        const old = item.taktWatch;
        if (old && feed.rateFor(item.samplingInterval) !== old.rate) {
          item.taktWatch = feed.watch(path, item.samplingInterval);
          feed.unwatch(old);
        }
        return result;
      };
    });
    subscription.on('removeMonitoredItem', (item) => {
      if (item.taktWatch) {
        feed.unwatch(item.taktWatch);
        item.taktWatch = undefined;
      }
    });
  };
  server.on('create_session', (session) => session.on('new_subscription', watchSubscription));
}

const kPolicies = {
  none: opcua.SecurityPolicy.None,
  basic256sha256: opcua.SecurityPolicy.Basic256Sha256,
  aes128_sha256_rsaoaep: opcua.SecurityPolicy.Aes128_Sha256_RsaOaep,
  aes256_sha256_rsapss: opcua.SecurityPolicy.Aes256_Sha256_RsaPss,
};
const kModes = {
  none: opcua.MessageSecurityMode.None,
  sign: opcua.MessageSecurityMode.Sign,
  sign_and_encrypt: opcua.MessageSecurityMode.SignAndEncrypt,
};

// node-opcua serves the nodes of one Write request one after the other, each once the one before
// is answered (AddressSpaceAccessor.write, node-opcua-server 2.180); a program variable's write
// waits for a cycle boundary, so a Write of N nodes took N cycles. Here every node of a request is
// started at once, each noting its place in the request (writeOrder): the node checks are node-opcua's
// as before, and the program variables' values reach space.js's WriteBatch in one turn of the
// event loop, which writes them in one var.writeMany at one cycle boundary.
let writeSerial = 0;
function writeNodesAtOnce(server) {
  const accessor = server.engine.addressSpaceAccessor;
  const addressSpace = server.engine.addressSpace;
  accessor.write = async (context, nodesToWrite) => {
    context.currentTime = opcua.getCurrentClock();
    await opcua.ensureDatatypeExtracted(addressSpace);
    const serial = ++writeSerial;
    nodesToWrite.forEach((w, i) => {
      if (w.value) {
        writeOrder.set(w.value, serial * 2 ** 20 + i);
      }
    });
    return Promise.all(nodesToWrite.map((w) => accessor.writeNode(context, w)));
  };
}

async function start(options) {
  // Sampling down to the base cycle: no monitored item is sampled faster than the runtime
  // publishes (node-opcua's own floor is 50 ms).
  const feedInterval = Math.max(10, options.cycleIntervalMs || 10);
  const certificateManager = new opcua.OPCUACertificateManager({
    rootFolder: options.pkiDir,
    automaticallyAcceptUnknownCertificate: false,
  });
  await certificateManager.initialize();
  followTrustFolders(certificateManager, log);
  const server = new opcua.OPCUAServer({
    host: options.host,
    // The endpoint URL names the address listened on, so a client that asks for it finds it;
    // on every interface the machine's name.
    hostname: options.host === '0.0.0.0' || options.host === '::' ? undefined : options.host,
    port: options.port,
    resourcePath: options.endpointPath === '/' ? '' : options.endpointPath,
    // Without message security, Basic256Sha256 is still listed: it is what user passwords are
    // encrypted with (the user token policy), so they never cross the network in clear text;
    // with only the None mode there is no endpoint of that policy.
    securityPolicies:
      options.securityPolicy === 'none'
        ? [opcua.SecurityPolicy.None, opcua.SecurityPolicy.Basic256Sha256]
        : [kPolicies[options.securityPolicy]],
    securityModes: [kModes[options.securityMode]],
    allowAnonymous: options.allowAnonymous,
    serverCertificateManager: certificateManager,
    certificateFile: options.certificate || undefined,
    privateKeyFile: options.privateKey || undefined,
    buildInfo: {
      productName: 'takt',
      productUri: 'urn:takt',
      manufacturerName: 'takt',
      softwareVersion: options.version,
    },
    serverInfo: {
      applicationUri: `urn:takt:${options.resource}:opcua`,
      productUri: 'urn:takt',
      applicationName: { text: `takt ${options.resource}`, locale: 'en' },
    },
    serverCapabilities: { minSupportedSampleRate: feedInterval },
    // A user name and password go to the runtime, which checks them and answers a session
    // handle; every call for the session carries it (channel.js). The client's address goes
    // with them: failed logins back off per address and the audit log names it.
    userManager: {
      isValidUserAsync(user, password, callback) {
        const session = this;
        const secure = session.channel || {};
        const address = typeof secure.remoteAddress === 'string' ? secure.remoteAddress : '';
        const port = secure.remotePort ? String(secure.remotePort) : '';
        channel.call('opcua.login', { user, password, address, port }).then(
          (answer) => {
            session.taktSession = answer.session;
            callback(null, true);
          },
          () => callback(null, false),
        );
      },
      getUserRoles() {
        return opcua.makeRoles('AuthenticatedUser');
      },
    },
  });
  server.on('session_closed', (session) => {
    if (session.taktSession) {
      channel.call('opcua.logout', { session: session.taktSession }).catch(() => {});
    }
  });
  opcua.MonitoredItem.minimumSamplingInterval = feedInterval;
  // publish_interval_ms: the shortest publishing interval a subscription is granted.
  opcua.Subscription.minimumPublishingInterval = options.publishIntervalMs;
  await server.initialize();
  writeNodesAtOnce(server);
  const namespace = server.engine.addressSpace.registerNamespace(options.namespaceUri);
  let space = null;
  const feed = new ValueFeed(channel, feedInterval, (values) => space.changed(values), log);
  space = new ProgramSpace({ server, namespace, options, channel, feed, log });
  await space.build();
  const runtime = new RuntimeNodes({ server, namespace, channel, log });
  followMonitoredItems(server, space, feed);
  // Online changes one after the other: a second one waits for the first's rebuild.
  let syncing = Promise.resolve();
  channel.on('event', (event) => {
    runtime.changed();
    if (event.type === 'reload_applied') {
      syncing = syncing.then(() => space.sync()).catch((err) => log(`online change: ${err.message}`));
    }
  });
  await channel.call('events.subscribe', { types: kEvents });
  await server.start();
  const endpoint = server.getEndpointUrl();
  log(`listening on ${endpoint}`);
  channel.call('opcua.ready', { endpoint }).catch(() => {});
  stopServer = () => server.shutdown(kShutdownMs);
  health = () => {
    const engine = server.engine;
    let monitoredItems = 0;
    for (const session of engine.getSessions()) {
      monitoredItems += session.currentMonitoredItemCount || 0;
    }
    return {
      sessions: engine.currentSessionCount,
      subscriptions: engine.currentSubscriptionCount,
      monitored_items: monitoredItems,
    };
  };
}

// The runtime's liveness ping, from the process's start on: answered from the event loop, so an
// answer says the loop turns, while the server starts as well as once it listens (a process that
// stops answering is ended and started again, docs/opcua.md); it carries the figures of
// runtime.status, /metrics and the web page.
let health = () => ({ sessions: 0, subscriptions: 0, monitored_items: 0 });
channel.on('opcua.ping', () => channel.notify('opcua.health', health()));

// How long the server says it is shutting down (ServerStatus.State Shutdown, SecondsTillShutdown)
// before it closes the sessions; the runtime ends the process 3 s after asking it to.
const kShutdownMs = 500;
let stopServer = null; // once the server listens
let stopping = false;

// The runtime is stopping (SIGTERM) or gone (its channel closed): the server tells its clients,
// closes their sessions and ends, within 2.5 s whatever happens.
function shutdown() {
  if (stopping) {
    return;
  }
  stopping = true;
  if (!stopServer) {
    process.exit(0);
  }
  setTimeout(() => process.exit(0), 2500).unref();
  stopServer().then(
    () => {
      log('shut down');
      process.exit(0);
    },
    (err) => {
      log(`shutting down: ${err.message}`);
      process.exit(0);
    },
  );
}

channel.on('opcua.configure', (options) => {
  start(options).catch((err) => {
    log(`cannot start: ${err.message}`);
    process.exit(1);
  });
});
channel.on('close', shutdown);
process.on('SIGTERM', shutdown);

