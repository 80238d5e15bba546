'use strict';
// The program's part of the address space (docs/opcua.md "Address space"): program instances, FB
// instances and STRUCTs as objects, the rest as variables with NodeId ns=<namespace>;s=<path>,
// built from var.list and brought up to date after each online change (sync): variables the new
// program added appear, removed ones go Bad for their monitored items and disappear, one whose
// type changed is made again, and a GeneralModelChangeEvent names what changed. Values come from
// the change stream for monitored variables (feed.js) and from var.read otherwise.

const opcua = require('node-opcua');
const { shapeOf, toVariant, toWritable } = require('./types');

const kPage = 1000; // var.list's largest page, var.read's most names per call
// ModelChangeStructureDataType's verbs (OPC UA Part 5, 6.4.32) and the most changes one
// GeneralModelChangeEvent names.
const kNodeAdded = 1;
const kNodeDeleted = 2;
const kReferenceAdded = 4;
const kReferenceDeleted = 8;
const kMaxChanges = 1000;

// Case-insensitive glob over a whole path: `*` any run, `?` one character (var.list's globs).
function globToRegExp(glob) {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 'i');
}

// Reads of many variables in one OPC UA Read come as one refresh per variable in the same turn
// of the event loop: they are gathered into one var.read (one cycle boundary for all of them).
class ReadBatch {
  constructor(readTyped) {
    this.readTyped = readTyped;
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
    this.readTyped([...batch.keys()]).then(
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

// Where each node's value stands in the Write request it came in (server.js): the batch keeps the
// request's order, so a node named twice in one Write ends with the later value.
const writeOrder = new WeakMap(); // the WriteValue's DataValue -> request serial * 2^20 + index

// The nodes of one OPC UA Write reach their writeValue in the same turn of the event loop
// (server.js starts them all at once): the values of one session that passed the node's own checks
// are gathered into one var.writeMany, so they all apply at one cycle boundary, and each node is
// answered with its own status from the runtime's answer for its item.
class WriteBatch {
  constructor(channel, log) {
    this.channel = channel;
    this.log = log;
    this.waiting = new Map(); // session handle ('' anonymous) -> [{ name, value, order, callback }]
  }
  write(session, name, value, order, callback) {
    if (this.waiting.size === 0) {
      setImmediate(() => this.flush());
    }
    const key = session || '';
    const list = this.waiting.get(key) || [];
    list.push({ name, value, order, callback });
    this.waiting.set(key, list);
  }
  flush() {
    const batch = this.waiting;
    this.waiting = new Map();
    for (const [session, list] of batch) {
      list.sort((a, b) => a.order - b.order); // stable: same order, arrival order
      for (let i = 0; i < list.length; i += kPage) {
        this.send(session || undefined, list.slice(i, i + kPage));
      }
    }
  }
  send(session, list) {
    const items = list.map((w) => ({ name: w.name, value: w.value }));
    this.channel.call('var.writeMany', { items }, session).then(
      (answer) => {
        list.forEach((w, i) => {
          const result = answer.results[i];
          if (!result || result.name !== w.name) {
            this.log(`var.writeMany answered item ${i} for ${result ? result.name : 'nothing'}, not ${w.name}`);
            w.callback(opcua.StatusCodes.BadInternalError);
          } else {
            w.callback(result.error ? writeStatus(result.error, this.log) : opcua.StatusCodes.Good);
          }
        });
      },
      // The whole call refused (the session's role, the rate limit, the runtime not cycling).
      (err) => list.forEach((w) => w.callback(writeStatus(err, this.log))),
    );
  }
}

// The runtime's refusal of a write as an OPC UA status (docs/opcua.md "Writes").
function writeStatus(err, log) {
  switch (err.code) {
    case -32010: // unauthorized: no session, or a role that may not write
    case -32011: // forbidden
      return opcua.StatusCodes.BadUserAccessDenied;
    case -32602: // the value is not one of the variable's type, or does not fit it
      return /does not fit|out of range|is outside/.test(err.message) ? opcua.StatusCodes.BadOutOfRange : opcua.StatusCodes.BadTypeMismatch;
    case -32005: // the rate limit
      return opcua.StatusCodes.BadTooManyOperations;
    default:
      log(`a write failed: ${err.message}`);
      return opcua.StatusCodes.BadInternalError;
  }
}

// Read-only for every session: a CONSTANT, and a variable at an input address (`AT %I…`), which
// the input copy overwrites every cycle: the program does not own it (as Sparkplug refuses it).
function readOnly(leaf) {
  return Boolean(leaf.constant) || /^%I/i.test(leaf.address || '');
}

function sameShape(a, b) {
  return (
    a.dataType === b.dataType &&
    JSON.stringify(a.enum || null) === JSON.stringify(b.enum || null) &&
    a.iecType === b.iecType &&
    JSON.stringify(a.arrayDimensions || null) === JSON.stringify(b.arrayDimensions || null)
  );
}

class ProgramSpace {
  constructor({ server, namespace, options, channel, feed, log }) {
    this.addressSpace = server.engine.addressSpace;
    this.namespace = namespace;
    this.options = options;
    this.channel = channel;
    this.feed = feed;
    this.log = log;
    this.globs = options.expose.map(globToRegExp);
    this.batch = new ReadBatch((names) => this.readTyped(names));
    this.writes = new WriteBatch(channel, log);
    this.served = new Map(); // path -> { variable, shape, cached: DataValue from the feed }
    this.objects = new Map(); // path -> UAObject
    this.root = namespace.addFolder(this.addressSpace.rootFolder.objects, {
      nodeId: `s=${options.resource}`,
      browseName: options.resource,
    });
  }

  async listVariables() {
    const all = [];
    for (let offset = 0; ; ) {
      const page = await this.channel.call('var.list', { offset, limit: kPage });
      all.push(...page.variables);
      offset += page.variables.length;
      if (page.variables.length === 0 || offset >= page.total) {
        break;
      }
    }
    return this.globs.length === 0 ? all : all.filter((v) => this.globs.some((g) => g.test(v.path)));
  }

  async readTyped(names) {
    const values = {};
    for (let i = 0; i < names.length; i += kPage) {
      const answer = await this.channel.call('var.read', { names: names.slice(i, i + kPage) });
      Object.assign(values, answer.values);
    }
    return values;
  }

  // The variables to serve: { path, type, constant, shape, typed } for every leaf of the program
  // (STRUCTs expanded into their fields), at most max_nodes.
  async leaves() {
    const listed = await this.listVariables();
    const parents = new Set();
    for (const v of listed) {
      const parts = v.path.split('.');
      for (let i = 1; i < parts.length; i++) {
        parents.add(parts.slice(0, i).join('.'));
      }
    }
    let leaves = listed.filter((v) => !parents.has(v.path));
    if (leaves.length > this.options.maxNodes) {
      this.log(`${leaves.length} variables, max_nodes is ${this.options.maxNodes}: the first ${this.options.maxNodes} are served`);
      leaves = leaves.slice(0, this.options.maxNodes);
    }
    const first = await this.readTyped(leaves.map((v) => v.path));
    // A STRUCT variable is an object of its fields (var.list lists FB members, not STRUCT
    // fields): its fields are variables (or objects again) with paths <variable>.<field>, as
    // var.read reads them.
    const out = [];
    const expand = (v, typed) => {
      if (typed && typed.type === 'STRUCT') {
        for (const [field, value] of Object.entries(typed.fields)) {
          expand({ path: `${v.path}.${field}`, type: value.type_name || value.type, constant: v.constant, address: v.address }, value);
        }
        return;
      }
      const shape = typed ? shapeOf(typed) : null;
      if (!shape || shape.struct) {
        this.log(`${v.path} (${v.type}) has no OPC UA type here and is left out`);
        return;
      }
      // An enumeration's values (var.list's `enum`) belong to its shape: other values, another node.
      out.push({ ...v, shape: v.enum ? { ...shape, enum: v.enum } : shape, typed });
    };
    for (const v of leaves) {
      expand(v, first[v.path]);
    }
    return out.slice(0, this.options.maxNodes);
  }

  // Builds the space at the server's start.
  async build() {
    let added = 0;
    for (const leaf of await this.leaves()) {
      this.add(leaf);
      // The event loop turns between pages, so the runtime's liveness ping is answered while a
      // large space is built (a process that does not answer for 10 s is taken for hung).
      if (++added % kPage === 0) {
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    this.log(`address space: ${this.served.size} variables in ${this.options.namespaceUri} (ns=${this.namespace.index})`);
  }

  // After an online change: what the new program has and the space has not is added, what it no
  // longer has (or has with another type) is removed, in one model change.
  async sync() {
    const leaves = await this.leaves();
    const wanted = new Map(leaves.map((l) => [l.path, l]));
    const removed = [];
    const added = [];
    for (const [path, entry] of this.served) {
      const leaf = wanted.get(path);
      if (!leaf || !sameShape(leaf.shape, entry.shape) || readOnly(leaf) !== entry.readOnly) {
        removed.push(path);
      }
    }
    for (const leaf of leaves) {
      if (!this.served.has(leaf.path) || removed.includes(leaf.path)) {
        added.push(leaf);
      }
    }
    if (removed.length === 0 && added.length === 0) {
      return { added: 0, removed: 0 };
    }
    this.feed.forget(removed);
    const changes = [];
    const change = (node, verb) => changes.push({ affected: node.nodeId, affectedType: node.typeDefinition, verb });
    for (const path of removed) {
      change(this.served.get(path).variable, kNodeDeleted | kReferenceDeleted);
      this.remove(path);
    }
    for (const object of this.pruneObjects(new Set(leaves.map((l) => l.path)))) {
      change(object, kNodeDeleted | kReferenceDeleted);
    }
    for (const leaf of added) {
      change(this.add(leaf), kNodeAdded | kReferenceAdded);
    }
    this.modelChanged(changes);
    const gone = removed.filter((p) => !wanted.has(p)).length;
    this.log(`online change: ${added.length - (removed.length - gone)} variables added, ${gone} removed, ${removed.length - gone} of another type`);
    return { added: added.length, removed: removed.length };
  }

  objectOf(objectPath) {
    if (objectPath === '') {
      return this.root;
    }
    let node = this.objects.get(objectPath);
    if (!node) {
      const dot = objectPath.lastIndexOf('.');
      node = this.namespace.addObject({
        organizedBy: dot < 0 ? this.root : undefined,
        componentOf: dot < 0 ? undefined : this.objectOf(objectPath.slice(0, dot)),
        nodeId: `s=${objectPath}`,
        browseName: objectPath.slice(dot + 1),
      });
      this.objects.set(objectPath, node);
    }
    return node;
  }

  // A GeneralModelChangeEvent from the Server object naming the nodes added and deleted (one for
  // the resource folder when there are more than kMaxChanges), so a client browses them again.
  // node-opcua raises one by itself only for nodes with a NodeVersion.
  modelChanged(changes) {
    const list = changes.length > kMaxChanges ? [{ affected: this.root.nodeId, affectedType: this.root.typeDefinition, verb: kNodeAdded | kNodeDeleted | kReferenceAdded | kReferenceDeleted }] : changes;
    this.addressSpace.rootFolder.objects.server.raiseEvent('GeneralModelChangeEventType', {
      changes: {
        dataType: opcua.DataType.ExtensionObject,
        arrayType: opcua.VariantArrayType.Array,
        value: list.map((c) => new opcua.ModelChangeStructureDataType(c)),
      },
    });
  }

  // Objects no variable of `paths` is in any more go, the deepest first; returns them.
  pruneObjects(paths) {
    const needed = new Set();
    for (const p of paths) {
      const parts = p.split('.');
      for (let i = 1; i < parts.length; i++) {
        needed.add(parts.slice(0, i).join('.'));
      }
    }
    const gone = [...this.objects.keys()].filter((o) => !needed.has(o)).sort((a, b) => b.length - a.length);
    const out = [];
    for (const o of gone) {
      const object = this.objects.get(o);
      out.push({ nodeId: object.nodeId, typeDefinition: object.typeDefinition });
      this.addressSpace.deleteNode(object);
      this.objects.delete(o);
    }
    return out;
  }

  remove(path) {
    const entry = this.served.get(path);
    this.served.delete(path);
    // Its monitored items get a Bad status (the node is gone), then nothing more.
    entry.variable.setValueFromSource({ dataType: opcua.DataType.Null }, opcua.StatusCodes.BadNodeIdUnknown);
    this.addressSpace.deleteNode(entry.variable);
  }

  add(leaf) {
    const { path, shape } = leaf;
    const dot = path.lastIndexOf('.');
    const entry = { shape, readOnly: readOnly(leaf), variable: null };
    // A subrange (var.list's type `INT (0..100)`) is an AnalogItem whose EURange is its range, so a
    // percent deadband has something to be a percentage of.
    const range = /\((-?\d+)\s*\.\.\s*(-?\d+)\)$/.exec(leaf.type || '');
    const options = {
      componentOf: this.objectOf(dot < 0 ? '' : path.slice(0, dot)),
      nodeId: `s=${path}`,
      browseName: path.slice(dot + 1),
      dataType: shape.dataType,
      valueRank: shape.arrayDimensions ? shape.arrayDimensions.length : -1,
      arrayDimensions: shape.arrayDimensions,
      description: leaf.type,
      // CONSTANTs and inputs are read-only for everyone; who may write the rest is the runtime's
      // decision (the session's role), answered per write.
      accessLevel: entry.readOnly ? 'CurrentRead' : 'CurrentRead | CurrentWrite',
      userAccessLevel: entry.readOnly ? 'CurrentRead' : 'CurrentRead | CurrentWrite',
      // Exception-based: a monitored item that asks for sampling interval 0 gets every change the
      // change stream reports (each at a cycle boundary); one that asks for an interval is
      // sampled from the fed value at that interval.
      minimumSamplingInterval: 0,
    };
    const variable = range
      ? this.namespace.addAnalogDataItem({ ...options, engineeringUnitsRange: { low: Number(range[1]), high: Number(range[2]) } })
      : this.namespace.addVariable(options);
    if (shape.enum) {
      this.addEnumNames(variable, shape.enum);
    }
    entry.variable = variable;
    this.served.set(path, entry);
    // The value read when the variable was listed: what a monitored item starts from until the
    // change stream's first value comes.
    try {
      variable.setValueFromSource(toVariant(leaf.typed, shape), opcua.StatusCodes.Good, new Date());
    } catch (e) {
      this.log(`${path}: ${e.message}`);
    }
    const space = this;
    const read = (callback) => {
      space.batch.read(path, (err, value) => {
        if (err || !value) {
          callback(null, new opcua.DataValue({ statusCode: opcua.StatusCodes.BadCommunicationError }));
          return;
        }
        try {
          callback(null, new opcua.DataValue({ value: toVariant(value, shape), sourceTimestamp: new Date() }));
        } catch (e) {
          space.log(`${path}: ${e.message}`);
          callback(null, new opcua.DataValue({ statusCode: opcua.StatusCodes.BadInternalError }));
        }
      });
    };
    variable.bindVariable(
      {
        refreshFunc(callback) {
          // A monitored variable's value is the change stream's: no read. It is answered at once,
          // so a monitored item's first value (read right after it starts listening for changes)
          // cannot come after a change and repeat a value.
          //
          // A watched variable whose feed has not brought its first values yet waits for them
          // (or reads, when they do not come): until then its value is the one listed or last
          // read, which must not be served as current, and a read of its own would be sampled at
          // another cycle than the fed values after it.
          space.feed.whenFed(path, (fed) => {
            if (fed) {
              callback(null, variable.readValue());
            } else {
              read(callback);
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
      const order = writeOrder.has(dataValue) ? writeOrder.get(dataValue) : Number.MAX_SAFE_INTEGER;
      space.writes.write(session, path, value, order, (status) => callback(null, status));
    };
    return variable;
  }

  // The names of an enumeration variable's values as its property (OPC UA Part 3, 5.6.2; the
  // properties of MultiStateDiscreteType and MultiStateValueDiscreteType): EnumStrings, indexed by
  // the value, when the values are 0, 1, 2, … in order (a declaration without values); else
  // EnumValues, each value with its name.
  addEnumNames(variable, values) {
    const strings = values.every((e, i) => e.value === i);
    const property = {
      propertyOf: variable,
      typeDefinition: 'PropertyType',
      valueRank: 1,
      arrayDimensions: [values.length],
      accessLevel: 'CurrentRead',
      userAccessLevel: 'CurrentRead',
    };
    if (strings) {
      this.namespace.addVariable({
        ...property,
        browseName: { name: 'EnumStrings', namespaceIndex: 0 },
        dataType: opcua.DataType.LocalizedText,
        value: {
          dataType: opcua.DataType.LocalizedText,
          arrayType: opcua.VariantArrayType.Array,
          value: values.map((e) => new opcua.LocalizedText({ text: e.name })),
        },
      });
      return;
    }
    this.namespace.addVariable({
      ...property,
      browseName: { name: 'EnumValues', namespaceIndex: 0 },
      dataType: 'EnumValueType',
      value: {
        dataType: opcua.DataType.ExtensionObject,
        arrayType: opcua.VariantArrayType.Array,
        value: values.map(
          (e) => new opcua.EnumValueType({ value: opcua.coerceInt64(e.value), displayName: { text: e.name }, description: { text: e.name } }),
        ),
      },
    });
  }

  // The path a monitored item watches, when it is one of the program's variables.
  pathOf(node) {
    if (!node || node.nodeId.namespace !== this.namespace.index || typeof node.nodeId.value !== 'string') {
      return null;
    }
    const entry = this.served.get(node.nodeId.value);
    return entry && entry.variable === node ? node.nodeId.value : null;
  }

  // A var.changed's values: each one that differs from the last becomes the variable's value, at
  // once for exception-based monitored items.
  changed(values) {
    const now = new Date();
    for (const [path, typed] of Object.entries(values)) {
      const entry = this.served.get(path);
      if (!entry) {
        continue;
      }
      let variant;
      try {
        variant = toVariant(typed, entry.shape);
      } catch (e) {
        this.log(`${path}: ${e.message}`);
        continue;
      }
      const current = entry.variable.readValue();
      if (current.statusCode.isGood() && opcua.sameVariant(current.value, variant)) {
        continue; // what the variable has already (the feed's first values are all values)
      }
      entry.variable.setValueFromSource(variant, opcua.StatusCodes.Good, now);
    }
  }
}

module.exports = { ProgramSpace, writeOrder };
