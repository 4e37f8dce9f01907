// Chinese first, with an English switch: static labels carry data-zh / data-en; the choice is kept per device.
import { $ } from "./dom.js";

const KEY = "zhuoji.lang";

export const lang = () => (localStorage.getItem(KEY) === "en" ? "en" : "zh");

// The label of the current language: tr("结账", "Settle up").
export const tr = (zh, en) => (lang() === "en" ? en : zh);

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
