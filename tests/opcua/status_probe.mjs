// A worker thread of scale.test.mjs: runtime.status on the control endpoint's socket
// (workerData.socket), one call after the other with 50 ms between them, each timed from the
// connect to its answer's line and posted as {ms, at} (at: Date.now() at the call; ms null: no
// answer within 10 s; error: an error answer or a refused connection), until the worker is ended.
import { createConnection } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

const call = (method) =>
  new Promise((resolve) => {
    const socket = createConnection(workerData.socket);
    const t0 = performance.now();
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ ms: null });
    }, 10000);
    socket.on('connect', () => socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method })}\n`));
    socket.on('data', (d) => {
      text += d;
      const end = text.indexOf('\n');
      if (end >= 0) {
        clearTimeout(timer);
        socket.destroy();
        const answer = JSON.parse(text.slice(0, end));
        resolve(answer.result ? { ms: performance.now() - t0 } : { ms: null, error: answer.error });
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      resolve({ ms: null, error: err.message });
    });
  });

for (;;) {
  const at = Date.now();
  parentPort.postMessage({ ...(await call('runtime.status')), at });
  await new Promise((r) => setTimeout(r, 50));
}
