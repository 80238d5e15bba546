'use strict';
// The OPC UA server of takt (docs/opcua.md): node-opcua, started and supervised by `takt run`
// when runtime.toml has [runtime.opcua] enabled = true. It knows the runtime only through the
// private channel on descriptor 3 (channel.js) and its typed calls: the address space comes from
// var.list, values from var.read. It holds no password and decides no role: logins and role
// checks are the runtime's.

const opcua = require('node-opcua');
const { Channel } = require('./channel');
const { shapeOf, toVariant, toWritable } = require('./types');

const kPage = 1000; // var.list's largest page, var.read's most names per call

const channel = new Channel(3);

function log(message) {
  process.stderr.write(`opcua: ${message}\n`);
}

// Case-insensitive glob over a whole path: `*` any run, `?` one character (var.list's globs).
function globToRegExp(glob) {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 'i');
}

async function listVariables(expose) {
  const all = [];
  for (let offset = 0; ; ) {
    const page = await channel.call('var.list', { offset, limit: kPage });
    all.push(...page.variables);
    offset += page.variables.length;
    if (page.variables.length === 0 || offset >= page.total) {
      break;
    }
  }
  if (expose.length === 0) {
    return all;
  }
  const globs = expose.map(globToRegExp);
  return all.filter((v) => globs.some((g) => g.test(v.path)));
}

async function readTyped(names) {
  const values = {};
  for (let i = 0; i < names.length; i += kPage) {
    const answer = await channel.call('var.read', { names: names.slice(i, i + kPage) });
    Object.assign(values, answer.values);
  }
  return values;
}

// Reads of many variables in one OPC UA Read come as one refresh per variable in the same turn
// of the event loop: they are gathered into one var.read (one cycle boundary for all of them).
class ReadBatch {
  constructor() {
    this.waiting = new Map(); // path -> [callback]
  }
  read(name, callback) {
    if (this.waiting.size === 0) {
      setImmediate(() => this.flush());
    }
    const list = this.waiting.get(name) || [];
    list.push(callback);
    this.waiting.set(name, list);
  }
  flush() {
    const batch = this.waiting;
    this.waiting = new Map();
    const names = [...batch.keys()];
    readTyped(names).then(
      (values) => {
        for (const [name, callbacks] of batch) {
          for (const cb of callbacks) {
            cb(null, values[name]);
          }
        }
      },
      (err) => {
        for (const callbacks of batch.values()) {
          for (const cb of callbacks) {
            cb(err);
          }
        }
      },
    );
  }
}

// The address space of the program: program instances, FB instances and STRUCTs as objects, the
// rest as variables with NodeId ns=<namespace>;s=<path>.
async function buildAddressSpace(server, options) {
  const addressSpace = server.engine.addressSpace;
  const namespace = addressSpace.registerNamespace(options.namespaceUri);
  const listed = await listVariables(options.expose);
  const parents = new Set();
  for (const v of listed) {
    const parts = v.path.split('.');
    for (let i = 1; i < parts.length; i++) {
      parents.add(parts.slice(0, i).join('.'));
    }
  }
  let leaves = listed.filter((v) => !parents.has(v.path));
  if (leaves.length > options.maxNodes) {
    log(`${leaves.length} variables, max_nodes is ${options.maxNodes}: the first ${options.maxNodes} are served`);
    leaves = leaves.slice(0, options.maxNodes);
  }
  const first = await readTyped(leaves.map((v) => v.path));
  // A STRUCT variable is an object of its fields (var.list lists FB members, not STRUCT fields):
  // its fields are variables (or objects again) with paths <variable>.<field>, as var.read reads
  // them.
  const expanded = [];
  const expand = (v, typed) => {
    if (typed && typed.type === 'STRUCT') {
      parents.add(v.path);
      for (const [field, value] of Object.entries(typed.fields)) {
        const path = `${v.path}.${field}`;
        first[path] = value;
        expand({ path, type: value.type_name || value.type }, value);
      }
      return;
    }
    expanded.push(v);
  };
  for (const v of leaves) {
    expand(v, first[v.path]);
  }
  leaves = expanded.slice(0, options.maxNodes);
  const root = namespace.addFolder(addressSpace.rootFolder.objects, {
    nodeId: `s=${options.resource}`,
    browseName: options.resource,
  });
  const objects = new Map(); // path -> UAObject
  const objectOf = (objectPath) => {
    if (objectPath === '') {
      return root;
    }
    let node = objects.get(objectPath);
    if (!node) {
      const dot = objectPath.lastIndexOf('.');
      node = namespace.addObject({
        organizedBy: dot < 0 ? root : undefined,
        componentOf: dot < 0 ? undefined : objectOf(objectPath.slice(0, dot)),
        nodeId: `s=${objectPath}`,
        browseName: objectPath.slice(dot + 1),
      });
      objects.set(objectPath, node);
    }
    return node;
  };
  const batch = new ReadBatch();
  let served = 0;
  for (const v of leaves) {
    const typed = first[v.path];
    const shape = typed ? shapeOf(typed) : null;
    if (!shape || shape.struct) {
      log(`${v.path} (${v.type}) has no OPC UA type here and is left out`);
      continue;
    }
    const dot = v.path.lastIndexOf('.');
    const variable = namespace.addVariable({
      componentOf: objectOf(dot < 0 ? '' : v.path.slice(0, dot)),
      nodeId: `s=${v.path}`,
      browseName: v.path.slice(dot + 1),
      dataType: shape.dataType,
      valueRank: shape.arrayDimensions ? shape.arrayDimensions.length : -1,
      arrayDimensions: shape.arrayDimensions,
      description: v.type,
      // CONSTANTs are read-only for everyone; who may write the rest is the runtime's decision
      // (the session's role), answered per write.
      accessLevel: v.constant ? 'CurrentRead' : 'CurrentRead | CurrentWrite',
      userAccessLevel: v.constant ? 'CurrentRead' : 'CurrentRead | CurrentWrite',
      minimumSamplingInterval: options.publishIntervalMs,
    });
    variable.bindVariable(
      {
        refreshFunc(callback) {
          batch.read(v.path, (err, value) => {
            if (err || !value) {
              callback(null, new opcua.DataValue({ statusCode: opcua.StatusCodes.BadCommunicationError }));
              return;
            }
            try {
              callback(null, new opcua.DataValue({ value: toVariant(value, shape), sourceTimestamp: new Date() }));
            } catch (e) {
              log(`${v.path}: ${e.message}`);
              callback(null, new opcua.DataValue({ statusCode: opcua.StatusCodes.BadInternalError }));
            }
          });
        },
      },
      true,
    );
    variable.writeValue = function writeValue(context, dataValue, ...args) {
      const callback = args[args.length - 1];
      const range = args.length === 2 ? opcua.NumericRange.coerce(args[0]) : null;
      if (!this.isWritable(context)) {
        callback(null, opcua.StatusCodes.BadNotWritable);
        return;
      }
      if (range && !range.isEmpty()) {
        callback(null, opcua.StatusCodes.BadWriteNotSupported); // whole values only
        return;
      }
      if (this.checkVariantCompatibility(dataValue.value).isNot(opcua.StatusCodes.Good)) {
        callback(null, opcua.StatusCodes.BadTypeMismatch);
        return;
      }
      let value;
      try {
        value = toWritable(dataValue.value, shape);
      } catch (e) {
        callback(null, opcua.StatusCodes.BadTypeMismatch);
        return;
      }
      const session = context && context.session ? context.session.taktSession : undefined;
      channel.call('var.write', { name: v.path, value }, session).then(
        () => callback(null, opcua.StatusCodes.Good),
        (err) => callback(null, writeStatus(err)),
      );
    };
    served++;
  }
  log(`address space: ${served} variables in ${options.namespaceUri} (ns=${namespace.index})`);
}

// The runtime's refusal of a write as an OPC UA status (docs/opcua.md "Writes").
function writeStatus(err) {
  switch (err.code) {
    case -32010: // unauthorized: no session, or a role that may not write
    case -32011: // forbidden
      return opcua.StatusCodes.BadUserAccessDenied;
    case -32602: // the value is not one of the variable's type, or does not fit it
      return /does not fit|out of range/.test(err.message) ? opcua.StatusCodes.BadOutOfRange : opcua.StatusCodes.BadTypeMismatch;
    case -32005: // the rate limit
      return opcua.StatusCodes.BadTooManyOperations;
    default:
      log(`a write failed: ${err.message}`);
      return opcua.StatusCodes.BadInternalError;
  }
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

async function start(options) {
  const certificateManager = new opcua.OPCUACertificateManager({
    rootFolder: options.pkiDir,
    automaticallyAcceptUnknownCertificate: false,
  });
  await certificateManager.initialize();
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
    serverCapabilities: { minSupportedSampleRate: options.publishIntervalMs },
    // A user name and password go to the runtime, which checks them and answers a session
    // handle; every call for the session carries it (channel.js).
    userManager: {
      isValidUserAsync(user, password, callback) {
        const session = this;
        channel.call('opcua.login', { user, password }).then(
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
  await server.initialize();
  await buildAddressSpace(server, options);
  await server.start();
  const endpoint = server.getEndpointUrl();
  log(`listening on ${endpoint}`);
  channel.call('opcua.ready', { endpoint }).catch(() => {});
  channel.on('close', () => {
    // The runtime is gone (or stopping): nothing to serve.
    server.shutdown(0).then(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  });
}

channel.on('opcua.configure', (options) => {
  start(options).catch((err) => {
    log(`cannot start: ${err.message}`);
    process.exit(1);
  });
});
channel.on('close', () => process.exit(0));

process.on('SIGTERM', () => process.exit(0));

