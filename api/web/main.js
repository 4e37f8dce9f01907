// 捉鸡 page: the scorer (scorer.js) and the table screen (table.js) as ES modules, no build step. This module
// starts them, the language switch, the offline badge and the service worker (offline shell, installable).
import { $ } from "./dom.js";
import { initLang } from "./i18n.js";
import { initScorer } from "./scorer.js";
import { T, initTable } from "./table.js";

function showOnline() {
  $("offline-badge").hidden = navigator.onLine;
}

initLang();
initScorer();
initTable();
window.addEventListener("online", showOnline);
window.addEventListener("offline", showOnline);
showOnline();
// The table's state, for the browser's console and the browser tests (read only by convention).
window.T = T;
if ("serviceWorker" in navigator) {
  navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => {}); // the page works without it
}
