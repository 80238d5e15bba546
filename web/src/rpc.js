// One JSON-RPC request per POST to /api/rpc, with the token of the `token` auth mode as Bearer.
// Every call has a deadline, so a page whose runtime went away never piles requests up.
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

export async function call(method, params = {}) {
  const headers = { 'Content-Type': 'application/json' };
  const t = token();
  if (t) {
    headers.Authorization = `Bearer ${t}`;
  }
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), TIMEOUT_MS);
  try {
    const res = await fetch('/api/rpc', {
      method: 'POST',
      headers,
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
