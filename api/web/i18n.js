// Chinese first, with an English switch: every label is given in both languages, as data-zh / data-en on the
// element that shows it (static ones in index.html, drawn ones through L()), or through tr() where a store's render
// runs again on a switch (the "langchange" event). The choice is kept per device.
import { $, h } from "./dom.js";

const KEY = "zhuoji.lang";

export const lang = () => (localStorage.getItem(KEY) === "en" ? "en" : "zh");

// The label of the current language: tr("结账", "Settle up").
export const tr = (zh, en) => (lang() === "en" ? en : zh);

// A label in both languages, shown in the current one and switched with the page: L("结账", "Settle up").
export const L = (zh, en, tag = "span", attrs = {}) => h(tag, { ...attrs, "data-zh": zh, "data-en": en }, tr(zh, en));

export function applyLang() {
  const en = lang() === "en";
  document.documentElement.lang = en ? "en" : "zh-Hans";
  for (const el of document.querySelectorAll("[data-zh][data-en]")) el.textContent = en ? el.dataset.en : el.dataset.zh;
  $("lang").textContent = en ? "中文" : "English";
  document.dispatchEvent(new CustomEvent("langchange"));
}

export function initLang() {
  $("lang").addEventListener("click", () => {
    localStorage.setItem(KEY, lang() === "en" ? "zh" : "en");
    applyLang();
  });
  applyLang();
}
