// The table screen's "相机读到一局 The camera proposes a round": a camera fixed over the table
// (zhuoji live --table --server …) posts each round it reads to /v1/tables/{id}/proposal. While a table is open
// for writing here, this asks for it every few seconds (the answer is revalidated by its ETag, so an unchanged
// proposal costs no frame again) and shows it with its frame; a tap fills the round form exactly as a photo of the
// table does (tablephoto.js), then the players correct, preview and save as usual. Saving a round clears the
// proposal on the server; Dismiss deletes it. A proposal never becomes a round by itself.
import { $ } from "./dom.js";
import { api, errorText } from "./api.js";
import { L, tr } from "./i18n.js";
import { createStore } from "./store.js";
import { fillFromProposal } from "./tablephoto.js";

const POLL_MS = 3000;

// proposal: the server's (null: none waits); used: the id filled into the form here (not offered again); status: why
// Dismiss failed ([zh, en], or the server's words).
const proposalStore = createStore({ proposal: null, used: null, status: null });
let host = null; // {table(): the table open for writing here, or null}
let asking = false;

async function poll() {
  const t = host.table();
  if (!t || t.finished) {
    if (proposalStore.get().proposal) proposalStore.set({ proposal: null, status: null });
    return;
  }
  if (document.hidden || asking) return;
  asking = true;
  let r;
  try {
    r = await api("GET", `/v1/tables/${t.id}/proposal`);
  } catch {
    return; // offline: asked again next time
  } finally {
    asking = false;
  }
  const now = host.table();
  if (!r.ok || !r.data || !now || now.id !== t.id) return; // another table was opened meanwhile
  const p = r.data.proposal;
  const was = proposalStore.get().proposal;
  if ((p && p.id) !== (was && was.id)) proposalStore.set({ proposal: p, status: null });
}

function useIt() {
  const { proposal } = proposalStore.get();
  if (!proposal) return;
  proposalStore.set({ used: proposal.id });
  fillFromProposal(proposal);
}

async function dismiss() {
  const t = host.table();
  const { proposal } = proposalStore.get();
  if (!t || !proposal) return;
  let r;
  try {
    r = await api("DELETE", `/v1/tables/${t.id}/proposal?proposal=${encodeURIComponent(proposal.id)}`);
  } catch (err) {
    proposalStore.set({ status: [`连不上服务器（${err.message}）：再点一次。`, `No answer from the server (${err.message}): try again.`] });
    return;
  }
  if (!r.ok) { proposalStore.set({ status: errorText(r) }); return; }
  proposalStore.set({ proposal: null, status: null });
}

function render(st) {
  const p = st.proposal;
  const card = $("tp-proposal");
  card.hidden = !p || p.id === st.used;
  if (card.hidden) return;
  const img = $("tp-proposal-img");
  const src = p.frame ? `data:image/jpeg;base64,${p.frame}` : "";
  if (img.getAttribute("src") !== src) img.src = src;
  img.hidden = !p.frame;
  const tiles = p.table.detections.filter((d) => d.seat != null).length;
  const time = new Date(p.created_at).toLocaleTimeString(tr("zh-CN", "en-GB"), { hour: "2-digit", minute: "2-digit" });
  $("tp-proposal-what").replaceChildren(L(`${time}，四家的 ${tiles} 张牌：点一下填进这一局，核对后保存。`,
    `${time}, ${tiles} tiles of the four seats: tap to fill this round, check it, then save.`));
  const status = $("tp-proposal-status");
  status.textContent = Array.isArray(st.status) ? tr(...st.status) : st.status || "";
  status.hidden = !st.status;
}

// host: {table()}: the open table when this device may write to it, else null.
export function initProposal(lent) {
  host = lent;
  $("tp-proposal-use").addEventListener("click", useIt);
  $("tp-proposal-img").addEventListener("click", useIt);
  $("tp-proposal-dismiss").addEventListener("click", dismiss);
  proposalStore.subscribe(render);
  document.addEventListener("langchange", () => proposalStore.set({}));
  document.addEventListener("visibilitychange", poll);
  setInterval(poll, POLL_MS);
  poll();
}
