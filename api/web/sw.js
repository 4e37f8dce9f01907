// The service worker (served at /sw.js, scope /): keeps the page shell, the font and the tables read, so that
// an open table still shows without the network. Network first (a new version is seen at once when online),
// the cache when offline. Writes are never cached: the page queues rounds saved offline itself.
const CACHE = "zhuoji-v1";
const SHELL = ["/", "/web/style.css", "/web/main.js", "/web/dom.js", "/web/i18n.js", "/web/store.js",
               "/web/device.js", "/web/api.js", "/web/scorer.js", "/web/table.js",
               "/web/tablephoto.js", "/web/proposal.js",
               "/web/vendor/qrcode-generator.mjs", "/web/zhuoji-cjk.woff2", "/web/favicon.svg",
               "/web/icon-192.png", "/web/icon-512.png", "/manifest.webmanifest"];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((k) => k !== CACHE).map((k) => caches.delete(k))))
    .then(() => self.clients.claim()));
});

// Reads worth keeping offline: the shell and a table's own answers (not photos, not previews).
const kept = (url) => url.pathname === "/" || url.pathname.startsWith("/web/") || url.pathname === "/manifest.webmanifest"
  || /^\/v1\/(tables|views)\/[A-Za-z0-9_-]+(\/rounds)?$/.test(url.pathname);

self.addEventListener("fetch", (event) => {
  const req = event.request;
  const url = new URL(req.url);
  if (req.method !== "GET" || url.origin !== self.location.origin) return;
  const page = req.mode === "navigate"; // "/", "/#table=…", "/t/{view_id}": all the same page
  if (!page && !kept(url)) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const res = await fetch(req);
      if (res.ok) cache.put(page ? "/" : req, res.clone());
      return res;
    } catch (err) {
      const hit = await cache.match(page ? "/" : req, { ignoreSearch: !page && url.pathname.startsWith("/web/") });
      if (hit) return hit;
      throw err;
    }
  })());
});
