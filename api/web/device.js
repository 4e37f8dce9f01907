// What this device keeps in localStorage: the tables it created or opened (with their edit keys and their seating
// chart for table photos), the last players, its own house rules, each table's round draft until it is saved, and
// rounds saved while offline. Nothing of it is sent
// anywhere except a key, as the Authorization of that table's writes.

const TABLES = "zhuoji.tables";
const PLAYERS = "zhuoji.players";
const PROFILES = "zhuoji.profiles";
const QUEUE = "zhuoji.queue";
const draftKey = (id) => `zhuoji.draft.${id}`;

function read(key, fallback) {
  try {
    const value = JSON.parse(localStorage.getItem(key));
    return value ?? fallback;
  } catch {
    return fallback; // a value another version wrote badly: start again rather than break the page
  }
}

const write = (key, value) => localStorage.setItem(key, JSON.stringify(value));

// {id: {id, name, players, key, view_id, opened}}, the most recently opened first when listed.
export const knownTables = () => Object.values(read(TABLES, {})).sort((a, b) => b.opened - a.opened);

export function rememberTable(table, extra = {}) {
  const all = read(TABLES, {});
  const old = all[table.id] || {};
  all[table.id] = { ...old, id: table.id, name: table.name, players: table.players, rounds: table.rounds,
                    view_id: table.view_id ?? old.view_id ?? null, opened: Date.now(), ...extra };
  write(TABLES, all);
}

export function forgetTable(id) {
  const all = read(TABLES, {});
  delete all[id];
  write(TABLES, all);
  localStorage.removeItem(draftKey(id));
}

// The seating chart of a table's photos: the player who sits at the bottom of the photo (the photographer); the
// others follow in the order of play (right, top, left). null until chosen on this device.
export const photoBottom = (id) => {
  const seat = (read(TABLES, {})[id] || {}).photo_bottom;
  return Number.isInteger(seat) && seat >= 0 && seat <= 3 ? seat : null;
};

export function setPhotoBottom(id, seat) {
  const all = read(TABLES, {});
  if (!all[id]) return;
  all[id] = { ...all[id], photo_bottom: seat };
  write(TABLES, all);
}

export const editKey = (id) => (read(TABLES, {})[id] || {}).key || null;

export function storeKey(id, key) {
  const all = read(TABLES, {});
  all[id] = { id, name: "", players: [], opened: Date.now(), ...(all[id] || {}), key };
  write(TABLES, all);
}

// House rules saved from this page, kept on this device ({name: rules}): saving a profile on the service is the
// admin's (PUT /v1/profiles needs the admin key), so a table's own choices stay with the phone that made them.
export const deviceProfiles = () => read(PROFILES, {});
export function saveDeviceProfile(name, rules) {
  write(PROFILES, { ...deviceProfiles(), [name]: rules });
}

export const lastPlayers = () => read(PLAYERS, null);
export const rememberPlayers = (players) => write(PLAYERS, players);

export const loadDraft = (id) => read(draftKey(id), null);
export const saveDraft = (id, draft) => write(draftKey(id), draft);
export const dropDraft = (id) => localStorage.removeItem(draftKey(id));

// Rounds saved while offline: [{table, body, idem}], sent in order when the network returns.
export const queued = () => read(QUEUE, []);
export const setQueued = (items) => write(QUEUE, items);
