// The table screen: four players, their rules, every round with its settlement, totals, history and a chart,
// over /v1/tables (stored on the server) and /v1/settle, /v1/chajiao (previews). A player's tiles come typed
// or from a photo through the scorer above (app.js: its reading, corrections and state are reused as they are).
// /t/{view_id} opens the same screen read-only. The tables this device created or opened, their edit keys, the
// round being typed (a draft per table) and rounds saved offline live in the browser (device.js).
import { $, h, svg, MELD_TYPES, SUIT_ZH, TILES, normalise } from "./dom.js";
import { photoForSeat, resetScorer, seatReading, uploadBlob, useTableCalibration } from "./scorer.js";
import { api, authFor, errorCode, errorText } from "./api.js";
import { deviceProfiles, dropDraft, editKey, forgetTable, knownTables, lastPlayers, loadDraft, queued,
         rememberPlayers, rememberTable, saveDeviceProfile, saveDraft, setQueued, storeKey } from "./device.js";
import { createStore } from "./store.js";
import { L, tr } from "./i18n.js";
import { initProposal } from "./proposal.js";
import { initTablePhoto, renderTablePhoto, resetTablePhoto } from "./tablephoto.js";
import { qrcode } from "./vendor/qrcode-generator.mjs";

const SEATS = [0, 1, 2, 3];
const COLORS = ["#c62828", "#1565c0", "#2e7d32", "#8e24aa"];
const DEFAULT_NAMES = ["East 东", "South 南", "West 西", "North 北"];

export const T = {
  readonly: false, // /t/{id}
  editing: null, // round number being edited, or null for a new round
  target: null, // seat whose tiles the scorer is reading
  preview: null, // the last settlement shown
  idem: null, // Idempotency-Key of the round being saved (kept for a retry)
  undoArmed: false,
  profiles: {}, // saved house profiles by name (GET /v1/profiles)
  rules: null, // GET /v1/rules: presets, groups, switches (null: this server does not list them)
  profileExtra: {}, // rules keys of the chosen saved profile that the start form has no input for (kept as they are)
};

// The table screen's store: the table as the server last sent it and its rounds (GET …/rounds). The totals,
// the history, the chart and the share links are drawn from it whenever it changes (renderTable).
const tableStore = createStore({ table: null, rounds: [] });
Object.defineProperties(T, {
  table: { get: () => tableStore.get().table, enumerable: true },
  rounds: { get: () => tableStore.get().rounds, enumerable: true },
  round: { get: () => roundStore.get(), enumerable: true }, // the round being entered
});

const names = () => (T.table ? T.table.players : DEFAULT_NAMES);

// One status line speaks at a time: a new message (or error) clears the other, so no stale "saved" or "undone"
// stays beside it.
// A message is a label in both languages (L(…), switched with the page) or a server's own text.
function roundStatus(message, isError = false) {
  const el = $("round-status");
  el.replaceChildren(...(message ? [message] : []));
  el.classList.toggle("error", isError);
  if (message) $("table-status").replaceChildren();
}

function tableStatus(message, isError = false) {
  const el = $("table-status");
  el.replaceChildren(...(message ? [message] : []));
  el.classList.toggle("error", isError);
  if (message) $("round-status").replaceChildren();
}

// A store's message: [zh, en] (drawn in the current language at each render) or a server's own text.
const say = (message) => (Array.isArray(message) ? tr(...message) : message);

// ----------------------------------------------------------------------------------------------- views

function showView(table) {
  const on = table || T.readonly;
  document.body.classList.toggle("table-mode", on);
  $("table-view").hidden = !on;
  $("tab-table").toggleAttribute("aria-current", on);
  $("tab-score").toggleAttribute("aria-current", !on);
  $("sub").replaceChildren(on ? L("一桌一晚上：每局结算、累计分、记录。", "A table's evening: each round's settlement, running totals, history.")
    : L("拍一家的手牌：牌型、番数、听牌。", "Photograph one player's tiles: hand type, fan, waits."));
  // The scorer's photos are this table's round photos while it is open: read with its set's calibration.
  useTableCalibration(on && T.table && !T.readonly ? T.table.id : null);
  if (!on) setTarget(null);
}

function option(value, label, selected = false) {
  return h("option", { value, selected }, label);
}

// none: the label of the empty choice, [zh, en].
function fillSeatSelect(el, { none = null, value = null } = {}) {
  const keep = value ?? el.value;
  el.replaceChildren(...(none ? [L(...none, "option", { value: "" })] : []), ...SEATS.map((s) => option(String(s), names()[s])));
  if (keep !== "" && keep != null && [...el.options].some((o) => o.value === String(keep))) el.value = String(keep);
}

function fillTileSelect(el, none) {
  el.replaceChildren(...(none ? [L(...none, "option", { value: "" })] : []),
                     ...TILES.map((t) => option(t, `${t} ${t[0]}${SUIT_ZH[t[1]]}`)));
}

// --------------------------------------------------------------------------------------- start a table

function buildStartForm() {
  // Last time's players are offered again (kept on this device); names used before are suggested while typing.
  const players = lastPlayers() || ["Ann", "Bo", "Cy", "Di"];
  const known = [...new Set(knownTables().flatMap((t) => t.players || []))];
  $("t-players").replaceChildren(...SEATS.map((s) => h("label", {}, L(`座位 ${s + 1}`, `Seat ${s + 1}`), " ",
    h("input", { id: `t-p${s}`, value: players[s] || "", maxlength: "40", required: true, list: "t-known",
                 oninput: refreshDealerNames }))),
    h("datalist", { id: "t-known" }, known.map((n) => h("option", { value: n }))));
  refreshDealerNames();
  renderSwitches();
}

// ------------------------------------------------------------------------------ the house-rules panel

// The panel is drawn from GET /v1/rules (presets, groups, switches with a one-line explanation each): the page
// keeps no copy of the rules. A server without it offers the presets only.
async function loadRules() {
  let r;
  try {
    r = await api("GET", "/v1/rules");
  } catch {
    r = { ok: false };
  }
  T.rules = r.ok ? r.data : null;
  if (T.table && T.rules) tableStore.set({}); // the table opened before the rules came: its rules' titles
  if (T.table && !T.readonly && T.rules) renderRoundFields();
  if (T.rules) {
    const keep = $("t-preset").value;
    $("t-preset").replaceChildren(...T.rules.presets.map((p) => option(p.name, `${p.title_zh} ${p.title_en}`)));
    if (T.rules.presets.some((p) => p.name === keep)) $("t-preset").value = keep;
  }
  renderSwitches();
  listProfiles(); // the example profiles come with the rules
}

const switchValue = (sw, el) => {
  if (sw.kind === "bool") return el.checked;
  if (sw.kind === "int") return Number(el.value);
  if (sw.kind === "choice") return el.value === "" ? null : el.value;
  try {
    return JSON.parse(el.value); // int_list, int_map: as JSON ([1, 9], {"1s": 2})
  } catch {
    return el.value;
  }
};

function switchInput(sw) {
  const id = `sw-${sw.name}`;
  if (sw.kind === "bool") return h("input", { type: "checkbox", id });
  if (sw.kind === "int") return h("input", { type: "number", id, min: String(sw.min ?? 0), max: String(sw.max ?? 1000000) });
  if (sw.kind === "choice") {
    return h("select", { id }, sw.choices.map((c) => option(c.value ?? "", `${c.label_zh} ${c.label_en}`)));
  }
  return h("input", { id, autocomplete: "off", spellcheck: "false", placeholder: sw.kind === "int_list" ? "[1, 9]" : "{}" });
}

function renderSwitches() {
  const rules = T.rules;
  if (!rules) {
    $("t-switches").replaceChildren(L("这个服务器不列出规则开关（GET /v1/rules）：只能选预设和保存的家规。",
      "This server does not list its rules switches (GET /v1/rules): presets and saved house rules only.", "p",
      { class: "hint", id: "t-no-rules" }));
    return;
  }
  $("t-switches").replaceChildren(...rules.groups.map((g) => {
    const mine = rules.switches.filter((sw) => sw.group === g.name);
    return mine.length ? h("fieldset", { class: "switch-group", "data-group": g.name },
      L(`${g.title_zh} ${g.title_en}`, `${g.title_en} ${g.title_zh}`, "legend"),
      mine.map((sw) => h("label", { class: `switch ${sw.kind}`, "data-switch": sw.name }, switchInput(sw),
        h("span", {}, L(sw.title_zh, sw.title_en, "b"), " — ", L(sw.explanation_zh, sw.explanation_en))))) : null;
  }));
  presetDefaults();
}

const presetRules = (name) => ((T.rules && T.rules.presets.find((p) => p.name === name)) || { rules: {} }).rules;

function refreshDealerNames() {
  const current = $("t-dealer").value || "0";
  $("t-dealer").replaceChildren(...SEATS.map((s) => option(String(s), $(`t-p${s}`).value || tr(`座位 ${s + 1}`, `Seat ${s + 1}`))));
  $("t-dealer").value = current;
}


function presetDefaults() {
  if (!T.rules) return;
  const values = presetRules($("t-preset").value);
  for (const sw of T.rules.switches) {
    const el = $(`sw-${sw.name}`);
    const v = values[sw.name] ?? sw.default;
    if (sw.kind === "bool") el.checked = !!v;
    else el.value = sw.kind === "int_list" || sw.kind === "int_map" ? JSON.stringify(v ?? null) : String(v ?? "");
  }
}

// Only what differs from the preset is sent, as {"preset": NAME, <switch>: value, ...}.
function rulesFromForm() {
  const preset = $("t-preset").value;
  const base = presetRules(preset);
  const overrides = { ...T.profileExtra };
  for (const sw of T.rules ? T.rules.switches : []) {
    const value = switchValue(sw, $(`sw-${sw.name}`));
    if (JSON.stringify(value) !== JSON.stringify(base[sw.name] ?? sw.default)) overrides[sw.name] = value;
  }
  return Object.keys(overrides).length ? { preset, ...overrides } : preset;
}

// ---------------------------------------------------------------------------------- saved house profiles

async function listProfiles(select = null) {
  // Three sources, the nearer winning on a name: the example regional profiles of GET /v1/rules, the house
  // profiles saved on the service (GET /v1/profiles), and those saved on this phone.
  const r = await api("GET", "/v1/profiles");
  if (!r.ok) profileStatus(errorText(r), true);
  const examples = Object.fromEntries(((T.rules && T.rules.profiles) || []).map((p) => [p.name, p.rules]));
  const served = r.ok ? Object.fromEntries(r.data.profiles.map((p) => [p.name, p.rules])) : {};
  const mine = deviceProfiles();
  T.profiles = { ...examples, ...served, ...mine };
  const label = (name) => { // [中文, English]
    const example = ((T.rules && T.rules.profiles) || []).find((p) => p.name === name);
    if (name in mine) return [`${name} · 本机`, `${name} · this phone`];
    if (example && !(name in served)) return [`${example.title_zh} · 示例`, `${example.title_en} · example`];
    return [name, name];
  };
  const keep = select ?? $("t-profile").value;
  $("t-profile").replaceChildren(L("— 不用，下面选 —", "— none, choose below —", "option", { value: "" }),
                                 ...Object.keys(T.profiles).map((name) => L(...label(name), "option", { value: name })));
  $("t-profile").value = keep in T.profiles ? keep : "";
}

function profileStatus(message, isError = false) {
  const el = $("profile-status");
  el.replaceChildren(message);
  el.classList.toggle("error", isError);
}

// A saved profile fills the preset and the switches; its keys without an input here are kept and shown.
function profileChosen() {
  const name = $("t-profile").value;
  T.profileExtra = {};
  if (!name) { presetChanged(); return; }
  const rules = T.profiles[name];
  const { preset = "gy-normal", ...overrides } = typeof rules === "string" ? { preset: rules } : rules;
  $("t-preset").value = preset;
  presetDefaults();
  for (const [key, value] of Object.entries(overrides)) {
    const sw = T.rules && T.rules.switches.find((x) => x.name === key);
    if (!sw) { T.profileExtra[key] = value; continue; }
    if (sw.kind === "bool") $(`sw-${key}`).checked = value;
    else $(`sw-${key}`).value = sw.kind === "int_list" || sw.kind === "int_map" ? JSON.stringify(value) : String(value ?? "");
  }
  showProfileExtra();
  $("t-profile-name").value = name;
  $("t-house").open = true;
  profileStatus(L(`家规“${name}”：${rulesText(rules)}。`, `House rules “${name}”: ${rulesText(rules)}.`));
}

function showProfileExtra() {
  const extra = Object.entries(T.profileExtra);
  $("t-profile-extra").hidden = !extra.length;
  const list = extra.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");
  $("t-profile-extra").replaceChildren(...(extra.length ? [L(`家规里另有：${list}`, `Also from the profile: ${list}`)] : []));
}

function presetChanged() {
  T.profileExtra = {};
  $("t-profile").value = "";
  showProfileExtra();
  presetDefaults();
}

async function saveProfile() {
  const name = $("t-profile-name").value.trim();
  if (!name) { profileStatus(L("先给这套家规起个名字。", "Give the house rules a name first."), true); return; }
  const rules = rulesFromForm();
  // Saving on the service is its admin's (PUT /v1/profiles needs the admin key): the page keeps them here.
  saveDeviceProfile(name, rules);
  await listProfiles(name);
  profileStatus(L(`已存在这台手机上：“${name}”：${rulesText(rules)}。`, `Saved on this phone as “${name}”: ${rulesText(rules)}.`));
}

async function startTable(ev) {
  ev.preventDefault();
  const body = { name: $("t-name").value.trim() || tr("牌桌", "Table"), players: SEATS.map((s) => $(`t-p${s}`).value.trim()),
                 rules: rulesFromForm(), dealer: Number($("t-dealer").value) };
  let r;
  try {
    r = await api("POST", "/v1/tables", body);
  } catch (err) {
    startError(noAnswer(err));
    return;
  }
  if (!r.ok) { startError(errorText(r)); return; }
  // The edit key is in this answer only: kept on this device, sent with every write to the table.
  if (r.data.edit_key) storeKey(r.data.id, r.data.edit_key);
  rememberTable(r.data);
  rememberPlayers(body.players);
  await openTable(r.data.id);
}

function startError(message) {
  let el = $("start-error");
  if (!el) { el = h("p", { id: "start-error", class: "status error" }); $("start-form").append(el); }
  el.replaceChildren(message);
}

const noAnswer = (err) => L(`连不上服务器（${err.message}）。`, `No answer from the server (${err.message}).`);

// The tables this device created or opened (there is no public list of tables on the server).
function listRecent() {
  const tables = knownTables();
  const list = $("recent");
  if (!tables.length) { list.replaceChildren(L("还没有", "none yet", "li", { class: "muted" })); return; }
  list.replaceChildren(...tables.slice(0, 20).map((t) => h("li", {},
    h("a", { href: `/#table=${t.id}`, onclick: (ev) => { ev.preventDefault(); openTable(t.id); } }, t.name || t.id),
    h("span", { class: "muted" }, ` · ${(t.players || []).join(", ")}` +
      (t.rounds != null ? ` · ${tr(`${t.rounds} 局`, `${t.rounds} round${t.rounds === 1 ? "" : "s"}`)}` : "") +
      (t.key ? "" : ` · ${tr("只看", "view only")}`) + ` · ${new Date(t.opened).toLocaleString()}`))));
}

// ------------------------------------------------------------------------------------------ open a table

// The table's address for reading: its id, or at a view link its view id (/v1/views/…, on servers that have it).
function readBase() {
  return T.viewBase || `/v1/tables/${T.table ? T.table.id : ""}`;
}

async function fetchTable(base) {
  const [t, rs] = await Promise.all([api("GET", base), api("GET", `${base}/rounds`)]);
  return { t, rs };
}

async function openTable(id, { view = false } = {}) {
  let base = `/v1/tables/${id}`;
  let got;
  try {
    if (view) {
      // A view link: /v1/views/{view_id}; a server without view ids answers a route-level 404, then the id is the table's.
      got = await fetchTable(`/v1/views/${id}`);
      if (got.t.ok) base = `/v1/views/${id}`;
      else if (errorCode(got.t) !== "table_not_found") got = null;
    }
    got = got || await fetchTable(base);
  } catch (err) {
    startError(noAnswer(err));
    if (!view) showStart();
    return;
  }
  const { t, rs } = got;
  if (t.status === 404) { showNotFound(); return; }
  if (!t.ok || !rs.ok) { startError(errorText(t.ok ? rs : t)); if (!view) showStart(); return; }
  T.viewBase = view ? base : null;
  $("not-found").hidden = true;
  $("table-start").hidden = true;
  $("table-card").hidden = false;
  $("history-card").hidden = false;
  $("round-card").hidden = T.readonly || !!t.data.finished;
  $("set-card").hidden = T.readonly;
  document.body.classList.remove("table-start");
  if (!T.table || T.table.id !== t.data.id) resetTablePhoto(); // another table's photo is not this round's
  tableStore.set({ table: t.data, rounds: rs.data.rounds }); // drawn by renderTable, shown from here on
  if (!T.readonly) {
    rememberTable(T.table);
    if (location.hash !== `#table=${id}`) history.replaceState(null, "", `/#table=${id}`);
  }
  showView(true);
  if (!T.readonly) loadSet();
  if (!T.readonly) {
    resetRoundForm(false);
    restoreDraft();
    flushQueue();
  }
}

function showNotFound() {
  tableStore.set({ table: null, rounds: [] });
  for (const id of ["table-start", "table-card", "round-card", "history-card", "set-card", "settle-card"]) $(id).hidden = true;
  $("not-found").hidden = false;
  document.body.classList.add("table-start");
  showView(true);
}

async function reloadTable() {
  const { t, rs } = await fetchTable(readBase());
  if (t.ok && rs.ok) {
    tableStore.set({ table: t.data, rounds: rs.data.rounds });
    if (!T.readonly) rememberTable(T.table);
  }
}

function showStart() {
  tableStore.set({ table: null, rounds: [] });
  useTableCalibration(null);
  $("set-card").hidden = true;
  $("table-start").hidden = false;
  $("table-card").hidden = true;
  $("round-card").hidden = true;
  $("history-card").hidden = true;
  $("settle-card").hidden = true;
  $("not-found").hidden = true;
  // The start screen is the start form only: the photo scorer returns with a table (or the 算番 tab).
  document.body.classList.add("table-start");
  if (location.hash.startsWith("#table=")) history.replaceState(null, "", "/#table");
  buildStartForm();
  listRecent();
  listProfiles();
}

function rulesText(rules) {
  const { preset, ...rest } = typeof rules === "string" ? { preset: rules } : rules;
  const p = T.rules && T.rules.presets.find((x) => x.name === preset);
  const title = p ? tr(p.title_zh, p.title_en) : preset;
  const changed = Object.entries(rest);
  return changed.length ? `${title} + ${changed.map(([k, v]) => `${k}=${v}`).join(", ")}` : title;
}

function renderTable() {
  const t = T.table;
  $("table-title").textContent = t.name;
  $("table-rules").textContent = rulesText(t.rules);
  $("totals").replaceChildren(...SEATS.map((s) => h("div", { class: `total${s === t.dealer ? " dealer" : ""}`,
                                                             "data-seat": s },
    h("span", { class: "swatch", style: `background:${COLORS[s]}` }),
    h("span", { class: "who" }, t.players[s]),
    s === t.dealer ? h("span", { class: "badge", title: tr("下一局的庄家", "dealer of the next hand") },
                       `${tr("庄", "庄 dealer")}${t.streak > 1 ? ` 连庄×${t.streak}` : ""}`) : null,
    h("b", { class: "points", id: `total-${s}` }, signed(t.totals[s])))));
  $("export").href = `${readBase()}/export?format=csv`;
  $("undo").disabled = T.readonly || !T.rounds.length;
  for (const id of ["undo", "close-table", "settle-open"]) $(id).hidden = T.readonly;
  $("readonly-badge").hidden = !T.readonly;
  if (t.finished) tableStatus(L("这一桌已结束：只能看，不能再记。", "This table is finished: read only, no more rounds."));
  shareStore.set({ viewUrl: viewUrl(), editUrl: editUrl() });
  if (!$("settle-card").hidden) settleStore.set({ totals: t.totals, players: t.players });
  renderHistory();
  renderChart();
  for (const id of ["r-winner", "r-discarder"]) fillSeatSelect($(id));
  fillFirstSelects();
  renderSeatNames();
  renderRound(roundStore.get()); // the seat selects just refilled show the round's values again
  renderTablePhoto(); // the names over the photo and in its seating chart
}

const signed = (n) => (n > 0 ? `+${n}` : String(n));

function outcomeWords(round) {
  const o = round.outcome;
  const n = names();
  if (o.type === "draw") return tr("黄牌", "黄牌 draw");
  if (o.type !== "win") return o.type;
  const winners = o.winners.map((w) => n[w]).join(", ");
  if (o.self_drawn || o.discarder == null) return `${winners} ${tr("自摸", "自摸 self-drawn")} ${o.win_tile}`;
  const multi = o.winners.length > 1 ? ` (${tr("一炮多响", "一炮多响 several")})` : "";
  return `${n[o.discarder]} ${tr("点炮", "点炮 discard")} → ${winners}${multi} ${o.win_tile}`;
}

// A round's summary as the server gives it (hand type, fan, who paid); older servers send none of it.
// A round's summary as the server gives it (`summary`: hand type, fan, who paid alone); older servers send none.
const summaryOf = (r) => r.summary || null;

function summaryCells(r) {
  const sm = summaryOf(r) || {};
  const wins = sm.wins && sm.wins.length ? sm.wins : sm.hand_type ? [{ hand_type: sm.hand_type, fan: sm.fan }] : [];
  const type = wins.map((w) => `${w.hand_type.zh} ${tr("", w.hand_type.en)}`.trim()).join(" / ");
  const fan = wins.map((w) => tr(`${w.fan} 番`, `${w.fan} 番 fan`)).join(" / ");
  const payer = sm.payer != null ? `${names()[sm.payer]} ${tr("付", "paid")}` : sm.kind === "win" ? tr("三家付", "all three") : "";
  return [h("td", { class: "type" }, type), h("td", { class: "fan nowrap" }, fan), h("td", { class: "payer nowrap" }, payer)];
}

function renderHistory() {
  const n = names();
  // The hand type, fan and payer columns where the server summarises its rounds.
  const summaries = T.rounds.some((r) => summaryOf(r));
  const sum = (cells) => (summaries ? cells : []);
  const head = h("tr", {}, h("th", {}, "#"), h("th", {}, tr("庄", "dealer 庄")), h("th", {}, tr("这一局", "round")),
                 ...sum([h("th", {}, tr("牌型", "hand")), h("th", {}, tr("番", "fan 番")), h("th", {}, tr("谁付", "paid by"))]),
                 ...n.map((x) => h("th", { class: "num name" }, x)), T.readonly ? null : h("th", {}, ""));
  const rows = T.rounds.map((r) => h("tr", { "data-round": r.number },
    h("td", {}, r.number), h("td", { class: "nowrap" }, n[r.dealer] + (r.streak > 1 ? ` ×${r.streak}` : "")),
    h("td", {}, outcomeWords(r.round)), ...sum(summaryCells(r)),
    ...r.deltas.map((d) => h("td", { class: `num ${d > 0 ? "plus" : d < 0 ? "minus" : ""}` }, signed(d))),
    T.readonly ? null : h("td", {}, h("button", { class: "btn small", type: "button", "data-edit": r.number,
                                                  onclick: () => editRound(r) }, tr("改", "edit")))));
  const foot = h("tr", { class: "sum" }, h("td", {}, ""), h("td", {}, ""), h("td", {}, tr("合计", "total")),
                 ...sum([h("td", {}, ""), h("td", {}, ""), h("td", {}, "")]),
                 ...T.table.totals.map((x) => h("td", { class: "num" }, h("b", {}, signed(x)))),
                 T.readonly ? null : h("td", {}, ""));
  $("history").replaceChildren(head, ...rows, foot);
}

// Cumulative totals after each round, one line per player (inline SVG, no library).
// Cumulative totals after each round, one line per player (inline SVG, no library). Drawn at the width it is
// shown at (one SVG unit a CSS pixel), so that its labels stay 12 px on a phone.
function renderChart() {
  if (!T.rounds.length) {
    $("chart").replaceChildren(L("还没有局：第一局后这里画出累计分。",
      "No rounds yet: the chart of running totals starts with round 1.", "p", { class: "muted" }));
    return;
  }
  const W = Math.max(300, Math.round($("chart").clientWidth || 640)), H = 220, LEFT = 44, R = 10, TOP = 14, B = 26;
  const series = SEATS.map((s) => [0, ...T.rounds.map((r) => r.totals_after[s])]);
  const all = series.flat();
  const lo = Math.min(0, ...all), hi = Math.max(1, ...all);
  const n = Math.max(1, T.rounds.length);
  const x = (i) => LEFT + (i * (W - LEFT - R)) / n;
  const y = (v) => TOP + ((hi - v) * (H - TOP - B)) / (hi - lo || 1);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img",
                             "aria-label": tr("每局后的累计分", "running totals per round") });
  chart.append(svg("line", { x1: LEFT, x2: W - R, y1: y(0), y2: y(0), class: "axis" }));
  for (const v of [lo, hi]) {
    const t = svg("text", { x: LEFT - 6, y: y(v) + 5, "text-anchor": "end", class: "tick" });
    t.textContent = signed(v);
    chart.append(t);
  }
  const every = Math.ceil(T.rounds.length / Math.max(1, Math.floor((W - LEFT - R) / 28))); // labels never overlap
  for (let i = 0; i <= T.rounds.length; i += every) {
    const t = svg("text", { x: x(i), y: H - 6, "text-anchor": "middle", class: "tick" });
    t.textContent = String(i);
    chart.append(t);
  }
  series.forEach((pts, s) => {
    chart.append(svg("polyline", { points: pts.map((v, i) => `${x(i)},${y(v)}`).join(" "), class: "line",
                                   stroke: COLORS[s], "data-seat": s }));
    pts.forEach((v, i) => chart.append(svg("circle", { cx: x(i), cy: y(v), r: 3, fill: COLORS[s] })));
  });
  const legend = h("p", { class: "legend" }, ...SEATS.map((s) => h("span", {},
    h("span", { class: "swatch", style: `background:${COLORS[s]}` }), names()[s])));
  $("chart").replaceChildren(chart, legend);
}

// -------------------------------------------------------------------------------------------- the round

// The round being entered is a store: every input dispatches its change into it (data-bind names the field),
// the form is drawn from it, the draft kept per table is it, and the preview and Save read it (roundOf), never
// the inputs. Select values are kept as the strings the selects hold; roundOf turns them into the API's round.

// How a seat that did not win is given at a win: its whole hand, or in one tap 叫 (ready: only the chicken tiles
// it holds) or 不叫 (not ready) — the quick round; melds and river either way.
const SEAT_MODES = [["tiles", "手牌", "tiles"], ["ready", "叫", "ready"], ["not_ready", "不叫", "not ready"]];

const freshSeat = () => ({ mode: "tiles", drawNotReady: false, tiles: "", holds: "", river: "", baoTing: false, melds: [] });

const freshRound = () => ({
  how: "self", winner: "0", discarder: "1", multi: [false, false, false, false], winTile: "1m", flipped: "",
  kongDraw: false, hot: false, robbed: false, firstDraw: false, genZhuang: false,
  first1s: "", claimed1s: "", first8p: "", claimed8p: "",
  fields: { weekday: String(new Date().getDay() || 7) }, // 1 = Monday … 7 = Sunday: today, editable
  seats: SEATS.map(freshSeat),
});

const roundStore = createStore(freshRound());

// A copy of the state with the value at path (["seats", "2", "tiles"]) replaced.
function setIn(obj, [key, ...rest], value) {
  const copy = Array.isArray(obj) ? [...obj] : { ...obj };
  copy[key] = rest.length ? setIn(obj[key], rest, value) : value;
  return copy;
}

const getIn = (obj, path) => path.reduce((o, k) => (o == null ? undefined : o[k]), obj);

// A change typed or tapped: into the store (which redraws the form), the preview it invalidates dropped, the
// draft kept.
function dispatch(path, value) {
  const keys = path.split(".");
  const st = roundStore.get();
  if (getIn(st, keys) === value) return;
  roundStore.set(setIn(st, keys, value));
  T.preview = null;
  if (keys[0] === "how") $("settle-preview").replaceChildren();
  keepDraft();
}

const updateSeat = (s, change) => dispatch(`seats.${s}`, { ...roundStore.get().seats[s], ...change(roundStore.get().seats[s]) });

function onRoundInput(ev) {
  const el = ev.target;
  if (!el.dataset || !el.dataset.bind || (el.type === "radio" && !el.checked)) return;
  dispatch(el.dataset.bind, el.type === "checkbox" ? el.checked : el.value);
}

function winnersOf(st) {
  if (st.how === "draw") return [];
  return st.how === "multi" ? SEATS.filter((s) => st.multi[s]) : [Number(st.winner)];
}

// At a win a seat that did not win may be given quick (叫 / 不叫); the winners and every seat at 黄牌 by tiles.
const modeOf = (st, s) => (st.how === "draw" || winnersOf(st).includes(s) ? "tiles" : st.seats[s].mode);
// 黄牌: a player who is not ready needs no tiles; what was typed stays, hidden, in case the tick was a slip.
const skippedAtDraw = (st, s) => st.how === "draw" && st.seats[s].drawNotReady;

function seatRow(s) {
  return h("div", { class: "seat", id: `seat-${s}`, "data-seat": s },
    h("div", { class: "seat-head" },
      h("b", { class: "seat-name nowrap", id: `seat-name-${s}` }), h("span", { class: "seat-role", id: `seat-role-${s}` }),
      h("label", { class: "inline", id: `s${s}-notready-l`,
                   title: tr("黄牌：没叫牌，不用输他的牌", "黄牌: not ready (no 叫), the tiles are not needed") },
        h("input", { type: "checkbox", id: `s${s}-notready`, "data-bind": `seats.${s}.drawNotReady` }), " ",
        L("不叫", "不叫 not ready")),
      h("label", { class: "inline" }, h("input", { type: "checkbox", id: `s${s}-baoting`, "data-bind": `seats.${s}.baoTing` }), " ",
        L("报听", "报听 declared")),
      L("拍照", "Photo", "button", { class: "btn small", type: "button", id: `s${s}-photo`, onclick: () => photoFor(s) })),
    h("div", { class: "seg quick", id: `s${s}-quick`, role: "radiogroup", "aria-label": tr("这一家怎么给", "how this seat is given") },
      SEAT_MODES.map(([mode, zh, en]) => h("label", { "data-mode": mode },
        h("input", { type: "radio", name: `s${s}-mode`, value: mode, "data-bind": `seats.${s}.mode` }), " ",
        L(zh, mode === "tiles" ? en : `${zh} ${en}`)))),
    h("div", { class: "seat-body", id: `s${s}-body` },
      h("label", { id: `s${s}-tiles-l` }, L("手牌（MPSZ；胡的人不含胡的那张）", "Tiles (MPSZ; a winner's without the winning tile)"), " ",
        h("input", { id: `s${s}-tiles`, autocomplete: "off", spellcheck: "false", placeholder: "123m456p789s1155p",
                     "data-bind": `seats.${s}.tiles` })),
      h("div", { class: "row small", id: `s${s}-holds-row` },
        h("label", { class: "inline grow" }, L("手里的鸡", "Chickens held", "span", { class: "nowrap" }),
          h("input", { id: `s${s}-holds`, autocomplete: "off", spellcheck: "false", placeholder: "1s8p",
                       "data-bind": `seats.${s}.holds` })),
        h("button", { class: "btn small", type: "button", title: tr("手里的一张幺鸡", "a 幺鸡 held in this player's hand"),
                      onclick: () => addTile(s, "holds", "1s") }, "+1s"),
        h("button", { class: "btn small", type: "button", title: tr("手里的一张八筒", "an 8p held in this player's hand"),
                      onclick: () => addTile(s, "holds", "8p") }, "+8p")),
      h("div", { class: "melds", id: `s${s}-melds` }),
      h("div", { class: "row small" },
        L("+ 碰/杠", "+ 碰/杠 meld", "button", { class: "btn small", type: "button",
          onclick: () => updateSeat(s, (seat) => ({ melds: [...seat.melds, { type: "pong", tile: "5m", from: "" }] })) })),
      h("div", { class: "row small" },
        h("label", { class: "inline grow" }, L("河", "River 河", "span", { class: "nowrap" }),
          h("input", { id: `s${s}-river`, autocomplete: "off", spellcheck: "false", placeholder: "1s8p",
                       "data-bind": `seats.${s}.river` })),
        h("button", { class: "btn small", type: "button", title: tr("河里的一张幺鸡", "a 幺鸡 in this player's river"),
                      onclick: () => addTile(s, "river", "1s") }, "+1s"),
        h("button", { class: "btn small", type: "button", title: tr("河里的一张八筒（乌骨鸡）", "an 8p (乌骨鸡) in this player's river"),
                      onclick: () => addTile(s, "river", "8p") }, "+8p"))));
}

function addTile(s, field, tile) {
  updateSeat(s, (seat) => ({ [field]: normalise(seat[field]) + tile }));
}

const fedBy = (seat) => tr(`${names()[seat]} 打的`, `fed by ${names()[seat]}`);

function meldRow(s, i) {
  const others = SEATS.filter((x) => x !== s);
  return h("div", { class: "meld-row" },
    h("select", { class: "m-type", "aria-label": "meld type", "data-bind": `seats.${s}.melds.${i}.type` },
      Object.entries(MELD_TYPES).map(([k, v]) => option(k, v))),
    h("select", { class: "m-tile", "aria-label": "meld tile", "data-bind": `seats.${s}.melds.${i}.tile` },
      TILES.map((t) => option(t, t))),
    h("select", { class: "m-from", "aria-label": "fed by", "data-bind": `seats.${s}.melds.${i}.from` },
      L("自己", "self 自己", "option", { value: "" }), others.map((o) => option(String(o), fedBy(o)))),
    h("button", { class: "btn small danger", type: "button", "aria-label": tr("去掉这一组", "remove meld"),
                  onclick: () => updateSeat(s, (seat) => ({ melds: seat.melds.filter((_, j) => j !== i) })) }, "✕"));
}

// The form drawn from the round's state: values, what is shown, the meld rows.
function renderRound(st) {
  if (!$("seat-0")) return;
  for (const s of SEATS) {
    const box = $(`s${s}-melds`);
    const melds = st.seats[s].melds;
    if (box.children.length !== melds.length) box.replaceChildren(...melds.map((_, i) => meldRow(s, i)));
    melds.forEach((m, i) => { box.children[i].querySelector(".m-from").hidden = !["pong", "kong"].includes(m.type); });
  }
  for (const el of $("round-card").querySelectorAll("[data-bind]")) {
    const v = getIn(st, el.dataset.bind.split("."));
    if (el.type === "checkbox") el.checked = !!v;
    else if (el.type === "radio") el.checked = el.value === v;
    else if (el.value !== String(v ?? "")) el.value = String(v ?? "");
  }
  const v = st.how;
  $("r-winner-l").hidden = v === "multi" || v === "draw";
  $("r-discarder-l").hidden = v === "self" || v === "draw";
  $("r-winners").hidden = v !== "multi";
  $("r-win-tile").closest("label").hidden = v === "draw";
  $("r-flipped").closest("label").hidden = v === "draw";
  $("r-flags").hidden = v === "draw";
  $("r-kong-draw").closest("label").hidden = v !== "self";
  for (const id of ["r-hot", "r-robbed"]) $(id).closest("label").hidden = v === "self";
  // No 鸡 at a draw (docs/rules.md#chicken-payments): the first 1s does not matter then.
  $("r-first1s").closest(".grid2").hidden = v === "draw";
  $("r-first1s-hint").hidden = v === "draw";
  $("r-draw-hint").hidden = v !== "draw";
  $("r-first-draw-l").hidden = !firstDrawShown(st);
  $("r-genzhuang-l").hidden = !houseRule("genzhuang");
  $("r-first8p-row").hidden = !first8pShown(st);
  const kinds = [houseRule("tianhu") ? `天胡 ${houseRule("tianhu")}` : null, houseRule("dihu") ? `地胡 ${houseRule("dihu")}` : null];
  $("r-first-draw-text").textContent = `${kinds.filter(Boolean).join(" / ")}${tr("：第一次摸牌就胡（之前没人打牌、碰、杠）",
    ": won on the first draw (nothing discarded or laid before)")}`;
  const winners = winnersOf(st);
  for (const s of SEATS) {
    const mode = modeOf(st, s);
    const skipped = skippedAtDraw(st, s);
    $(`seat-role-${s}`).dataset.how = v;
    $(`s${s}-notready-l`).hidden = v !== "draw";
    $(`s${s}-quick`).hidden = v === "draw" || winners.includes(s);
    $(`s${s}-body`).hidden = skipped;
    $(`s${s}-photo`).hidden = skipped || mode !== "tiles";
    $(`s${s}-baoting`).closest("label").hidden = skipped || mode === "not_ready";
    $(`s${s}-tiles-l`).hidden = mode !== "tiles";
    $(`s${s}-holds-row`).hidden = mode !== "ready";
  }
}

// A house rule of the table (its rules object; a preset alone plays none of them).
function houseRule(key) {
  const rules = T.table && T.table.rules;
  return rules && typeof rules === "object" ? rules[key] : undefined;
}

// The round inputs of the house rules count only when the table plays them.
const firstDrawShown = (st) => st.how === "self" && !!(houseRule("tianhu") || houseRule("dihu"));
const first8pShown = (st) => st.how !== "draw" && !!houseRule("wuguji_chongfeng");

// Round inputs that some switches need (GET /v1/rules round_fields, e.g. weekday for 星期鸡), shown only when the
// table's rules need them.
function roundFieldsNeeded() {
  return ((T.rules && T.rules.round_fields) || []).filter((f) =>
    Object.entries(f.needed_when || {}).some(([sw, values]) => values.includes(houseRule(sw))));
}

function renderRoundFields() {
  if (!$("r-fields")) return;
  $("r-fields").replaceChildren(...roundFieldsNeeded().map((f) => h("label", {},
    L(f.explanation_zh || f.explanation_en || f.name, f.explanation_en || f.explanation_zh || f.name), " ",
    h("input", { type: "number", id: `r-field-${f.name}`, min: f.min ?? null, max: f.max ?? null,
                 "data-bind": `fields.${f.name}` }))));
  renderRound(roundStore.get());
}

function renderSeatNames() {
  const t = T.table;
  for (const s of SEATS) {
    const name = $(`seat-name-${s}`);
    if (!name) continue;
    name.textContent = names()[s];
    $(`seat-role-${s}`).textContent = t && s === dealerOfRound() ? tr(" 庄", " 庄 dealer") : "";
    for (const sel of $(`s${s}-melds`).querySelectorAll(".m-from")) {
      for (const o of sel.options) if (o.value !== "") o.textContent = fedBy(Number(o.value));
    }
  }
}

function dealerOfRound() {
  if (T.editing != null) return T.rounds[T.editing - 1].dealer;
  return T.table.dealer;
}

function streakOfRound() {
  if (T.editing != null) return T.rounds[T.editing - 1].streak;
  return T.table.streak;
}

// A new round (or the round being edited, or a draft): the form's structure for this table's names, then its
// values from the state.
function resetRoundForm(keepStatus = true, state = freshRound()) {
  T.editing = null;
  T.preview = null;
  T.idem = null;
  renderRoundTitle();
  $("cancel-edit").hidden = true;
  $("seats").replaceChildren(...SEATS.map(seatRow));
  $("r-winners").replaceChildren(...SEATS.map((s) => h("label", {},
    h("input", { type: "checkbox", id: `r-w${s}`, value: String(s), "data-bind": `multi.${s}` }), " ", names()[s])));
  fillTileSelect($("r-win-tile"), null);
  fillTileSelect($("r-flipped"), ["没有（牌墙摸完）", "none (wall empty)"]);
  fillSeatSelect($("r-winner"));
  fillSeatSelect($("r-discarder"));
  fillFirstSelects();
  $("settle-preview").replaceChildren();
  roundStore.set(state);
  renderRoundFields();
  renderSeatNames();
  if (!keepStatus) roundStatus("");
}

function fillFirstSelects() {
  fillSeatSelect($("r-first1s"), { none: ["没人打幺鸡", "no 1s discarded"] });
  fillSeatSelect($("r-claimed"), { none: ["没人", "nobody"] });
  fillSeatSelect($("r-first8p"), { none: ["没人打八筒", "no 8p discarded"] });
  fillSeatSelect($("r-claimed8p"), { none: ["没人", "nobody"] });
}

// The round's title and its Save button: a new round, or the round being edited.
function renderRoundTitle() {
  const n = T.editing ?? T.rounds.length + 1;
  $("round-title").replaceChildren(T.editing == null ? L(`第 ${n} 局`, `Round ${n}`)
    : L(`修改第 ${n} 局（后面的局重新结算）`, `Edit round ${n} (later rounds are settled again)`));
  $("save-round").replaceChildren(T.editing == null ? L("保存这一局", "Save round")
    : L(`保存第 ${n} 局的修改`, `Save changes to round ${n}`));
}

// The round as the table API takes it (the /v1/settle body without rules, dealer, streak and base), from the state.
function roundOf(st) {
  const v = st.how;
  const players = SEATS.map((s) => {
    if (skippedAtDraw(st, s)) return { not_ready: true };
    const seat = st.seats[s];
    const melds = seat.melds.map((m) => (["pong", "kong"].includes(m.type) && m.from !== ""
      ? { type: m.type, tile: m.tile, from: Number(m.from) } : { type: m.type, tile: m.tile }));
    const river = normalise(seat.river);
    const mode = modeOf(st, s);
    // The quick forms of a seat that did not win (the summary contract): no concealed tiles.
    if (mode === "not_ready") return { not_ready: true, melds, river };
    const bao_ting = seat.baoTing;
    if (mode === "ready") return { ready: true, holds: normalise(seat.holds), melds, river, bao_ting };
    return { concealed: normalise(seat.tiles), melds, river, bao_ting };
  });
  let outcome;
  if (v === "draw") outcome = { type: "draw" };
  else {
    outcome = { type: "win", winners: winnersOf(st), win_tile: st.winTile, self_drawn: v === "self",
                discarder: v === "self" ? null : Number(st.discarder),
                kong_draw: v === "self" && st.kongDraw,
                hot_discard: v !== "self" && st.hot, robbed_kong: v !== "self" && st.robbed };
    if (st.firstDraw && firstDrawShown(st)) outcome.first_draw = true;
  }
  const firstOf = (who, by) => (v === "draw" || who === "" ? null
    : { discarder: Number(who), claimed_by: by === "" ? null : Number(by) });
  // 翻鸡 is only turned after a win: a 黄牌 round has none.
  const round = { players, outcome, flipped: v === "draw" ? null : st.flipped || null,
                  first_1s: firstOf(st.first1s, st.claimed1s) };
  // The house-rule inputs go only into the rounds of tables that play them.
  const first8p = first8pShown(st) ? firstOf(st.first8p, st.claimed8p) : null;
  if (first8p) round.first_8p = first8p;
  if (st.genZhuang && houseRule("genzhuang")) round.gen_zhuang = true;
  for (const f of roundFieldsNeeded()) {
    const value = st.fields[f.name];
    if (value != null && value !== "") round[f.name] = Number(value);
  }
  return round;
}

// The state of a round given as the API takes it (a saved round to edit, a queued one refused): roundOf's inverse.
function stateOf(round) {
  const st = freshRound();
  const o = round.outcome;
  const text = (v) => (Array.isArray(v) ? v.join("") : v || "");
  st.seats = round.players.map((p) => {
    const quick = o.type !== "draw" && (p.not_ready || p.ready);
    return { ...freshSeat(), mode: quick ? (p.ready ? "ready" : "not_ready") : "tiles",
             drawNotReady: !!p.not_ready && !quick, tiles: text(p.concealed), holds: text(p.holds), river: text(p.river),
             baoTing: !!p.bao_ting,
             melds: (p.melds || []).map((m) => ({ type: m.type, tile: m.tile, from: m.from == null ? "" : String(m.from) })) };
  });
  if (o.type === "draw") st.how = "draw";
  else {
    st.how = o.winners.length > 1 ? "multi" : o.self_drawn || o.discarder == null ? "self" : "discard";
    st.winner = String(o.winners[0]);
    if (o.discarder != null) st.discarder = String(o.discarder);
    st.multi = SEATS.map((s) => o.winners.includes(s));
    st.winTile = o.win_tile;
    st.kongDraw = !!o.kong_draw;
    st.hot = !!o.hot_discard;
    st.robbed = !!o.robbed_kong;
    st.firstDraw = !!o.first_draw;
  }
  st.genZhuang = !!round.gen_zhuang;
  for (const [key, value] of Object.entries(round)) if (typeof value === "number") st.fields[key] = String(value);
  const seat = (v) => (v == null ? "" : String(v));
  st.first8p = seat(round.first_8p && round.first_8p.discarder);
  st.claimed8p = seat(round.first_8p && round.first_8p.claimed_by);
  st.first1s = seat(round.first_1s && round.first_1s.discarder);
  st.claimed1s = seat(round.first_1s && round.first_1s.claimed_by);
  st.flipped = round.flipped || "";
  return st;
}

function editRound(r) {
  resetRoundForm(true, stateOf(r.round));
  T.editing = r.number;
  renderSeatNames(); // the dealer of the round edited
  renderRoundTitle();
  $("cancel-edit").hidden = false;
  roundStatus("");
  $("round-card").scrollIntoView({ block: "start" });
}

// ----------------------------------------------------------------------------------- teach it your set

// The table's calibration: a photo of its own 27 suited tiles in three rows, kept on the server; the table's
// round photos are then named with it too (the scorer sends the table's id with each photo).
function setStatus2(message, isError = false) {
  const el = $("set-status");
  el.replaceChildren(...(message ? [message] : []));
  el.classList.toggle("error", isError);
}

const tileWords = (t) => (TILES.includes(t) ? `${t} ${t[0]}${SUIT_ZH[t[1]]}` : t);

function renderSet(cal) {
  $("set-clear").hidden = !cal;
  $("set-take").replaceChildren(cal ? L("重拍", "Photograph again 重拍") : L("拍这 27 张牌", "Photograph the 27 tiles"));
  const list = $("set-disagreed");
  list.hidden = !cal || !cal.disagreed.length;
  if (!cal) {
    $("set-state").replaceChildren(L("还没教过：这一桌的照片用自带的模型认。如果你们的牌和常见的不一样（颜色、字、条子的画法），"
      + "教它认一次。", "Not taught yet: this table's photos are read with the shipped models. If your tiles look unlike "
      + "the usual sets (other colours, characters or bamboo art), teach it your set once."));
    list.replaceChildren();
    return;
  }
  const named = Math.round(cal.agreement * 27);
  const when = new Date(cal.created_at).toLocaleString();
  const taught = L(` ${when} 教的；不用它时模型认对了 27 张里的 ${named} 张。`,
    ` Taught ${when}; without it the models named ${named} of the 27 tiles as their place says.`);
  // The models were retrained since: the server reads without it until the set is photographed again.
  $("set-state").replaceChildren(cal.recalibrate
    ? L("教过以后模型更新了：请重拍。重拍之前照片不用它认。", "The models were updated since your set was taught: "
        + "photograph it again. Until then photos are read without it.", "b", { class: "error", title: cal.recalibrate })
    : L("这一桌的照片用你们这副牌的校准来认。", "This table's photos are read with your set's calibration.", "b"), taught);
  list.replaceChildren(...cal.disagreed.map((d) => h("li", {}, h("b", {}, tileWords(d.tile)),
    L(` 被认成了 ${tileWords(d.read_as)}`, ` was read as ${tileWords(d.read_as)}`))));
}

async function loadSet() {
  const id = T.table.id;
  const r = await api("GET", `/v1/tables/${id}/calibration`);
  if (!T.table || T.table.id !== id) return;
  if (!r.ok) { setStatus2(errorText(r), true); return; }
  renderSet(r.data.calibration);
  setStatus2("");
}

async function teachSet(file) {
  if (!file || !T.table) return;
  setStatus2(L("正在找这 27 张牌……", "Finding the 27 tiles…"));
  const blob = await uploadBlob(file);
  const form = new FormData();
  form.append("image", blob, "set.jpg");
  try {
    const url = `/v1/tables/${T.table.id}/calibrate`;
    const res = await fetch(url, { method: "POST", body: form, headers: authFor("POST", url) });
    const data = await res.json();
    if (!res.ok) { setStatus2(errorText({ status: res.status, data }), true); return; }
    tableStore.set({ table: data.table }); // the table's version went up
    renderSet(data.calibration);
    const named = Math.round(data.calibration.agreement * 27);
    setStatus2(L(`教好了：27 张都找到了（不用校准时认对 ${named} 张）。这一桌的照片现在用它认。`,
      `Your set is taught: all 27 tiles found (${named} named as placed without it). Round photos are now read with it.`));
  } catch (err) {
    setStatus2(L(`上传失败：${err.message}`, `Upload failed: ${err.message}`), true);
  } finally {
    $("set-file").value = ""; // the same photo again is a new choice
  }
}

async function removeSet() {
  const r = await api("DELETE", `/v1/tables/${T.table.id}/calibration`);
  if (!r.ok) { setStatus2(errorText(r), true); return; }
  tableStore.set({ table: r.data.table });
  renderSet(null);
  setStatus2(L("已删除：照片只用自带的模型认。", "Removed: round photos are read with the shipped models only."));
}

// ------------------------------------------------------------------------------- tiles from the scorer

function photoFor(s) {
  setTarget(s);
  photoForSeat(roundStore.get().how === "self"); // the scorer judges the hand the way the round says it was won
}

function setTarget(s) {
  T.target = s;
  $("use-hand-for").hidden = s == null;
  if (s == null) { $("use-hand").replaceChildren(); return; }
  const name = names()[s];
  $("use-hand-label").replaceChildren(L(`正在认${name}这一局的牌。`, `Reading ${name}'s tiles for the round. `));
  $("use-hand").replaceChildren(L(`把这些牌给${name}`, `Use these tiles for ${name}`));
}

// The scorer's reading (after the player's corrections) into seat T.target: concealed tiles without the winning
// tile, melds, river; the winning tile and the 翻鸡 indicator when the round has none yet.
function useScoredHand() {
  const s = T.target;
  if (s == null) return;
  const read = seatReading();
  if (read.problem) { roundStatus(read.problem, true); return; }
  updateSeat(s, (seat) => ({ tiles: read.concealed, melds: read.melds.map((m) => ({ type: m.type, tile: m.tile, from: "" })),
                             river: read.river || seat.river }));
  const st = roundStore.get();
  if (read.win) {
    dispatch("winTile", read.win);
    if (st.how !== "multi" && st.how !== "draw") dispatch("winner", String(s));
  }
  if (read.flipped && !st.flipped) dispatch("flipped", read.flipped);
  roundStatus(L(`${names()[s]}：从照片取了 ${read.count} 张牌${read.win ? `，胡的牌 ${read.win}` : ""}。`,
    `${names()[s]}: ${read.count} tiles taken from the photo${read.win ? `, winning tile ${read.win}` : ""}.`));
  setTarget(null);
  $(`seat-${s}`).scrollIntoView({ block: "center" });
}


// The round as the photo of the table reads it (tablephoto.js): every seat's tiles, melds and river, who won and
// how, the winning and the flipped tile. A meld keeps who fed it while its tile is unchanged (the photo cannot
// tell); what the photo does not know (the flags, the first 幺鸡) stays as entered.
function fillFromPhoto(read) {
  const st = roundStore.get();
  const seats = SEATS.map((p) => ({ ...st.seats[p], mode: "tiles", drawNotReady: false, tiles: read.seats[p].tiles,
    river: read.seats[p].river, melds: read.seats[p].melds.map((m, i) => {
      const was = st.seats[p].melds[i];
      return { type: m.type, tile: m.tile, from: was && was.tile === m.tile && was.type === m.type ? was.from : "" };
    }) }));
  const patch = { seats, how: read.how, flipped: read.flipped };
  if (read.winner != null) patch.winner = read.winner;
  if (read.discarder != null) patch.discarder = read.discarder;
  if (read.winTile) patch.winTile = read.winTile;
  roundStore.set(patch);
  T.preview = null;
  $("settle-preview").replaceChildren();
  keepDraft();
}

// -------------------------------------------------------------------------------- preview and save

function settleBody(round) {
  return { rules: T.table.rules, dealer: dealerOfRound(), streak: streakOfRound(), ...round };
}

// The bare API calls the players P0–P3; at a table the page names them (a server that takes "names" already does).
const named = (text) => String(text).replace(/\bP([0-3])\b/g, (_, d) => names()[Number(d)]);

async function previewRound() {
  const round = roundOf(roundStore.get());
  if (round.outcome.type === "draw") {
    const empty = SEATS.filter((s) => !round.players[s].not_ready && !round.players[s].concealed);
    if (empty.length) {
      T.preview = null;
      $("settle-preview").replaceChildren();
      const who = empty.map((s) => names()[s]).join(", ");
      roundStatus(L(`${who}：输入手牌，或者勾“不叫”。`, `${who}: type the tiles, or tick 不叫 not ready.`), true);
      inView("round-status");
      return null;
    }
  }
  let r;
  try {
    r = await api("POST", "/v1/settle", settleBody(round));
  } catch (err) {
    // Offline: no preview, but the round can still be saved (queued) as typed.
    T.preview = null;
    $("settle-preview").replaceChildren();
    roundStatus(L(`离线，没有预览（${err.message}）。`, `Offline: no preview (${err.message}).`), true);
    return navigator.onLine ? null : { offline: true };
  }
  if (!r.ok) {
    T.preview = null;
    $("settle-preview").replaceChildren();
    roundStatus(named(errorText(r)), true);
    inView("round-status");
    return null;
  }
  let cha = null;
  const shown = SEATS.filter((s) => round.players[s].concealed);
  if (round.outcome.type === "draw" && shown.length >= 2) {
    // 查叫: who is 叫牌 and each wait with the copies left, from the hands shown.
    const c = await api("POST", "/v1/chajiao", { rules: T.table.rules, dealer: dealerOfRound(),
      players: shown.map((s) => ({ seat: s, concealed: round.players[s].concealed, bao_ting: round.players[s].bao_ting,
                                   melds: round.players[s].melds.map(({ type, tile }) => ({ type, tile })) })) });
    if (c.ok) cha = c.data;
  }
  T.preview = r.data;
  renderPreview(r.data, cha);
  roundStatus(L("结算预览：核对后点保存。", "Settlement preview: check it, then Save round."));
  inView("settle-preview");
  return r.data;
}

function renderPreview(st, cha) {
  const n = names();
  const base = typeof T.table.rules === "object" && T.table.rules.base ? T.table.rules.base : 1;
  const parts = [L("谁给谁", "Who pays whom 谁给谁", "h3")];
  if (cha) {
    const waits = (p) => p.waits.map((w) => `${w.tile} (${w.copies_left})`).join(", ") || "—";
    parts.push(h("table", { id: "chajiao" }, h("tr", {}, h("th", {}, ""), L("查叫", "查叫 who is ready", "th"),
      L("听的牌（还剩几张）", "waits (copies left)", "th")),
      cha.players.map((p) => h("tr", {}, h("td", {}, n[p.seat]),
        h("td", {}, p.ting ? L("叫牌", "叫牌 ready") : p.given ? L("未叫牌", "未叫牌 not ready")
          : L("不叫（没给手牌）", "不叫 not ready (hand not shown)")),
        h("td", {}, waits(p))))));
  }
  parts.push(h("table", { id: "ledger" },
    h("tr", {}, L("付", "pays", "th"), L("给", "to", "th"), L("番", "fan 番", "th", { class: "num" }), L("为了", "for", "th")),
    st.ledger.length ? st.ledger.map((t) => h("tr", { "data-component": t.component },
      h("td", {}, n[t.from]), h("td", {}, n[t.to]), h("td", { class: "num" }, t.fan),
      h("td", { lang: "en" }, named(t.reason))))
      : h("tr", {}, L("谁也不付", "nobody pays anyone", "td", { colspan: "4" }))));
  parts.push(h("table", { id: "preview-totals" },
    h("tr", {}, h("th", {}, ""), L("牌", "hand", "th", { class: "num" }), L("豆", "kongs", "th", { class: "num" }),
      L("鸡", "chickens", "th", { class: "num" }), L(`合计 × 底分 ${base}`, `total × base ${base}`, "th", { class: "num" })),
    st.players.map((p) => h("tr", {}, h("td", {}, n[p.seat], p.ting ? L(" · 叫牌", " · ready") : ""), h("td", { class: "num" }, p.hand),
      h("td", { class: "num" }, p.dou), h("td", { class: "num" }, p.chicken),
      h("td", { class: "num" }, h("b", {}, signed(p.total * base)))))));
  parts.push(L(`下一庄：${n[st.next_dealer]}`, `Next dealer 下一庄: ${n[st.next_dealer]}`, "p", { class: "muted" }));
  parts.push(h("details", { open: true }, L("说明", "Why 说明", "summary"),
    h("ul", { class: "lines", id: "settle-explanation", lang: "en" }, st.explanation.map((s) => h("li", {}, named(s))))));
  $("settle-preview").replaceChildren(...parts);
}

async function saveRound() {
  if (!T.preview) {
    const shown = await previewRound();
    if (!shown) return;
  }
  const round = roundOf(roundStore.get());
  // Rounds already waiting on this device come first: this one expects the version after them.
  const waiting = queued().filter((q) => q.table === T.table.id).length;
  const body = { round, expected_version: T.table.version + waiting };
  let r;
  T.idem = T.idem || (crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random());
  try {
    r = T.editing == null
      ? await api("POST", `/v1/tables/${T.table.id}/rounds`, body, { "Idempotency-Key": T.idem })
      : await api("PUT", `/v1/tables/${T.table.id}/rounds/${T.editing}`, body);
  } catch (err) {
    if (T.editing != null) {
      roundStatus(L(`连不上服务器（${err.message}）：什么都没丢，再点保存。`,
        `No answer from the server (${err.message}): nothing lost, try Save again.`), true);
      return;
    }
    // Offline: kept on this device with its Idempotency-Key, sent when the network returns (once, however
    // often it is retried).
    setQueued([...queued(), { table: T.table.id, body, idem: T.idem }]);
    dropDraft(T.table.id);
    resetRoundForm();
    resetScorer();
    resetTablePhoto();
    renderQueue();
    roundStatus(L("离线：这一局存在手机上，联网后自动发送。",
                  "Offline: this round is kept on this phone and sent when the network returns."));
    inView("round-status");
    return;
  }
  if (r.status === 409) {
    // Someone else saved first: take the table as it is now; what was typed here stays in the form.
    T.idem = null;
    await reloadTable();
    renderSeatNames();
    renderRoundTitle();
    T.preview = null;
    $("settle-preview").replaceChildren();
    roundStatus(savedElsewhere(), true);
    inView("round-status");
    return;
  }
  if (!r.ok) { T.idem = null; roundStatus(named(errorText(r)), true); inView("round-status"); return; }
  const saved = T.editing == null ? L(`第 ${r.data.number} 局已保存。`, `Round ${r.data.number} saved.`)
    : L(`第 ${T.editing} 局已修改，后面的局已重新结算。`, `Round ${T.editing} changed; later rounds settled again.`);
  dropDraft(T.table.id);
  await reloadTable();
  resetRoundForm();
  resetScorer();
  resetTablePhoto();
  roundStatus(saved);
  inView("table-card");
}

const savedElsewhere = () => L("别人先存了一局，已重新载入。你这一局还在：核对后再保存。",
  "Someone else saved a round — reloaded. Your round is still here: check it and save again.");

// Rounds saved offline, sent in order; a 409 puts the round back in the form, as a save would.
let flushing = false;
async function flushQueue() {
  if (flushing || !navigator.onLine) return;
  flushing = true;
  let sent = 0;
  let last = 0; // the number of the last round the server took
  try {
    let items = queued();
    while (items.length) {
      const q = items[0];
      let r;
      try {
        r = await api("POST", `/v1/tables/${q.table}/rounds`, q.body, { "Idempotency-Key": q.idem });
      } catch {
        break; // still offline: try again on the next "online"
      }
      items = queued().slice(1);
      setQueued(items);
      sent += 1;
      if (!T.table || T.table.id !== q.table) continue;
      if (r.ok) {
        last = Math.max(last, r.data.number);
        roundStatus(L(`离线记的第 ${r.data.number} 局已发送。`, `Sent the round kept offline: round ${r.data.number}.`));
      } else {
        if (T.editing == null) { resetRoundForm(true, stateOf(q.body.round)); keepDraft(); }
        roundStatus(r.status === 409 ? savedElsewhere() : errorText(r), true);
      }
    }
  } finally {
    flushing = false;
    renderQueue();
    if (sent && T.table && !T.readonly) await reloadShowing(last);
  }
}

// Just back online, a read can still be answered from the offline copy (the service worker's network may return
// after the page's): read again, a second apart, until the rounds just sent are shown.
async function reloadShowing(number, tries = 5) {
  for (let i = 0; i < tries; i += 1) {
    try {
      await reloadTable();
    } catch {
      // no answer yet: try again
    }
    if (T.rounds.some((r) => r.number >= number)) return;
    await new Promise((ok) => setTimeout(ok, 1000));
  }
}

function renderQueue() {
  const n = T.table ? queued().filter((q) => q.table === T.table.id).length : 0;
  const el = $("queue-note");
  el.hidden = !n;
  el.replaceChildren(L(`${n} 局等联网发送`, `${n} round${n === 1 ? "" : "s"} waiting for the network`));
}

// On a phone the answer is often a screen away from the button: bring it into view.
function inView(id) {
  const el = $(id);
  if (el && !el.hidden) el.scrollIntoView({ block: "nearest", behavior: "instant" });
}

async function undoLast() {
  if (!T.rounds.length) return;
  const last = T.rounds[T.rounds.length - 1].number;
  if (!T.undoArmed) {
    T.undoArmed = true;
    $("undo").replaceChildren(L(`再点一次撤销第 ${last} 局`, `Tap again to undo round ${last}`));
    setTimeout(() => { T.undoArmed = false; undoLabel(); }, 5000);
    return;
  }
  T.undoArmed = false;
  undoLabel();
  const r = await api("DELETE", `/v1/tables/${T.table.id}/rounds/${last}?expected_version=${T.table.version}`);
  if (r.status === 409) {
    await reloadTable();
    tableStatus(L("别人先存了一局，已重新载入。什么都没撤销。", "Someone else saved a round — reloaded. Nothing undone."), true);
    return;
  }
  if (!r.ok) { tableStatus(errorText(r), true); return; }
  await reloadTable();
  if (T.editing == null) renderRoundTitle();
  tableStatus(L(`第 ${last} 局已撤销。`, `Round ${last} undone.`));
}

const undoLabel = () => $("undo").replaceChildren(L("撤销上一局", "Undo the last round"));

// ------------------------------------------------------------------------------------ drafts (per table)

// The round being typed, kept on this device until it is saved: a reload, or a phone that locks and reloads
// the tab, loses nothing. The draft is the round's state (a draft kept as a round by an older page is read too).
function keepDraft() {
  if (!T.table || T.readonly || T.editing != null || !$("seat-0")) return;
  saveDraft(T.table.id, { state: roundStore.get(), saved: Date.now() });
}

function restoreDraft() {
  const d = loadDraft(T.table.id);
  let state;
  try {
    state = d && (d.state ? { ...freshRound(), ...d.state } : d.round ? stateOf(d.round) : null);
  } catch {
    state = null; // a draft this page cannot read: a fresh round rather than a broken form
  }
  if (!state) return;
  resetRoundForm(true, state);
  roundStatus(L("草稿已恢复：上次没保存的这一局还在。", "Draft restored: the round typed before is still here."));
}

// ------------------------------------------------------------------------------------------ sharing

const shareStore = createStore({ open: false, viewUrl: "", editUrl: "", status: "" });

function viewUrl() {
  const t = T.table;
  if (!t) return "";
  const id = T.readonly ? location.pathname.slice(3) : t.view_id || t.id; // a server without view ids: the id
  return `${location.origin}/t/${id}`;
}

function editUrl() {
  const key = T.table && !T.readonly ? editKey(T.table.id) : null;
  return key ? `${location.origin}/#table=${T.table.id}&key=${key}` : "";
}

// The QR code of a link as SVG squares (qrcode-generator computes the modules; nothing leaves the page).
function qrSvg(text) {
  const q = qrcode(0, "M");
  q.addData(text);
  q.make();
  const n = q.getModuleCount(), m = 4, size = n + 2 * m;
  let d = "";
  for (let y = 0; y < n; y++) for (let x = 0; x < n; x++) if (q.isDark(y, x)) d += `M${x + m} ${y + m}h1v1h-1z`;
  const el = svg("svg", { viewBox: `0 0 ${size} ${size}`, width: 200, height: 200, role: "img",
                          "aria-label": `${tr("二维码", "QR code")}: ${text}`, "shape-rendering": "crispEdges" });
  el.append(svg("rect", { width: size, height: size, fill: "#fff" }), svg("path", { d, fill: "#000" }));
  return el;
}

let drawnQr = "";
function renderShare(st) {
  $("share-panel").hidden = !st.open;
  $("share").setAttribute("aria-expanded", String(st.open));
  $("view-link").value = st.viewUrl;
  $("edit-link").value = st.editUrl;
  $("edit-share").hidden = !st.editUrl;
  $("share-status").textContent = say(st.status);
  if (st.open && st.viewUrl && drawnQr !== st.viewUrl) {
    $("qr").replaceChildren(qrSvg(st.viewUrl));
    drawnQr = st.viewUrl;
  }
}

async function copyLink(url, what) {
  try {
    await navigator.clipboard.writeText(url);
  } catch {
    // No clipboard (an http page on the home network): the link is selected for a long-press copy.
    const input = what === "view" ? $("view-link") : $("edit-link");
    input.focus();
    input.select();
    shareStore.set({ status: ["链接已选中，长按复制。", "The link is selected: long-press to copy it."] });
    return;
  }
  shareStore.set({ status: what === "view" ? ["只看链接已复制。", "View link copied."]
    : ["记分链接已复制：它能改分，只给自己人。", "Edit link copied: it can change rounds, share it only with who keeps score."] });
}

// ------------------------------------------------------------------------------- end of the evening

const settleStore = createStore({ perPoint: 1, payments: null, totals: [], players: [], status: "", error: false });

// Whole amounts while the money per point is whole, else cents on every line alike.
const money = (x, perPoint) => x.toFixed(Number.isInteger(perPoint) ? 0 : 2);

function renderSettle(st) {
  const order = SEATS.slice().sort((a, b) => (st.totals[b] ?? 0) - (st.totals[a] ?? 0));
  $("standings").replaceChildren(
    h("tr", {}, h("th", {}, tr("名次", "place")), h("th", {}, tr("玩家", "player")), h("th", { class: "num" }, tr("分", "points")),
      h("th", { class: "num" }, tr("钱", "money"))),
    ...order.map((s, i) => h("tr", { "data-seat": s }, h("td", {}, i + 1), h("td", { class: "nowrap" }, st.players[s]),
      h("td", { class: "num" }, signed(st.totals[s] ?? 0)), h("td", { class: "num" }, money((st.totals[s] ?? 0) * st.perPoint, st.perPoint)))));
  const list = st.payments || [];
  $("payments").replaceChildren(...(st.payments && !list.length
    ? [h("li", { class: "muted" }, tr("谁也不欠谁。", "Nobody owes anybody."))]
    : list.map((p) => h("li", { "data-from": p.from, "data-to": p.to },
        h("b", { class: "nowrap" }, st.players[p.from]), ` → `, h("b", { class: "nowrap" }, st.players[p.to]),
        `: ${p.points} ${tr("分", "points")} = `, h("b", { class: "amount" }, money(p.amount, st.perPoint))))));
  const el = $("settle-status");
  el.textContent = say(st.status);
  el.classList.toggle("error", st.error);
}

function openSettle() {
  $("settle-card").hidden = false;
  settleStore.set({ totals: T.table.totals, players: T.table.players, payments: null, status: "", error: false });
  settleUp();
}

async function settleUp() {
  const perPoint = Number($("per-point").value);
  if (!(perPoint > 0)) {
    settleStore.set({ status: ["每分的钱要大于 0。", "Money per point must be more than 0."], error: true, payments: null });
    return;
  }
  settleStore.set({ perPoint });
  let r;
  try {
    r = await api("GET", `/v1/tables/${T.table.id}/payments?per_point=${perPoint}`);
  } catch (err) {
    settleStore.set({ status: [`连不上服务器（${err.message}）。`, `No answer from the server (${err.message}).`], error: true });
    return;
  }
  if (!r.ok) {
    const missing = r.status === 404 && errorCode(r) === "not_found" && !/table/.test(errorText(r));
    settleStore.set({ payments: null, error: true, status: missing
      ? ["这个服务器还不会算谁给谁：上面是每人的输赢。", "This server cannot work out who pays whom yet: the standings above are each player's total."]
      : errorText(r) });
  } else {
    settleStore.set({ payments: r.data.payments, totals: r.data.totals || T.table.totals, error: false,
                      status: [`最少 ${r.data.payments.length} 笔转账。`, `${r.data.payments.length} transfer${r.data.payments.length === 1 ? "" : "s"}, the fewest there can be.`] });
  }
  inView("settle-card");
}

async function finishTable() {
  const r = await api("POST", `/v1/tables/${T.table.id}/finish`).catch((err) => ({ ok: false, status: 0, data: { error: { message: err.message } } }));
  if (!r.ok) {
    settleStore.set({ error: true, status: r.status === 404 && errorCode(r) === "not_found" && !/table/.test(errorText(r))
      ? ["这个服务器还不能结束一桌。", "This server cannot finish a table yet."] : errorText(r) });
    return;
  }
  await reloadTable();
  $("round-card").hidden = true;
  settleStore.set({ error: false, status: ["这一桌已结束，不能再记分。", "The table is finished: no more rounds."] });
}

let deleteArmed = false;
async function deleteTable() {
  if (!deleteArmed) {
    deleteArmed = true;
    $("delete-table").replaceChildren(L("再点一次删除整桌", "Tap again to delete the whole table"));
    setTimeout(() => { deleteArmed = false; deleteLabel(); }, 5000);
    return;
  }
  deleteArmed = false;
  const id = T.table.id;
  const r = await api("DELETE", `/v1/tables/${id}`).catch((err) => ({ ok: false, status: 0, data: { error: { message: err.message } } }));
  if (!r.ok) { settleStore.set({ error: true, status: errorText(r) }); return; }
  forgetTable(id);
  showStart();
  startError(L("这一桌已删除。", "The table was deleted."));
}

const deleteLabel = () => $("delete-table").replaceChildren(L("删除这一桌", "Delete the table"));

// -------------------------------------------------------------------------------------------- wiring

function route() {
  const share = /^\/t\/([A-Za-z0-9_-]+)$/.exec(location.pathname);
  if (share) {
    T.readonly = true;
    document.body.classList.add("readonly");
    openTable(share[1], { view: true });
    setInterval(() => { if (T.table) reloadTable(); }, 15000); // other phones see new rounds
    return;
  }
  // An edit link (#table=ID&key=KEY): the key is kept on this device and leaves the address bar.
  const m = /^#table(?:=([A-Za-z0-9_-]+))?(?:&key=([A-Za-z0-9_-]+))?$/.exec(location.hash);
  if (!m) { showView(false); return; }
  if (m[1] && m[2]) {
    storeKey(m[1], m[2]);
    history.replaceState(null, "", `/#table=${m[1]}`);
  }
  showView(true);
  if (m[1]) openTable(m[1]);
  else showStart();
}

export function initTable() {
  buildStartForm();
  loadRules();
  $("t-preset").addEventListener("change", presetChanged);
  $("t-profile").addEventListener("change", profileChosen);
  $("t-save-profile").addEventListener("click", saveProfile);
  $("start-form").addEventListener("submit", startTable);
  $("round-card").addEventListener("input", onRoundInput);
  $("round-card").addEventListener("change", onRoundInput);
  roundStore.subscribe(renderRound);
  tableStore.subscribe((st) => { if (st.table) renderTable(); });
  shareStore.subscribe(renderShare);
  settleStore.subscribe(renderSettle);
  $("share").addEventListener("click", () => shareStore.set({ open: !shareStore.get().open, status: "" }));
  $("copy-view").addEventListener("click", () => copyLink(shareStore.get().viewUrl, "view"));
  $("copy-edit").addEventListener("click", () => copyLink(shareStore.get().editUrl, "edit"));
  $("settle-open").addEventListener("click", openSettle);
  $("settle-go").addEventListener("click", settleUp);
  $("finish-table").addEventListener("click", finishTable);
  $("delete-table").addEventListener("click", deleteTable);
  window.addEventListener("online", flushQueue);
  $("preview").addEventListener("click", previewRound);
  $("save-round").addEventListener("click", saveRound);
  $("cancel-edit").addEventListener("click", () => { resetRoundForm(false); });
  $("undo").addEventListener("click", undoLast);
  $("close-table").addEventListener("click", () => { showStart(); });
  // Labels carry both languages (applyLang switches them); what the stores draw with tr() is drawn again.
  document.addEventListener("langchange", () => {
    if (T.table) tableStore.set({});
    else listRecent();
    roundStore.set({});
    shareStore.set({});
    settleStore.set({});
    renderQueue();
  });
  $("use-hand").addEventListener("click", useScoredHand);
  initTablePhoto({ table: () => (T.readonly ? null : T.table), names, colors: COLORS, fill: fillFromPhoto });
  initProposal({ table: () => (T.readonly ? null : T.table) });
  $("set-file").addEventListener("change", (ev) => teachSet(ev.target.files[0]));
  $("set-clear").addEventListener("click", removeSet);
  // A photo for a seat: bring the scorer (photo, tiles to correct) into view while it is read.
  $("file").addEventListener("change", () => { if (T.target != null) $("capture").scrollIntoView({ block: "start" }); });
  $("tab-table").addEventListener("click", (ev) => {
    ev.preventDefault();
    history.pushState(null, "", T.table ? `/#table=${T.table.id}` : "/#table");
    showView(true);
    if (!T.table) showStart();
  });
  $("tab-score").addEventListener("click", (ev) => {
    if (T.readonly) return;
    ev.preventDefault();
    history.pushState(null, "", "/");
    showView(false);
  });
  window.addEventListener("popstate", route);
  $("round-card").hidden = true;
  $("history-card").hidden = true;
  undoLabel();
  deleteLabel();
  renderSet(null);
  route();
}

