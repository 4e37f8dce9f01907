// The page's one way to the API: JSON in and out, the table's edit key as a Bearer token on its writes.
import { editKey } from "./device.js";

const TABLE_WRITE = /^\/v1\/tables\/([A-Za-z0-9_-]+)(\/|$|\?)/;

export function authFor(method, url) {
  if (method === "GET") return {};
  const m = TABLE_WRITE.exec(url);
  const key = m && editKey(m[1]);
  return key ? { Authorization: `Bearer ${key}` } : {};
}

// {ok, status, data}; a network failure throws (the caller tells "no answer" from a refusal).
export async function api(method, url, body, headers = {}) {
  const all = { ...authFor(method, url), ...headers };
  if (body) all["Content-Type"] = "application/json";
  const res = await fetch(url, { method, headers: all, body: body ? JSON.stringify(body) : undefined });
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  return { ok: res.ok, status: res.status, data };
}

export function errorText(r) {
  return r.data && r.data.error ? r.data.error.message : `Error ${r.status}`;
}

export const errorCode = (r) => (r.data && r.data.error ? r.data.error.code : null);
