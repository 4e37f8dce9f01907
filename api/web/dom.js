// Small shared pieces of the page: the tile set in MPSZ, DOM builders, tile chips, MPSZ text ↔ tile lists.

export const SUIT_ZH = { m: "万", p: "筒", s: "条" };

export const TILES = ["m", "p", "s"].flatMap((s) => [1, 2, 3, 4, 5, 6, 7, 8, 9].map((r) => `${r}${s}`));

export const MELD_TYPES = { pong: "碰 pong", kong: "点豆 kong", added_kong: "转弯豆 added kong", concealed_kong: "闷豆 concealed kong" };

export const $ = (id) => document.getElementById(id);

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (v !== false && v != null) el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c != null) el.append(c instanceof Node ? c : String(c));
  return el;
}

export function svg(tag, attrs = {}) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

export function tileChip(tile, attrs = {}) {
  const valid = TILES.includes(tile);
  const cls = valid ? tile[1] : tile === "back" ? "back" : "unknown";
  const label = valid ? [tile[0], h("small", {}, SUIT_ZH[tile[1]])] : [tile === "back" ? "▇" : "?"];
  return h("button", { type: "button", class: `tile ${cls} ${attrs.class || ""}`, "data-tile": tile,
                       "aria-label": tile, onclick: attrs.onclick }, ...label);
}

// "12m5p3m": MPSZ that keeps the order of the tiles (the last one is the winning tile in auto mode).
export function toText(tiles) {
  let out = "";
  tiles.forEach((t, i) => {
    out += t[0];
    if (i === tiles.length - 1 || tiles[i + 1][1] !== t[1]) out += t[1];
  });
  return out;
}

export function fromText(text) {
  const tiles = [];
  let ranks = [];
  for (const ch of text.replace(/\s+/g, "")) {
    if (/[0-9]/.test(ch)) ranks.push(ch);
    else { tiles.push(...ranks.map((r) => r + ch)); ranks = []; }
  }
  return ranks.length ? null : tiles; // the server explains anything else (honors, fifth copies, ...)
}

// Full-width digits and letters (１２３ｍ, typed on a Chinese keyboard) as ASCII; no spaces.
export const normalise = (text) => text.normalize("NFKC").replace(/\s+/g, "");
