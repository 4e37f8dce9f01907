// The table screen's "拍桌面 Photo of the table": one photo of the whole table at the end of a round →
// POST /v1/read-table → the round form filled (four hands and melds, rivers, 翻鸡 the flipped tile, the winner
// guess for the players to confirm, 自摸 or who discarded). The photo is shown with each seat's name and colour
// over it; every tile is corrected by a tap (the scorer's picker), and each correction fills the form again.
//
// Seats in the answer are the photographer's: 0 = the bottom of the photo, then in the order of play 1 right,
// 2 top, 3 left. The seating chart (who sat at the bottom, kept per table on this device) turns them into the
// table's players: photo seat k is player (bottom + k) % 4, since the players are entered in the order of play.
import { $, h, svg, TILES, tileChip, toText } from "./dom.js";
import { errorText } from "./api.js";
import { photoBottom, setPhotoBottom } from "./device.js";
import { createStore } from "./store.js";
import { L, lang, tr } from "./i18n.js";
import { pickTile, uploadBlob } from "./scorer.js";

// A table photo holds 100–150 small tiles: more pixels are sent than for one hand (scorer.js sends 1600).
const TABLE_MAX_SIDE = 3200;
const SEATS = [0, 1, 2, 3];
const SIDES = [["下", "bottom"], ["右", "right"], ["上", "top"], ["左", "left"]]; // photo seats 0..3
// The owner's left → right along the photo for each photo seat (seat 1 on the right faces left: its left is the
// photo's bottom).
const RIGHTWARD = [[1, 0], [0, -1], [-1, 0], [0, 1]];
// What the server's retake codes mean, in Chinese (its English message is shown in English).
const RETAKE_ZH = {
  too_many_copies: "同一种牌读出了超过 4 张：照片这样读不可能。点错的那张改正，或者重拍。",
  unplaced_tiles: "这一边有牌没放进手牌、碰杠或河里（一堆牌，或河太乱）：核对这一家的河。",
  seat_not_found: "没找到手牌：拍整张桌子，每家的牌都摊开。",
  blurry: "照片有点糊：拿稳再拍。",
  glare: "有反光：换个角度再拍。",
  ambiguous_layout: "手牌、碰杠和河挨得太近，分组不清楚：核对这一家，下次各组之间留点空。",
  count_mismatch: "这一家的张数不对：核对它的手牌。",
  tiles_cut_off: "有牌在照片边上被切掉了：退后一点再拍。",
};

// "seat 2: …", "seat(s) 1, 3": the photo's seat numbers in a server message (turned into the players' names).
const SEAT_WORDS = /\bseat(?:\(s\))? (\d(?:, \d)*)\b/g;

// The photo being corrected. seats: the answer's four seats (photo seats), their lists corrected in place (null:
// a tile removed); link: detection index → where it went ({seat, role, index} or {role: "flipped"}).
const photoStore = createStore({
  busy: false, status: null, error: false, photo: null, reading: null, seats: [], flipped: null, heap: [],
  link: [], fixed: new Set(), doubtful: new Set(), winner: null, how: null, discarder: null, zoom: 1,
});
const ZOOMS = [1, 2, 4]; // the photo's width: a phone shows a table's tiles a few pixels wide, too small to tap

let host = null; // what the table screen lends: {table(), names(), colors, fill(round)}

const player = (k, bottom) => (bottom + k) % 4;
const bottomOf = () => {
  const t = host.table();
  return (t && photoBottom(t.id)) ?? 0;
};

// ------------------------------------------------------------------------------------- the answer, linked

// Each box of a seat's hand, river and melds to the entry of the seat's list it stands for: the boxes in the
// owner's left-to-right order, each entry taking the first box left with its tile (the same tiles are
// interchangeable, so a duplicate matched to its twin changes nothing).
function linkBoxes(reading) {
  const link = reading.detections.map(() => null);
  const centre = (d) => [(d.box[0] + d.box[2]) / 2, (d.box[1] + d.box[3]) / 2];
  const along = (seat) => (i) => {
    const [x, y] = centre(reading.detections[i]);
    return x * RIGHTWARD[seat][0] + y * RIGHTWARD[seat][1];
  };
  reading.detections.forEach((d, i) => { if (d.role === "flipped") link[i] = { role: "flipped" }; });
  for (const seat of reading.seats) {
    const k = seat.seat;
    const boxes = (role) => reading.detections.map((d, i) => i)
      .filter((i) => reading.detections[i].seat === k && reading.detections[i].role === role)
      .sort((a, b) => along(k)(a) - along(k)(b));
    for (const [role, list] of [["hand", seat.concealed], ["river", seat.river]]) {
      const free = boxes(role);
      list.forEach((tile, index) => {
        const at = free.findIndex((i) => reading.detections[i].tile === tile);
        if (at >= 0) link[free.splice(at, 1)[0]] = { seat: k, role, index };
      });
    }
    // A meld's face-up boxes name it; its face-down ones belong to the nearest face-up box of a meld, else to a
    // meld read face down.
    const meldBoxes = boxes("meld");
    const faceUp = meldBoxes.filter((i) => reading.detections[i].tile !== "back");
    for (const i of faceUp) {
      const index = seat.melds.findIndex((m) => m.tile === reading.detections[i].tile);
      if (index >= 0) link[i] = { seat: k, role: "meld", index };
    }
    for (const i of meldBoxes.filter((b) => !faceUp.includes(b))) {
      const [x, y] = centre(reading.detections[i]);
      const near = faceUp.filter((j) => link[j]).map((j) => {
        const [u, v] = centre(reading.detections[j]);
        return [Math.hypot(u - x, v - y), j];
      }).sort((a, b) => a[0] - b[0])[0];
      const index = near ? link[near[1]].index : seat.melds.findIndex((m) => m.tile == null);
      if (index >= 0) link[i] = { seat: k, role: "meld", index };
    }
  }
  return link;
}

function loadReading(reading, photo) {
  const seats = reading.seats.map((s) => ({
    seat: s.seat, concealed: [...s.concealed], river: [...s.river], melds: s.melds.map((m) => ({ ...m })),
    separated: s.river_separated !== false, // absent: the server does not tell, taken as separated
  }));
  // Doubtful: the seats' uncertain tiles, and the copies of a kind read too often.
  const doubtful = new Set([...reading.seats.flatMap((s) => s.doubtful.flatMap((d) => d.boxes)),
                            ...reading.retake.filter((r) => r.code === "too_many_copies").flatMap((r) => r.boxes)]);
  photoStore.set({ photo, reading, seats, flipped: reading.flipped, heap: reading.heap || [], link: linkBoxes(reading),
                   fixed: new Set(), doubtful, winner: reading.winner, how: null, discarder: null, busy: false });
}

// The tile a box stands for now (after corrections): its entry's, else as read.
function tileOf(st, i) {
  const where = st.link[i];
  if (!where) return st.reading.detections[i].tile;
  if (where.role === "flipped") return st.flipped || "";
  const seat = st.seats[where.seat];
  if (where.role === "meld") {
    const m = seat.melds[where.index];
    return m && m.tile && st.reading.detections[i].tile !== "back" ? m.tile : "back";
  }
  return seat[where.role === "hand" ? "concealed" : "river"][where.index];
}

// ------------------------------------------------------------------------------------------ the round

// The round form's values from the photo as corrected: per player (seating chart) the tiles as typed (the winner's
// without the winning tile, the last one laid), melds and river; who won and how; the flipped tile. Also what the
// players still have to settle themselves (a tile unread, a meld face down, a winner whose hand is not 14).
function roundFromPhoto(st, bottom) {
  const seats = [];
  const problems = [];
  const name = (k) => host.names()[player(k, bottom)];
  let winTile = null;
  for (const s of st.seats) {
    let hand = s.concealed.filter((t) => t != null);
    const melds = s.melds.filter((m) => m != null);
    const count = hand.length + 3 * melds.length;
    if (st.winner === s.seat) {
      const last = hand[hand.length - 1];
      if (count === 14 && TILES.includes(last)) { winTile = last; hand = hand.slice(0, -1); }
      else problems.push([`${name(s.seat)} 胡了，但照片里是 ${count} 张（手里的 + 每组 3 张）：核对，再选胡的牌。`,
        `${name(s.seat)} won, but the photo shows ${count} tiles (concealed + 3 per meld): check them and choose the winning tile.`]);
    }
    const unread = hand.filter((t) => !TILES.includes(t)).length;
    if (unread) problems.push([`${name(s.seat)}：${unread} 张没认出来：在照片上点它，选一张。`,
      `${name(s.seat)}: ${unread} tile${unread > 1 ? "s" : ""} not read: tap it on the photo and choose.`]);
    if (melds.some((m) => !m.tile)) problems.push([`${name(s.seat)}：一个闷豆扣着：点它，选它的牌。`,
      `${name(s.seat)}: a 闷豆 (concealed kong) lies face down: tap it and choose its tile.`]);
    seats[player(s.seat, bottom)] = {
      tiles: toText(hand.filter((t) => TILES.includes(t))),
      melds: melds.map((m) => ({ type: m.type, tile: m.tile || "" })),
      river: toText(s.river.filter((t) => TILES.includes(t))),
    };
  }
  const won = st.winner != null;
  return { seats, problems, winTile, flipped: st.flipped && TILES.includes(st.flipped) ? st.flipped : "",
           how: won ? (st.how === "discard" && st.discarder != null ? "discard" : "self") : "draw",
           winner: won ? String(player(st.winner, bottom)) : null,
           discarder: won && st.how === "discard" && st.discarder != null ? String(st.discarder) : null };
}

function fillForm() {
  const st = photoStore.get();
  if (!st.reading) return;
  host.fill(roundFromPhoto(st, bottomOf()));
}

// ------------------------------------------------------------------------------------------ the photo

async function readTablePhoto(file) {
  if (!file || !host.table()) return;
  photoStore.set({ busy: true, error: false, status: ["正在认整张桌子……", "Reading the whole table…"] });
  const started = performance.now();
  const blob = await uploadBlob(file, TABLE_MAX_SIDE);
  const form = new FormData();
  form.append("image", blob, "table.jpg");
  let res, data;
  try {
    res = await fetch("/v1/read-table", { method: "POST", body: form });
    data = await res.json().catch(() => null);
  } catch (err) {
    photoStore.set({ busy: false, error: true, status: [`连不上服务器（${err.message}）：下面的表照样能填。`,
      `No answer from the server (${err.message}): the form below can still be typed.`] });
    return;
  }
  if (!res.ok || !data || !Array.isArray(data.seats)) {
    const why = errorText({ status: res.status, data });
    photoStore.set({ busy: false, error: true, status: [`这张照片没认成：${why} 下面的表照样能填。`,
      `The photo was not read: ${why} The form below can still be typed.`] });
    return;
  }
  const n = seatTiles(data);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  await showReading(data, blob, [`${seconds} 秒认出四家的 ${n} 张牌，表已填好：核对，点错的牌改正。`,
    `${n} tiles of the four seats read in ${seconds} s; the form is filled: check it, tap a wrong tile to correct it.`]);
}

const seatTiles = (reading) => reading.detections.filter((d) => d.seat != null).length;

// A read table (the answer of /v1/read-table) over the picture it was read on: drawn, linked, the form filled.
async function showReading(reading, blob, status) {
  const photo = await shownPhoto(blob);
  loadReading(reading, photo);
  photoStore.set({ status });
  fillForm();
  $("tp-view").scrollIntoView({ block: "start", behavior: "instant" });
}

// The round a camera over the table proposes (proposal.js): taken exactly as a photo of the table, its frame (a
// JPEG in base64, the boxes in its pixels) in place of the photo.
export async function fillFromProposal(proposal) {
  if (!host.table()) return;
  const blob = proposal.frame ? jpegBlob(proposal.frame) : await blankPicture(proposal.table);
  const n = seatTiles(proposal.table);
  await showReading(proposal.table, blob, [`相机读到四家的 ${n} 张牌，表已填好：核对，点错的牌改正。`,
    `The camera read ${n} tiles of the four seats; the form is filled: check it, tap a wrong tile to correct it.`]);
}

function jpegBlob(base64) {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  return new Blob([bytes], { type: "image/jpeg" });
}

// No frame was sent: a plain picture as large as the boxes reach, for the boxes to be drawn and tapped on.
function blankPicture(reading) {
  const canvas = document.createElement("canvas");
  canvas.width = Math.ceil(Math.max(100, ...reading.detections.map((d) => d.box[2])));
  canvas.height = Math.ceil(Math.max(100, ...reading.detections.map((d) => d.box[3])));
  const g = canvas.getContext("2d");
  g.fillStyle = "#2e5d3a";
  g.fillRect(0, 0, canvas.width, canvas.height);
  return new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
}

// The photo as sent (its pixels are the boxes'): a URL and its size.
async function shownPhoto(blob) {
  const old = photoStore.get().photo;
  if (old) URL.revokeObjectURL(old.url);
  const url = URL.createObjectURL(blob);
  const img = new Image();
  img.src = url;
  try {
    await img.decode();
  } catch {
    // a format this browser cannot draw: the boxes still show, over the photo's own size unknown
  }
  return { url, width: img.naturalWidth || 1000, height: img.naturalHeight || 1000 };
}

// ------------------------------------------------------------------------------------------ corrections

const ROLE_WORDS = { hand: ["的手牌", "'s hand"], river: ["的河", "'s river"], meld: ["的碰/杠", "'s meld"] };

async function correct(where) {
  const st = photoStore.get();
  const names = host.names();
  const k = where.seat;
  const who = k == null ? null : names[player(k, bottomOf())];
  let now;
  if (where.role === "flipped") now = st.flipped;
  else if (where.role === "meld") now = st.seats[k].melds[where.index].tile || "back";
  else now = st.seats[k][where.role === "hand" ? "concealed" : "river"][where.index];
  const words = where.role === "flipped" ? ["翻鸡", "翻鸡 flipped tile"]
    : [`${who}${ROLE_WORDS[where.role][0]}`, `${who}${ROLE_WORDS[where.role][1]}`];
  const choice = await pickTile({ where: words, now: now || null, back: where.role === "meld",
                                  removable: where.role !== "meld" });
  if (choice === undefined) return; // cancelled
  const tile = choice === "remove" ? null : choice;
  const seats = st.seats.map((s) => ({ ...s, concealed: [...s.concealed], river: [...s.river], melds: [...s.melds] }));
  let flipped = st.flipped;
  if (where.role === "flipped") flipped = tile;
  else if (where.role === "meld") seats[k].melds[where.index] = { ...seats[k].melds[where.index], tile };
  else seats[k][where.role === "hand" ? "concealed" : "river"][where.index] = tile;
  // The boxes of that entry are now the players' word: no longer doubtful.
  const boxes = st.link.map((l, i) => [l, i]).filter(([l]) => l && l.role === where.role && l.seat === where.seat
    && (where.role === "flipped" || l.index === where.index)).map(([, i]) => i);
  const fixed = new Set([...st.fixed, ...boxes]);
  const doubtful = new Set([...st.doubtful].filter((i) => !boxes.includes(i)));
  photoStore.set({ seats, flipped, fixed, doubtful });
  fillForm();
}

function chooseWinner(winner) {
  const st = photoStore.get();
  const winnerPlayer = winner == null ? null : player(winner, bottomOf());
  photoStore.set({ winner, discarder: st.discarder === winnerPlayer ? null : st.discarder });
  fillForm();
}

function chooseHow(how, discarder = null) {
  photoStore.set({ how, discarder });
  fillForm();
}

function chooseBottom(value) {
  const t = host.table();
  if (!t) return;
  setPhotoBottom(t.id, Number(value));
  const st = photoStore.get();
  photoStore.set({ discarder: null, how: st.how === "discard" ? null : st.how }); // who discarded is asked again
  fillForm();
}

// ------------------------------------------------------------------------------------------ drawing

function render(st) {
  if (!host) return;
  const t = host.table();
  const names = host.names();
  const bottom = bottomOf();
  $("tp-take").classList.toggle("busy", st.busy);
  $("tp-file").disabled = st.busy;
  const select = $("tp-bottom");
  select.replaceChildren(...SEATS.map((s) => h("option", { value: String(s) }, names[s])));
  select.value = String(bottom);
  const order = SEATS.slice(1).map((k) => tr(`${SIDES[k][0]} ${names[player(k, bottom)]}`,
                                             `${SIDES[k][1]} ${names[player(k, bottom)]}`));
  $("tp-seating-rest").textContent = tr(`按出牌顺序：${order.join("，")}`, `then in the order of play: ${order.join(", ")}`);
  $("tp-seating").hidden = !t;
  const status = $("tp-status");
  status.textContent = st.status ? (Array.isArray(st.status) ? tr(...st.status) : st.status) : "";
  status.classList.toggle("error", st.error);
  $("tp-view").hidden = !st.reading;
  if (!st.reading) return;
  if ($("tp-img").getAttribute("src") !== st.photo.url) $("tp-img").src = st.photo.url;
  $("tp-stage").style.width = `${100 * st.zoom}%`;
  const next = ZOOMS[(ZOOMS.indexOf(st.zoom) + 1) % ZOOMS.length];
  $("tp-zoom").replaceChildren(next > 1 ? L(`放大 ×${next}`, `Zoom ×${next}`) : L("缩回", "Fit"));
  $("tp-zoom").setAttribute("aria-pressed", String(st.zoom > 1));
  drawOverlay(st, bottom);
  drawTags(bottom);
  drawWinner(st, bottom);
  drawSeats(st, bottom);
  drawNotes(st, bottom);
}

function drawOverlay(st, bottom) {
  const overlay = $("tp-overlay");
  const { width, height } = st.photo;
  overlay.setAttribute("viewBox", `0 0 ${width} ${height}`);
  overlay.replaceChildren(...st.reading.detections.map((d, i) => {
    const [x1, y1, x2, y2] = d.box;
    const where = st.link[i];
    const role = d.role === "wall" ? "wall" : d.role === "flipped" ? "flipped" : d.seat == null ? "unassigned" : d.role;
    const tile = tileOf(st, i);
    const g = svg("g", { class: `box tp ${role}${st.doubtful.has(i) ? " doubtful" : ""}${st.fixed.has(i) ? " fixed" : ""}`
                                + `${tile == null ? " removed" : ""}`, "data-index": i });
    const rect = svg("rect", { x: x1, y: y1, width: x2 - x1, height: y2 - y1, rx: 2 });
    if (d.seat != null) rect.setAttribute("style", `stroke:${host.colors[player(d.seat, bottom)]}`);
    g.append(rect);
    if (role !== "wall") {
      const size = Math.max(8, Math.min(x2 - x1, y2 - y1) * 0.5);
      const text = svg("text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 + size * 0.35, "font-size": size, "text-anchor": "middle" });
      text.textContent = tile == null ? "✕" : tile === "back" ? "▇" : tile;
      g.append(text);
    }
    if (where) g.addEventListener("click", () => correct(where));
    return g;
  }));
}

// Each seat's name on its side of the photo, in its colour: a frame around the photo, so that no name hides a tile.
function drawTags(bottom) {
  const names = host.names();
  for (const k of SEATS) {
    const tag = $("tp-frame").querySelector(`.tp-tag.${SIDES[k][1]}`);
    tag.textContent = names[player(k, bottom)];
    tag.dataset.seat = player(k, bottom);
    tag.style.background = host.colors[player(k, bottom)];
  }
}

// Who won (the photo's guess, to confirm) and how: 自摸, or who discarded.
function drawWinner(st, bottom) {
  const names = host.names();
  const pressed = (on) => ({ "aria-pressed": String(on), class: `btn small${on ? " on" : ""}` });
  const guessed = st.reading.winner;
  const winners = SEATS.map((k) => h("button", { type: "button", ...pressed(st.winner === k), "data-winner": player(k, bottom),
                                                  onclick: () => chooseWinner(k) },
    names[player(k, bottom)], k === guessed ? L(" · 照片猜的", " · the photo's guess", "span", { class: "guess" }) : null));
  winners.sort((a, b) => Number(a.dataset.winner) - Number(b.dataset.winner));
  const rows = [h("div", { class: "row small tp-who" }, L("谁胡：", "Who won:", "b"), ...winners,
    h("button", { type: "button", ...pressed(st.winner == null), "data-winner": "none", onclick: () => chooseWinner(null) },
      L("没人胡（黄牌）", "nobody (黄牌 draw)")))];
  if (st.winner != null) {
    const w = player(st.winner, bottom);
    rows.push(h("div", { class: "row small tp-how" }, L("怎么胡：", "How:", "b"),
      h("button", { type: "button", ...pressed(st.how === "self"), "data-how": "self", onclick: () => chooseHow("self") },
        L("自摸", "自摸 self-drawn")),
      ...SEATS.filter((p) => p !== w).map((p) => h("button", { type: "button", ...pressed(st.how === "discard" && st.discarder === p),
        "data-discarder": p, onclick: () => chooseHow("discard", p) }, L(`${names[p]} 点炮`, `点炮 by ${names[p]}`)))));
    if (st.how == null) rows.push(L("请确认：自摸，还是谁点的炮？", "Please confirm: 自摸 self-drawn, or who discarded?", "p", { class: "hint warn-text" }));
  } else if (guessed == null) {
    rows.push(L("照片里没有哪一家正好成牌：选胡牌的人，或者黄牌。", "No seat's tiles make a complete hand in the photo: choose who won, or a draw.",
      "p", { class: "hint warn-text" }));
  }
  $("tp-winner").replaceChildren(...rows);
}

// Every seat's tiles as read, in the table's order, each tile a tap to correct (bigger than the boxes on a phone).
function drawSeats(st, bottom) {
  const names = host.names();
  const form = roundFromPhoto(st, bottom);
  const chip = (tile, where, boxes) => {
    const doubt = boxes.some((i) => st.doubtful.has(i));
    const fixed = boxes.some((i) => st.fixed.has(i));
    // The winner's last tile laid is the winning tile (ringed, as in the scorer).
    const seat = where.seat != null && st.seats[where.seat];
    const win = seat && where.role === "hand" && st.winner === where.seat && form.winTile
      && where.index === seat.concealed.findLastIndex((t) => t != null);
    return tileChip(tile == null ? "?" : tile, { class: `${doubt ? "doubtful" : ""} ${fixed ? "fixed" : ""} ${win ? "win" : ""}`,
                                                 onclick: () => correct(where) });
  };
  const boxesOf = (k, role, index) => st.link.map((l, i) => [l, i])
    .filter(([l]) => l && l.seat === k && l.role === role && l.index === index).map(([, i]) => i);
  const blocks = st.seats.map((s) => {
    const p = player(s.seat, bottom);
    const hand = s.concealed.map((t, i) => (t == null ? null : chip(t, { seat: s.seat, role: "hand", index: i }, boxesOf(s.seat, "hand", i))));
    const melds = s.melds.map((m, i) => h("span", { class: "meld" }, ...Array.from({ length: m.type === "pong" ? 3 : 4 },
      () => chip(m.tile || "back", { seat: s.seat, role: "meld", index: i }, boxesOf(s.seat, "meld", i)))));
    const river = s.river.map((t, i) => (t == null ? null : chip(t, { seat: s.seat, role: "river", index: i }, boxesOf(s.seat, "river", i))));
    return h("div", { class: "tp-seat", "data-seat": p, style: `border-color:${host.colors[p]}` },
      h("div", { class: "seat-head" }, h("span", { class: "swatch", style: `background:${host.colors[p]}` }),
        h("b", { class: "nowrap" }, names[p]), L(` 照片${SIDES[s.seat][0]}边`, ` ${SIDES[s.seat][1]} of the photo`, "span", { class: "muted" })),
      h("div", { class: "strip tp-hand", "aria-label": "concealed" }, ...hand, ...melds),
      h("div", { class: "strip tp-river", "aria-label": "river" }, L("河", "river", "span", { class: "muted river-label" }), ...river,
        s.separated ? null : L("分不开", "not separated", "span", { class: "warn-text" })));
  });
  blocks.sort((a, b) => Number(a.dataset.seat) - Number(b.dataset.seat));
  const flipped = st.reading.detections.findIndex((d) => d.role === "flipped");
  $("tp-seats").replaceChildren(...blocks, h("div", { class: "row small tp-flipped" }, L("翻鸡：", "翻鸡 flipped tile:", "b"),
    st.flipped ? chip(st.flipped, { role: "flipped" }, flipped >= 0 ? [flipped] : [])
      : L("照片里没有（黄牌或最后一张胡）", "none in the photo (a draw, or a win on the last tile)", "span", { class: "muted" })));
}

// What the players should know: the server's retake reasons (its seat numbers as names), rivers that could not be
// separated, the heap in the middle, tiles still uncertain, what the form still needs.
function drawNotes(st, bottom) {
  const names = host.names();
  const nameOf = (k) => names[player(Number(k), bottom)];
  const named = (text) => String(text).replace(SEAT_WORDS, (_, ks) => ks.split(", ").map(nameOf).join(", "));
  // In Chinese the code's own words, after the names of the seats the message names; the server's English words
  // as the line's title. The uncertain tiles are marked on the photo and counted once below, not once per seat.
  const notes = st.reading.retake.filter((r) => r.code !== "low_confidence").map((r) => {
    const seats = [...r.message.matchAll(SEAT_WORDS)].flatMap((m) => m[1].split(", ").map(nameOf));
    let zh = RETAKE_ZH[r.code] && `${seats.length ? `${seats.join("、")}：` : ""}${RETAKE_ZH[r.code]}`;
    const kinds = [...new Set(r.boxes.map((i) => st.reading.detections[i] && st.reading.detections[i].tile))];
    if (r.code === "too_many_copies" && kinds.length === 1 && TILES.includes(kinds[0])) {
      zh = `${kinds[0]} 读出了 ${r.boxes.length} 张，一副牌只有 4 张：点错的那张改正（虚线框），或者重拍。`;
    }
    const own = lang() === "zh" && zh; // else the server's English words, marked so
    return h("li", { "data-code": r.code, title: named(r.message), lang: own ? null : "en" }, own ? zh : named(r.message));
  });
  for (const s of st.seats.filter((x) => !x.separated)) {
    const who = names[player(s.seat, bottom)];
    notes.push(L(`${who} 的河分不开（牌打在中间一堆）：核对他的河，河里的幺鸡和八筒要算对。`,
      `${who}'s river could not be told apart (discards in a heap): check it, the 1s and 8p in it count.`, "li", { "data-code": "river_not_separated" }));
  }
  if (st.heap.length) {
    notes.push(h("li", { "data-code": "heap" }, L("中间一堆里认出、没分给谁的牌：", "Discards read in the heap, given to no seat: "),
      h("span", { class: "strip heap" }, ...st.heap.map((t) => tileChip(t, { class: "static" })))));
  }
  // 冲锋鸡 / 责任鸡 depend on who discarded the first 1s, which a photo cannot tell: point at the question.
  const ones = st.seats.filter((x) => x.river.includes("1s")).map((x) => names[player(x.seat, bottom)]);
  if (ones.length) {
    notes.push(L(`河里有幺鸡（${ones.join("、")}）：在下面选“第一张幺鸡谁打的”。`,
      `A 1s lies in the river of ${ones.join(", ")}: choose below who discarded the first 1s.`, "li", { "data-code": "first_1s" }));
  }
  // A 点豆 (open kong) is paid by who fed it, which a photo cannot tell either.
  const kongs = st.seats.filter((x) => x.melds.some((m) => m && m.type === "kong")).map((x) => names[player(x.seat, bottom)]);
  if (kongs.length) {
    notes.push(L(`${kongs.join("、")} 的杠（点豆）：在下面那一组选是谁打的。`,
      `The open kong (点豆) of ${kongs.join(", ")}: choose below who fed it.`, "li", { "data-code": "kong_from" }));
  }
  if (st.doubtful.size) {
    notes.push(L(`${st.doubtful.size} 张没把握（虚线框）：点它核对。`, `${st.doubtful.size} tile(s) uncertain (dashed boxes): tap to check.`,
      "li", { "data-code": "doubtful" }));
  }
  for (const p of roundFromPhoto(st, bottom).problems) notes.push(L(...p, "li", { "data-code": "form", class: "error" }));
  $("tp-notes").replaceChildren(...notes);
  $("tp-notes").hidden = !notes.length;
}

// ------------------------------------------------------------------------------------------ wiring

// The photo of the last round does not belong to the next one (a saved round, another table).
export function resetTablePhoto() {
  const old = photoStore.get().photo;
  if (old) URL.revokeObjectURL(old.url);
  photoStore.set({ busy: false, status: null, error: false, photo: null, reading: null, seats: [], heap: [], link: [],
                   fixed: new Set(), doubtful: new Set(), winner: null, how: null, discarder: null, zoom: 1 });
}

// Draw again (the table's names or its seating changed).
export const renderTablePhoto = () => photoStore.set({});

// host: {table() (the open table or null), names() (its four players), colors (one per player), fill(round)}.
export function initTablePhoto(lent) {
  host = lent;
  $("tp-file").addEventListener("change", (ev) => {
    readTablePhoto(ev.target.files[0]);
    ev.target.value = ""; // the same photo again is read again
  });
  $("tp-bottom").addEventListener("change", (ev) => chooseBottom(ev.target.value));
  $("tp-zoom").addEventListener("click", () => {
    const st = photoStore.get();
    photoStore.set({ zoom: ZOOMS[(ZOOMS.indexOf(st.zoom) + 1) % ZOOMS.length] });
  });
  photoStore.subscribe(render);
  document.addEventListener("langchange", renderTablePhoto);
}
