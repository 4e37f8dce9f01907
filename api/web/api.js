// The page's one way to the API: JSON in and out, the table's edit key as a Bearer token on its writes.
import { editKey } from "./device.js";
import { tr } from "./i18n.js";

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

// A write without this table's edit key is refused (401 key_required, 403 wrong_key): say what to do about it.
const KEY_HELP = {
  key_required: ["这台手机没有这一桌的记分钥匙：请打开开桌的人分享的记分链接。",
                 "This device has no edit key for this table: open the edit link from whoever started it."],
  wrong_key: ["这台手机的记分钥匙不对：请重新打开记分链接。",
              "This device's edit key for this table is wrong: open the edit link again."],
};

// The server's own message (its words), or the page's in the current language.
export function errorText(r) {
  const error = r.data && r.data.error;
  if (!error) return tr(`出错了（${r.status}）`, `Error ${r.status}`);
  return KEY_HELP[error.code] ? tr(...KEY_HELP[error.code]) : error.message;
}

export const errorCode = (r) => (r.data && r.data.error ? r.data.error.code : null);
