'use strict';
// The private channel to `takt run`: the one end of a socket pair the runtime made and left open as
// descriptor 3 of this process, and nothing else can reach. JSON-RPC 2.0, one message per line, as
// on the control endpoint; the runtime's first line is `opcua.configure` with the server's options,
// and every call after that is one of the runtime's typed calls (var.list, var.read, …) made with
// the role of the OPC UA session it is made for (`session`: what opcua.login answered).
const net = require('net');
const readline = require('readline');

// 64-bit integers are exact JSON integers on the channel; JSON.parse would round those beyond
// 2^53, so they are read as strings (a number of 16 digits or more only ever stands for a value).
function parseExact(line) {
  return JSON.parse(line.replace(/("value":)(-?\d{16,})(?=[,}])/g, '$1"$2"'));
}

class Channel {
  constructor(fd) {
    this.socket = new net.Socket({ fd, readable: true, writable: true });
    this.nextId = 1;
    this.pending = new Map();
    this.handlers = new Map();
    this.closed = false;
    const lines = readline.createInterface({ input: this.socket, crlfDelay: Infinity });
    lines.on('line', (line) => this.receive(line));
    this.socket.on('close', () => this.close(new Error('the runtime closed the channel')));
    this.socket.on('error', (err) => this.close(err));
  }

  // A notification of the runtime (`method` without an id) goes to `handler(params)`.
  on(method, handler) {
    this.handlers.set(method, handler);
  }

  receive(line) {
    let message;
    try {
      message = parseExact(line);
    } catch (err) {
      process.stderr.write(`opcua: a line of the runtime is not JSON: ${err.message}\n`);
      return;
    }
    if (message.id !== undefined && message.method === undefined) {
      const waiter = this.pending.get(message.id);
      if (waiter) {
        this.pending.delete(message.id);
        if (message.error) {
          const err = new Error(message.error.message);
          err.code = message.error.code;
          err.data = message.error.data;
          waiter.reject(err);
        } else {
          waiter.resolve(message.result);
        }
      }
      return;
    }
    const handler = this.handlers.get(message.method);
    if (handler) {
      handler(message.params || {});
    }
  }

  // One typed call of the runtime for `session` (absent: an anonymous session, the viewer role).
  call(method, params, session) {
    if (this.closed) {
      return Promise.reject(new Error('the channel to the runtime is closed'));
    }
    const id = this.nextId++;
    const message = { jsonrpc: '2.0', id, method, params: params || {} };
    if (session) {
      message.session = session;
    }
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.write(JSON.stringify(message) + '\n');
    });
  }

  // A notification to the runtime: no answer comes.
  notify(method, params) {
    if (!this.closed) {
      this.socket.write(JSON.stringify({ jsonrpc: '2.0', method, params: params || {} }) + '\n');
    }
  }

  close(err) {
    if (this.closed) {
      return;
    }
    this.closed = true;
    for (const waiter of this.pending.values()) {
      waiter.reject(err);
    }
    this.pending.clear();
    const handler = this.handlers.get('close');
    if (handler) {
      handler(err);
    }
  }
}

module.exports = { Channel, parseExact };
