// One JSON-RPC request per POST to /api/rpc, with the token of the `token` auth mode as Bearer.
// Every call has a deadline, so a page whose runtime went away never piles requests up. Live
// values come as Server-Sent Events from POST /api/events (subscribe), with the same token.
import { createParser } from 'eventsource-parser';

const TOKEN_KEY = 'takt.token';
const TIMEOUT_MS = 5000;
let nextId = 1;

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

export function setToken(value) {
  if (value) {
    sessionStorage.setItem(TOKEN_KEY, value);
  } else {
    sessionStorage.removeItem(TOKEN_KEY);
  }
}

export class RpcError extends Error {
  constructor(message, code, data, status) {
    super(message);
    this.code = code;
    this.data = data;
    this.status = status;
  }
}

function headers() {
  const h = { 'Content-Type': 'application/json' };
  const t = token();
  if (t) {
    h.Authorization = `Bearer ${t}`;
  }
  return h;
}

// The RpcError of an answer that is not a result (a JSON-RPC error, or plain text).
function failure(text, status) {
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return new RpcError(text.trim() || `HTTP ${status}`, 0, null, status);
  }
  return new RpcError(body.error?.message ?? `HTTP ${status}`, body.error?.code ?? 0, body.error?.data, status);
}

// var.subscribe through /api/events: `onChange(params)` gets each var.changed notification's
// params ({subscription, cycle, skipped, values}) until the stream ends (resolves) or `signal`
// aborts it. A refused subscription throws RpcError as call() does.
export async function subscribe(params, onChange, signal) {
  const res = await fetch('/api/events', {
    method: 'POST', headers: headers(), body: JSON.stringify(params), signal, cache: 'no-store',
  });
  if (!res.ok) {
    throw failure(await res.text(), res.status);
  }
  const parser = createParser({
    onEvent(e) {
      if (e.event === 'var.changed') onChange(JSON.parse(e.data));
    },
  });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    parser.feed(value);
  }
}

export async function call(method, params = {}) {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), TIMEOUT_MS);
  try {
    const res = await fetch('/api/rpc', {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
      signal: abort.signal,
      cache: 'no-store',
    });
    const text = await res.text();
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      throw new RpcError(text.trim() || `HTTP ${res.status}`, 0, null, res.status);
    }
    if (body.error) {
      throw new RpcError(body.error.message, body.error.code, body.error.data, res.status);
    }
    return body.result;
  } finally {
    clearTimeout(timer);
  }
}
