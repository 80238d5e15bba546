'use strict';
// The runtime's own state as nodes (docs/opcua.md "Runtime state"): an object Runtime under
// Objects with what runtime.status answers. ServerStatus stays node-opcua's (the server's state,
// its start and current time, BuildInfo with takt's version). State, Fault and ProgramHash change
// with the runtime's events (started, stopped, paused, resumed, fault, online change), which are
// fed to their monitored items as they come; Cycles is read when asked, as often as a monitored
// item samples it.

const opcua = require('node-opcua');

// How long one runtime.status answers every Read of these nodes: the nodes of one Read, and the
// sampling of several monitored items at once, make one call.
const kFresh = 20;

class RuntimeNodes {
  constructor({ server, namespace, channel, log }) {
    this.channel = channel;
    this.log = log;
    this.last = null; // { at, status }
    this.pending = null;
    const objects = server.engine.addressSpace.rootFolder.objects;
    // '#' is in no variable path (ST identifiers have none), so these NodeIds never clash with
    // the program's.
    this.object = namespace.addObject({ organizedBy: objects, nodeId: 's=#Runtime', browseName: 'Runtime' });
    const kFields = [
      ['State', opcua.DataType.String, 0, (s) => s.state],
      ['Fault', opcua.DataType.String, 0, (s) => faultText(s.fault)],
      ['Faults', opcua.DataType.UInt32, 0, (s) => s.faults],
      ['ProgramHash', opcua.DataType.String, 0, (s) => s.program_hash],
      ['Execution', opcua.DataType.String, 0, (s) => s.execution],
      ['Cycles', opcua.DataType.UInt64, 100, (s) => opcua.coerceUInt64(String(s.cycles))],
    ];
    this.nodes = kFields.map(([name, dataType, minimumSamplingInterval, pick]) => {
      const variable = namespace.addVariable({
        componentOf: this.object,
        nodeId: `s=#Runtime.${name}`,
        browseName: name,
        dataType,
        minimumSamplingInterval,
        accessLevel: 'CurrentRead',
        userAccessLevel: 'CurrentRead',
      });
      const runtime = this;
      variable.bindVariable(
        {
          refreshFunc(callback) {
            runtime.status().then(
              (s) => {
                let value;
                try {
                  value = runtime.variant(dataType, pick(s));
                } catch (err) {
                  runtime.log(`Runtime.${name}: ${err.message}`);
                  callback(null, new opcua.DataValue({ statusCode: opcua.StatusCodes.BadInternalError }));
                  return;
                }
                callback(null, new opcua.DataValue({ value, sourceTimestamp: new Date() }));
              },
              () => callback(null, new opcua.DataValue({ statusCode: opcua.StatusCodes.BadCommunicationError })),
            );
          },
        },
        true,
      );
      return { variable, dataType, pick, name };
    });
  }

  variant(dataType, value) {
    return new opcua.Variant({ dataType, arrayType: opcua.VariantArrayType.Scalar, value });
  }

  status() {
    if (this.last && Date.now() - this.last.at < kFresh) {
      return Promise.resolve(this.last.status);
    }
    if (!this.pending) {
      this.pending = this.channel.call('runtime.status', {}).then(
        (status) => {
          this.pending = null;
          this.last = { at: Date.now(), status };
          return status;
        },
        (err) => {
          this.pending = null;
          throw err;
        },
      );
    }
    return this.pending;
  }

  // An event of the runtime: its state is read again and handed to the monitored items.
  async changed() {
    this.last = null;
    let s;
    try {
      s = await this.status();
    } catch (err) {
      this.log(`runtime.status: ${err.message}`);
      return;
    }
    const now = new Date();
    for (const { variable, dataType, pick, name } of this.nodes) {
      const value = this.variant(dataType, pick(s));
      const current = variable.readValue();
      // Only a change: a monitored item's first value (a read) and an event must not repeat it.
      if (name !== 'Cycles' && !(current.statusCode.isGood() && opcua.sameVariant(current.value, value))) {
        variable.setValueFromSource(value, opcua.StatusCodes.Good, now);
      }
    }
  }
}

// The fault that halted the program as one line, its kind, message and where (empty: none), as
// the status line of `takt run` names it.
function faultText(fault) {
  if (!fault) {
    return '';
  }
  const parts = [fault.kind, fault.message].filter((p) => p !== undefined && p !== null && p !== '');
  const where = fault.pou ? ` in ${fault.pou}${fault.line ? ` line ${fault.line}` : ''}` : '';
  return `${parts.join(': ')}${where}` || JSON.stringify(fault);
}

module.exports = { RuntimeNodes };
