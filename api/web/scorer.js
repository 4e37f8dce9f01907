// 捉鸡 scorer web page: photo or live camera → /v1/score or /v1/read; corrections re-score via /v1/hand
// (text only, the detector does not run again). No build step, no framework.
import { $, h, svg, MELD_TYPES, SUIT_ZH, TILES, tileChip, toText, fromText, normalise } from "./dom.js";
import { L, tr } from "./i18n.js";

const MAX_SIDE = 1600; // photos are scaled down before upload: faster on phones, enough pixels for hand photos
const LIVE_EVERY_MS = 700; // live view: one frame to /v1/read every 0.7 s (skipped while one is in flight)
const LIVE_STABLE = 3; // freeze when the same reading comes back this many times in a row

// The editable reading. Entries keep the box they came from (null when added by hand).
const state = {
  photo: null, // {url, width, height}
  boxes: [], // ReadTile list from the server, drawn over the photo
  hand: [], // [{tile, box, doubtful, fixed}]
  melds: [], // [{type, tile, boxes}]
  river: [], // [{tile, box}]
  indicator: null, // {tile, box}
  removed: new Set(), // boxes whose tile was removed from the hand
  foreign: new Set(), // boxes of tiles not in the 108-tile set (winds, dragons, flowers): removed on reading
  seq: 0, // only the answer to the latest request is shown
  table: null, // id of the table whose round photos these are: read with its set's calibration (table.js)
};

// ----------------------------------------------------------------------------------------- small helpers

const noAnswer = (err) => L(`连不上服务器（${err.message}）。`, `No answer from the server (${err.message}).`);

// A message is a label in both languages (L(…), switched with the page) or a server's own text.
function setStatus(message, isError = false) {
  const el = $("status");
  el.replaceChildren(...(message ? [message] : []));
  el.classList.toggle("error", isError);
}

async function postJSON(url, body) {
  const res = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" },
                                 body: JSON.stringify(body) });
  return [res.ok, await res.json()];
}

// ------------------------------------------------------------------------------------------------ context

function context() {
  const selfDrawn = document.querySelector("input[name=how]:checked").value === "self";
  return {
    rules: $("rules").value,
    self_drawn: selfDrawn,
    kong_draw: $("kong-draw").checked,
    hot_discard: $("hot-discard").checked,
    robbed_kong: $("robbed-kong").checked,
    bao_ting: $("bao-ting").checked,
    discarder_bao_ting: $("discarder-bao-ting").checked,
  };
}

function setHow(value) {
  document.querySelector(`input[name=how][value=${value}]`).checked = true;
}

// ------------------------------------------------------------------------------------- reading ↔ state

// A box the detector called "other" that the reading could not turn into a suited tile: a wind, dragon or flower.
const isForeign = (t) => t.detected === "other" && !TILES.includes(t.tile) && t.role !== "meld";

// Returns how many tiles not in the 108-tile set were removed.
function loadReading(data) {
  state.boxes = data.tiles;
  state.foreign = new Set(data.tiles.filter(isForeign).map((t) => t.index));
  state.removed = new Set(state.foreign);
  const byOrder = (a, b) => a.order - b.order;
  const kept = (t) => !state.foreign.has(t.index);
  state.hand = data.tiles.filter((t) => t.role === "concealed" && kept(t)).sort(byOrder)
    .map((t) => ({ tile: t.tile, box: t.index, doubtful: t.doubtful }));
  state.melds = data.hand.melds.map((m) => ({ type: m.type, tile: m.tile, boxes: m.boxes }));
  state.river = data.tiles.filter((t) => t.role === "river" && kept(t)).sort(byOrder)
    .map((t) => ({ tile: t.tile, box: t.index }));
  const ind = data.tiles.find((t) => t.role === "indicator" && kept(t));
  state.indicator = ind ? { tile: ind.tile, box: ind.index } : null;
  // The server's retake reasons counted the foreign tiles (as a tile too many, as hard to read): drop those
  // that only concern them, and say plainly what happened instead.
  const n = state.foreign.size;
  const count = handCount();
  const reasons = (data.retake || []).filter((r) => {
    if (!n) return true;
    if (r.code === "count_mismatch") return count !== 13 && count !== 14;
    return !(r.boxes.length && r.boxes.every((b) => state.foreign.has(b)));
  });
  showRetake(reasons);
  return n;
}

// What the server said of the table's calibration: applied, or why not (a "recalibrate: …" message).
function calibrationNote(data) {
  const c = data.calibration;
  if (!c || (!c.applied && !c.message.startsWith("recalibrate:"))) return "";
  return c.applied ? L(" 用你们这副牌的校准认的。", " Read with your set's calibration.") : ` ${c.message}`;
}

function foreignNote(n) {
  return n ? L(`${n} 张不在 108 张里（风、箭或花）——已去掉。`,
               `${n} tile${n > 1 ? "s" : ""} not in the 108-tile set (a wind, dragon or flower) — removed. `) : "";
}

function boxLabel(box) {
  const e = state.hand.find((x) => x.box === box.index);
  if (e) return ["concealed", e.tile, e.fixed];
  const m = state.melds.find((x) => x.boxes.includes(box.index));
  if (m) return ["meld", box.detected === "back" || !m.tile ? "back" : m.tile, false];
  const r = state.river.find((x) => x.box === box.index);
  if (r) return ["river", r.tile, r.fixed];
  if (state.indicator && state.indicator.box === box.index) return ["indicator", state.indicator.tile, false];
  if (state.foreign.has(box.index)) return ["removed foreign", "✕", false]; // short: the label must not cover its neighbours
  return [state.removed.has(box.index) ? "removed" : "unassigned", box.tile, false];
}

// --------------------------------------------------------------------------------------------- drawing

function drawOverlay() {
  const overlay = $("overlay");
  overlay.replaceChildren();
  if (!state.photo) return;
  overlay.setAttribute("viewBox", `0 0 ${state.photo.width} ${state.photo.height}`);
  for (const b of state.boxes) {
    const [role, tile, fixed] = boxLabel(b);
    const [x1, y1, x2, y2] = b.box;
    const g = svg("g", { class: `box ${role}${b.doubtful ? " doubtful" : ""}${fixed ? " fixed" : ""}`,
                         "data-index": b.index });
    const rect = svg("rect", { x: x1, y: y1, width: x2 - x1, height: y2 - y1, rx: 3 });
    // Never wider than its box, so that the labels of neighbouring tiles do not run together.
    const size = Math.min(Math.max(12, (y2 - y1) * 0.32), (x2 - x1) * 0.5);
    const text = svg("text", { x: (x1 + x2) / 2, y: y1 - 3, "font-size": size, "text-anchor": "middle" });
    text.textContent = tile;
    g.append(rect, text);
    g.addEventListener("click", () => pickForBox(b));
    overlay.append(g);
  }
}

function drawHand() {
  const strip = $("hand-strip");
  strip.replaceChildren();
  state.hand.forEach((e, i) => {
    const last = i === state.hand.length - 1 && handCount() === 14 && !$("win-tile").value;
    strip.append(tileChip(e.tile, { class: `${e.doubtful ? "doubtful" : ""} ${e.fixed ? "fixed" : ""} ${last ? "win" : ""}`,
                                    onclick: () => openPicker({ kind: "hand", index: i }) }));
  });
  const melds = $("meld-strip");
  melds.replaceChildren();
  state.melds.forEach((m, i) => {
    const type = h("select", { class: "kind", "aria-label": "meld type",
                               onchange: (ev) => { m.type = ev.target.value; changed(); } },
                   Object.entries(MELD_TYPES).map(([k, v]) => h("option", { value: k, selected: k === m.type }, v)));
    const n = m.type === "pong" ? 3 : 4;
    const chips = Array.from({ length: n }, () => tileChip(m.tile || "back",
      { onclick: () => openPicker({ kind: "meld", index: i }) }));
    melds.append(h("span", { class: "meld" }, type, chips));
  });
  const n = handCount();
  $("count").replaceChildren(L(`${n} 张${n === 13 ? " · 等牌" : n === 14 ? " · 胡了" : " · 一手牌 13 或 14 张"}`,
    `${n} tiles${n === 13 ? " · waiting" : n === 14 ? " · won" : " · a hand has 13 or 14"}`));
  $("hand-text").value = toText(state.hand.map((e) => e.tile).filter((t) => TILES.includes(t)));
  $("meld-text").value = state.melds.map((m) => `${m.type}:${m.tile || "?"}`).join(" ");
}

function handCount() {
  return state.hand.length + 3 * state.melds.length;
}

function render() {
  drawOverlay();
  drawHand();
}

function clearPhoto() {
  if (state.photo) URL.revokeObjectURL(state.photo.url);
  state.photo = null;
  state.boxes = [];
  state.foreign = new Set();
  state.removed = new Set();
  $("photo-img").removeAttribute("src");
  $("photo").hidden = true;
  showRetake([]);
}

function showRetake(reasons) {
  $("retake").hidden = reasons.length === 0;
  $("retake-list").replaceChildren(...reasons.map((r) => h("li", {}, r.message)));
}

// ----------------------------------------------------------------------------------------------- picker

let pickTarget = null;

function openPicker(target) {
  pickTarget = target;
  const titles = { hand: ["是哪张牌？", "Which tile is it?"], meld: ["这一组是什么牌", "Tile of this meld"],
                   river: ["打出的牌", "Discarded tile"], indicator: ["翻鸡", "翻鸡 flipped tile"],
                   box: ["把这张加进手牌", "Add this tile to the hand"], new: ["加一张到手牌", "Add a tile to the hand"],
                   newmeld: ["新的一组（碰）是什么牌", "Tile of the new meld (碰 pong)"] };
  const current = { hand: () => state.hand[target.index].tile, meld: () => state.melds[target.index].tile || "back",
                    river: () => state.river[target.index].tile, indicator: () => state.indicator.tile,
                    other: () => target.now }[target.kind];
  const now = current ? current() : null;
  const i = target.index + 1;
  const where = { hand: () => [`手牌第 ${i} 张`, `tile ${i} of the hand`], meld: () => [`第 ${i} 组`, `meld ${i}`],
                  river: () => [`打出的第 ${i} 张`, `discard ${i}`], indicator: () => ["翻鸡", "翻鸡 indicator"],
                  other: () => target.where }[target.kind];
  $("picker-title").replaceChildren(now
    ? L(`改${where()[0]}：认成了 ${now} → 是哪张？`, `Correct ${where()[1]}: read as ${now} → which tile is it?`)
    : target.kind === "other" ? L(...target.where) : L(...titles[target.kind]));
  $("picker-current").replaceChildren(...(now ? [tileChip(now, { class: "current" })] : []));
  $("picker-current").hidden = !now;
  for (const b of $("picker-grid").querySelectorAll(".tile")) {
    b.classList.toggle("current", b.dataset.tile === now);
    b.setAttribute("aria-pressed", String(b.dataset.tile === now));
  }
  $("picker-back").hidden = target.kind !== "meld" && !(target.kind === "other" && target.back);
  $("picker-remove").hidden = ["box", "new", "newmeld"].includes(target.kind) || (target.kind === "other" && !target.removable);
  $("picker").showModal();
  // Start on the tile as read, so the player sees what is being corrected.
  const button = now && $("picker-grid").querySelector(`[data-tile="${now}"]`);
  if (button) button.focus();
}

function pickForBox(b) {
  const [role] = boxLabel(b);
  if (role === "concealed") openPicker({ kind: "hand", index: state.hand.findIndex((e) => e.box === b.index) });
  else if (role === "meld") openPicker({ kind: "meld", index: state.melds.findIndex((m) => m.boxes.includes(b.index)) });
  else if (role === "river") openPicker({ kind: "river", index: state.river.findIndex((e) => e.box === b.index) });
  else if (role === "indicator") openPicker({ kind: "indicator" });
  else openPicker({ kind: "box", box: b.index });
}

function applyPick(tile) {
  const t = pickTarget;
  if (!t) return;
  if (t.kind === "other") { pickedElsewhere(t, tile); return; }
  if (t.kind === "hand") Object.assign(state.hand[t.index], { tile, fixed: true, doubtful: false });
  else if (t.kind === "meld") state.melds[t.index].tile = tile;
  else if (t.kind === "river") Object.assign(state.river[t.index], { tile, fixed: true });
  else if (t.kind === "indicator") state.indicator.tile = tile;
  else if (t.kind === "box") { state.removed.delete(t.box); state.hand.push({ tile, box: t.box, fixed: true }); }
  else if (t.kind === "new") state.hand.push({ tile, box: null, fixed: true });
  else if (t.kind === "newmeld") state.melds.push({ type: "pong", tile, boxes: [] });
  closePicker();
}

function removePicked() {
  const t = pickTarget;
  if (t.kind === "other") { pickedElsewhere(t, "remove"); return; }
  if (t.kind === "hand") {
    const [e] = state.hand.splice(t.index, 1);
    if (e.box != null) state.removed.add(e.box);
  } else if (t.kind === "meld") state.melds.splice(t.index, 1);
  else if (t.kind === "river") state.river.splice(t.index, 1);
  else if (t.kind === "indicator") state.indicator = null;
  closePicker();
}

// A tile chosen for another screen: its answer, and none of the scorer's own tiles changed.
function pickedElsewhere(target, choice) {
  pickTarget = null;
  $("picker").close();
  target.resolve(choice);
}

function closePicker() {
  $("picker").close();
  pickTarget = null;
  showRetake([]); // the player fixed what the photo got wrong: the retake advice no longer applies
  changed();
}

function buildPicker() {
  const grid = $("picker-grid");
  for (const t of TILES) grid.append(tileChip(t, { onclick: () => applyPick(t) }));
  $("picker-back").addEventListener("click", () => applyPick(null));
  $("picker-remove").addEventListener("click", removePicked);
  for (const id of ["win-tile", "flipped"]) {
    for (const t of TILES) $(id).append(h("option", { value: t }, `${t} ${t[0]}${SUIT_ZH[t[1]]}`));
  }
}

// ------------------------------------------------------------------------------------------------ scoring

function changed() {
  render();
  rescore();
}

// The /v1/hand request for the current tiles, or a message saying what is missing.
function handRequest() {
  const tiles = state.hand.map((e) => e.tile);
  if (tiles.some((t) => !TILES.includes(t))) return [null, L("手牌里有一张没认出来：点它，选一张。", "A tile of the hand could not be read: tap it and choose.")];
  if (state.melds.some((m) => !m.tile)) {
    return [null, L("有个闷豆扣着：点它，选它的牌。", "A 闷豆 (concealed kong) lies face down: tap it and choose its tile.")];
  }
  const count = handCount();
  let win = $("win-tile").value || null;
  if (count === 14) {
    win = win || tiles[tiles.length - 1];
    const at = tiles.lastIndexOf(win);
    if (at < 0) return [null, L(`胡的牌 ${win} 不在手牌里。`, `The winning tile ${win} is not in the hand.`)];
    tiles.splice(at, 1);
  } else if (count !== 13) {
    return [null, L(`${count} 张（手里的 + 每组 3 张）：一手牌 13 张（等牌）或 14 张（胡了）。点“+ 牌”补上漏的，或点一张去掉。`,
                    `${count} tiles (concealed + 3 per meld): a hand has 13 (waiting) or 14 (won). ` +
                    "Tap ＋ tile to add a missing one, or tap a tile to remove it.")];
  }
  const flipped = $("flipped").value || (state.indicator && TILES.includes(state.indicator.tile) ? state.indicator.tile : null);
  return [{
    ...context(), concealed: toText(tiles), melds: state.melds.map((m) => ({ type: m.type, tile: m.tile })),
    win_tile: win, flipped, seen: state.river.map((e) => e.tile).filter((t) => TILES.includes(t)),
  }, null];
}

async function rescore() {
  const [req, problem] = handRequest();
  const seq = ++state.seq;
  if (!req) { renderResult(null, problem); return; }
  try {
    const [ok, data] = await postJSON("/v1/hand", req);
    if (seq !== state.seq) return;
    if (ok) renderResult(data, null);
    else renderResult(null, data.error ? data.error.message : L("服务器不接受这手牌。", "The server refused this hand."));
  } catch (err) {
    if (seq === state.seq) renderResult(null, noAnswer(err));
  }
}

function typeLabel(t) {
  return L(t.name_zh, `${t.name_zh} ${t.name_en}`);
}

// On a phone the score is a screen below the photo: bring it into view after a photo or a typed hand (not
// while the photo is a table seat's, whose tiles are checked on the photo and then used for the round).
function resultInView() {
  if (!state.table) $("result").scrollIntoView({ block: "start", behavior: "instant" });
}

function renderResult(a, problem, assumptions = []) {
  const body = $("result-body");
  body.replaceChildren();
  body.dataset.state = a ? a.status : "error";
  if (problem) body.append(h("p", { class: "error", id: "score-error" }, problem));
  if (!a) return;
  if (a.status === "win" && !a.allowed) {
    // 胡牌通行证: the hand is complete but may not be taken on a discard. One verdict, with why, and what
    // would make it a win, instead of a fan count that is never paid.
    const reason = a.discard_win_reason.replace(/^not allowed:\s*/, "");
    body.append(L("不能胡", "不能胡 no win on this discard", "p", { class: "headline refused", id: "verdict" }),
                h("p", { id: "verdict-why" }, L(`为什么：${reason}。`, `Why: ${reason}. `),
                  h("span", { id: "hand-type" }, typeLabel(a.hand_type)),
                  L(`（${a.hand_type.fan} 番）只能自摸胡，或者有豆才能胡。`,
                    ` (${a.hand_type.fan} 番 fan) only wins by 自摸 self-draw, or with a 豆 kong.`)),
                L("这一张打出来不付钱", "nothing is paid on this discard", "p", { class: "muted", id: "fan" }));
  } else if (a.status === "win") {
    body.append(h("p", { class: "headline", id: "hand-type" }, typeLabel(a.hand_type)),
                h("p", { class: "fan", id: "fan" }, h("b", {}, a.hand_type.fan), L(" 番 · 胡牌分 W = ", " 番 fan · win value W = "),
                  h("b", {}, a.win_value)));
  } else if (a.status === "not_a_win") {
    body.append(L("不成牌", "不成牌 not a win", "p", { class: "headline", id: "hand-type" }),
                h("p", { class: "error" }, a.reason));
  } else if (a.status === "ready") {
    body.append(L("叫牌", "叫牌 ready (waiting)", "p", { class: "headline", id: "hand-type" }),
                h("p", { class: "fan", id: "fan" }, L("最多 ", "best "), a.best_hand_type ? typeLabel(a.best_hand_type) : "",
                  " ", h("b", {}, a.best_fan), L(" 番", " 番 fan")));
  } else {
    body.append(L("未叫牌", "未叫牌 not ready", "p", { class: "headline", id: "hand-type" }));
  }
  if (a.waits.length) {
    body.append(a.status === "win" ? L("胡之前听的牌", "Waits before the win 听牌", "h3") : L("听牌", "Waits 听牌", "h3"),
      h("table", { id: "waits" },
        h("tr", {}, L("牌", "tile", "th"), L("牌型", "type", "th"), L("番", "fan", "th"), L("自摸 W", "自摸 self-drawn W", "th"),
          L("点炮", "点炮 discard", "th"), L("剩", "left", "th")),
        a.waits.map((w) => h("tr", {}, h("td", {}, tileChip(w.tile)), h("td", {}, typeLabel(w.hand_type)),
          h("td", {}, w.hand_type.fan), h("td", {}, w.self_drawn_value),
          h("td", {}, w.discard_win_allowed ? "✓" : L("✗ 没豆", "✗ no 豆")),
          h("td", {}, L(`剩 ${w.copies_left}`, `${w.copies_left} left`))))));
  }
  if (a.decompositions.length) {
    body.append(L("分组", "Reading 分组", "h3"), h("div", { class: "groups" }, a.decompositions[0].map((g) => h("span", {}, g))));
  }
  if (a.chickens && a.chickens.tiles.length) {
    const chickens = `${a.chickens.tiles.map((c) => `${c.tile}×${c.count}`).join(", ")} = ${a.chickens.total}`;
    body.append(L(`鸡：${chickens}`, `鸡 chickens: ${chickens}`, "p"));
  }
  if (assumptions.length) body.append(h("ul", { class: "lines muted", lang: "en" }, assumptions.map((s) => h("li", {}, s))));
  body.append(h("details", { open: true }, L("说明", "Why 说明", "summary"),
                h("ul", { class: "lines", id: "explanation", lang: "en" }, a.explanation.map((s) => h("li", {}, s)))));
}

// ----------------------------------------------------------------------------------------- photo upload

async function downscale(source, width, height, maxSide = MAX_SIDE) {
  const scale = Math.min(1, maxSide / Math.max(width, height));
  const canvas = document.createElement("canvas");
  canvas.width = Math.round(width * scale);
  canvas.height = Math.round(height * scale);
  canvas.getContext("2d").drawImage(source, 0, 0, canvas.width, canvas.height);
  return new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", 0.9));
}

function showPhoto(blob, size) {
  if (state.photo) URL.revokeObjectURL(state.photo.url);
  state.photo = { url: URL.createObjectURL(blob), width: size.width, height: size.height };
  $("photo-img").src = state.photo.url;
  $("photo").hidden = false;
}

// The previous photo's boxes, tiles and advice do not belong to this attempt: clear them with the message.
function failedUpload(message) {
  clearPhoto();
  Object.assign(state, { hand: [], melds: [], river: [], indicator: null });
  render();
  renderResult(null, null);
  setStatus(message, true);
}

// A chosen photo as it is sent: upright and scaled down; a format the browser cannot draw (e.g. HEIC) is sent
// as is, and the server says what it accepts.
export async function uploadBlob(file, maxSide = MAX_SIDE) {
  try {
    const bitmap = await createImageBitmap(file, { imageOrientation: "from-image" });
    return await downscale(bitmap, bitmap.width, bitmap.height, maxSide);
  } catch {
    return file;
  }
}

async function onFile(file) {
  if (!file) return;
  setStatus(L("正在认照片……", "Reading the photo…"));
  const blob = await uploadBlob(file);
  const form = new FormData();
  form.append("image", blob, "photo.jpg");
  const ctx = context();
  for (const [k, v] of Object.entries(ctx)) form.append(k, String(v));
  if ($("win-tile").value) form.append("win_tile", $("win-tile").value);
  if ($("flipped").value) form.append("flipped", $("flipped").value);
  form.append("annotate", "false"); // the page draws its own boxes
  if (state.table) form.append("table", state.table);
  const seq = ++state.seq;
  try {
    const res = await fetch("/v1/score", { method: "POST", body: form });
    const data = await res.json();
    if (seq !== state.seq) return;
    if (!res.ok) { failedUpload(data.error ? data.error.message : tr(`出错了（${res.status}）`, `Error ${res.status}`)); return; }
    showPhoto(blob, data.image);
    const foreign = loadReading(data);
    const found = data.tiles.length - foreign, seconds = data.seconds.toFixed(1);
    setStatus(h("span", {}, foreignNote(foreign), L(`${seconds} 秒找到 ${found} 张牌。`, `${found} tiles found in ${seconds} s.`),
                calibrationNote(data)));
    if (foreign) { changed(); return; } // the server scored the hand with them: score what is left
    render();
    renderResult(data.analysis, data.score_error && data.score_error.message, data.assumptions);
    resultInView();
  } catch (err) {
    failedUpload(L(`上传失败：${err.message}`, `Upload failed: ${err.message}`));
  }
}

// ------------------------------------------------------------------------------------------ live camera

const live = { stream: null, timer: null, busy: false, lastKey: "", stable: 0 };

async function startLive() {
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    setStatus(L("实时看牌要 HTTPS（或 localhost）和允许用相机的浏览器；请用“拍照或选照片”。",
                "The live camera needs HTTPS (or localhost) and a browser that allows it; use “Take or upload photo”."), true);
    return;
  }
  try {
    live.stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment", width: { ideal: 1280 } },
                                                             audio: false });
  } catch (err) {
    setStatus(L(`用不了相机：${err.message}`, `Camera not available: ${err.message}`), true);
    return;
  }
  $("video").srcObject = live.stream;
  $("live").hidden = false;
  Object.assign(live, { lastKey: "", stable: 0, busy: false });
  live.timer = setInterval(liveTick, LIVE_EVERY_MS);
}

function stopLive() {
  clearInterval(live.timer);
  if (live.stream) live.stream.getTracks().forEach((t) => t.stop());
  live.stream = null;
  $("live").hidden = true;
}

async function liveTick() {
  const video = $("video");
  if (live.busy || video.readyState < 2) return; // drop frames rather than queue them
  live.busy = true;
  try {
    const blob = await downscale(video, video.videoWidth, video.videoHeight);
    const form = new FormData();
    form.append("image", blob, "frame.jpg");
    if (state.table) form.append("table", state.table);
    const res = await fetch("/v1/read", { method: "POST", body: form });
    const data = await res.json();
    if (!live.stream) return;
    if (!res.ok) { $("live-status").textContent = data.error ? data.error.message : tr(`出错了（${res.status}）`, `Error ${res.status}`); return; }
    const key = JSON.stringify([data.hand.concealed_tiles, data.hand.melds.map((m) => [m.type, m.tile])]);
    const legal = data.hand.count === 13 || data.hand.count === 14;
    live.stable = legal && key === live.lastKey ? live.stable + 1 : legal ? 1 : 0;
    live.lastKey = key;
    $("live-status").textContent = legal
      ? tr(`认出 ${data.hand.concealed || "…"} —— 稳定 ${live.stable}/${LIVE_STABLE}`,
           `Reading ${data.hand.concealed || "…"} — steady ${live.stable}/${LIVE_STABLE}`)
      : (data.retake[0] || { message: tr("把手机对着牌……", "Hold the phone over the tiles…") }).message;
    if (live.stable >= LIVE_STABLE) {
      stopLive();
      showPhoto(blob, data.image);
      loadReading(data);
      changed();
      setStatus(L("读数稳定：已定格。点一张牌可以改。", "Steady reading: frozen. Tap a tile to correct it."));
    }
  } catch (err) {
    $("live-status").replaceChildren(noAnswer(err));
  } finally {
    live.busy = false;
  }
}

// ------------------------------------------------------------------------------------------------ wiring

// "pong:5m", "pong5m", "碰5m" → {type, tile}; null when the token is not a meld.
const MELD_WORDS = { 碰: "pong", 杠: "kong", 点豆: "kong", 转弯豆: "added_kong", 闷豆: "concealed_kong" };
function parseMeld(token) {
  const m = /^([a-z_]+|碰|杠|点豆|转弯豆|闷豆):?([1-9][mps])$/i.exec(token);
  if (!m) return null;
  const type = MELD_WORDS[m[1]] || m[1].toLowerCase();
  return type in MELD_TYPES ? { type, tile: m[2].toLowerCase(), boxes: [] } : null;
}

// The typed hand goes to the server as typed (only normalised): its message says what is wrong (an honor tile,
// a fifth copy, a rank without a suit, a count that is not 13 or 14), and the tiles on screen change only once
// the server takes the hand.
async function scoreTypedHand() {
  setStatus(""); // the last photo's or hand's status does not describe this attempt
  const text = normalise($("hand-text").value);
  const melds = [];
  for (const token of normalise($("meld-text").value.replace(/\s+/g, " ")).split(" ").filter(Boolean)) {
    const meld = parseMeld(token);
    if (!meld) {
      renderResult(null, L(`“${token}”这一组：写类型和牌，比如 碰5m、杠3s，或 pong:5m、kong:3s、added_kong:7p、concealed_kong:9s。`,
                           `Meld “${token}”: write the type and the tile, e.g. pong:5m, kong:3s, added_kong:7p or ` +
                           "concealed_kong:9s (碰5m, 杠3s also work)."));
      return;
    }
    melds.push(meld);
  }
  const tiles = fromText(text);
  const req = { ...context(), concealed: text, melds: melds.map((m) => ({ type: m.type, tile: m.tile })),
                win_tile: null, flipped: $("flipped").value || null };
  if (tiles && tiles.every((t) => TILES.includes(t)) && tiles.length + 3 * melds.length === 14) {
    req.win_tile = $("win-tile").value || tiles[tiles.length - 1];
    const at = tiles.lastIndexOf(req.win_tile);
    if (at >= 0) req.concealed = toText(tiles.filter((_, i) => i !== at));
  }
  const seq = ++state.seq;
  let ok, data;
  try {
    [ok, data] = await postJSON("/v1/hand", req);
  } catch (err) {
    if (seq === state.seq) renderResult(null, noAnswer(err));
    return;
  }
  if (seq !== state.seq) return;
  if (!ok) { renderResult(null, data.error ? data.error.message : L("服务器不接受这手牌。", "The server refused this hand.")); resultInView(); return; }
  // Taken: the typed tiles replace the photo's reading (and the photo itself).
  clearPhoto();
  state.hand = tiles.map((tile) => ({ tile, box: null, fixed: true }));
  state.melds = melds;
  state.river = [];
  state.indicator = null;
  render();
  renderResult(data, null);
  setStatus(L("打字输入的手牌已算好。", "Typed hand scored."));
  resultInView();
}

export function initScorer() {
  buildPicker();
  $("file").addEventListener("change", (ev) => {
    onFile(ev.target.files[0]);
    ev.target.value = ""; // so that choosing the same photo again (another seat, a retry) is read again
  });
  $("live-start").addEventListener("click", startLive);
  $("live-stop").addEventListener("click", stopLive);
  $("add-tile").addEventListener("click", () => openPicker({ kind: "new" }));
  $("add-meld").addEventListener("click", () => openPicker({ kind: "newmeld" }));
  $("text-score").addEventListener("click", scoreTypedHand);
  $("picker").addEventListener("close", () => {
    if (pickTarget && pickTarget.kind === "other") pickTarget.resolve(undefined); // cancelled
    pickTarget = null;
  });
  // Flags that only make sense with one way of winning switch it for the player.
  $("kong-draw").addEventListener("change", (ev) => { if (ev.target.checked) setHow("self"); });
  for (const id of ["hot-discard", "robbed-kong"]) {
    $(id).addEventListener("change", (ev) => { if (ev.target.checked) setHow("discard"); });
  }
  document.querySelectorAll("input[name=how]").forEach((r) => r.addEventListener("change", () => {
    if (r.value === "discard" && r.checked) $("kong-draw").checked = false;
    if (r.value === "self" && r.checked) { $("hot-discard").checked = false; $("robbed-kong").checked = false; }
  }));
  for (const id of ["rules", "win-tile", "flipped", "bao-ting", "kong-draw", "hot-discard", "robbed-kong",
                    "discarder-bao-ting"]) {
    $(id).addEventListener("change", () => { if (handCount()) changed(); });
  }
  document.querySelectorAll("input[name=how]").forEach((r) => r.addEventListener("change", () => {
    if (handCount()) changed();
  }));
}


// ------------------------------------------------------------------------------- for the table screen

// The scorer as the table screen uses it: read a seat's photo with the table's calibration, hand over the
// corrected reading, start afresh for the next round. The table screen uses nothing else of it.

export function useTableCalibration(tableId) {
  state.table = tableId;
}

// A seat's photo, judged the way the round was won (自摸 or on a discard).
export function photoForSeat(selfDrawn) {
  setHow(selfDrawn ? "self" : "discard");
  $("file").click();
}

// The reading as corrected: {problem} while it cannot be used, else the concealed tiles without the winning tile
// (a 14-tile hand's, as chosen or the last), the melds, the river and the 翻鸡 tile when the photo showed one.
export function seatReading() {
  const count = handCount();
  if (!count) return { problem: L("照片还没认完：稍等。", "The photo is not read yet: a moment.") };
  const tiles = state.hand.map((e) => e.tile);
  if (tiles.some((t) => !TILES.includes(t)) || state.melds.some((m) => !m.tile)) {
    return { problem: L("这手牌还有一张没认出来：先在照片上点它，选一张。", "A tile of that hand is still unread: tap it on the photo and choose it first.") };
  }
  let win = null;
  if (count === 14) {
    win = $("win-tile").value || tiles[tiles.length - 1];
    tiles.splice(tiles.lastIndexOf(win), 1);
  }
  const indicator = $("flipped").value || (state.indicator && TILES.includes(state.indicator.tile) ? state.indicator.tile : "");
  return { count, concealed: toText(tiles), win, melds: state.melds.map((m) => ({ type: m.type, tile: m.tile })),
           river: toText(state.river.map((e) => e.tile).filter((t) => TILES.includes(t))), flipped: indicator || null };
}

// The scorer's tile picker for another screen (the table screen's photo of the table): resolves with the tile
// chosen, null for "face down" (where back is offered), "remove" (where removable), undefined when cancelled.
// where: [zh, en] of the tile being corrected; now: the tile as read.
export function pickTile({ where, now = null, back = false, removable = false }) {
  return new Promise((resolve) => openPicker({ kind: "other", where, now, back, removable, resolve }));
}

// The saved round's photo and tiles do not belong to the next round.
export function resetScorer() {
  clearPhoto();
  Object.assign(state, { hand: [], melds: [], river: [], indicator: null });
  render();
  $("result-body").replaceChildren(L("拍一张手牌，或者打字输入。", "Take a photo or type a hand.", "p", { class: "muted" }));
  setStatus("");
}
