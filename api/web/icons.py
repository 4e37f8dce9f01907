"""Make the installable page's PNG icons (192 and 512 px, for the web app manifest) from favicon.svg.

Headless Chromium draws the SVG on the page's background colour, with a margin, so the icon also reads when a
launcher crops it round. Run again after changing the favicon::

    python -m api.web.icons        # needs Playwright for Python and Debian's chromium (the dev extra)
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

WEB = Path(__file__).resolve().parent
SIZES = (192, 512)
BACKGROUND = "#f4f1ea"  # the page's --bg and the manifest's background_color


def icon_page(svg: str, size: int) -> str:
    data = base64.b64encode(svg.encode()).decode()
    inner = round(size * 0.8)  # a 10 % margin each side
    return (f'<body style="margin:0;background:{BACKGROUND};width:{size}px;height:{size}px;display:grid;'
            f'place-items:center"><img src="data:image/svg+xml;base64,{data}" width="{inner}" height="{inner}">')


def main() -> None:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    svg = (WEB / "favicon.svg").read_text()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for size in SIZES:
            page = browser.new_page(viewport={"width": size, "height": size})
            page.set_content(icon_page(svg, size))
            out = WEB / f"icon-{size}.png"
            page.screenshot(path=str(out))
            print(f"{out.name}: {out.stat().st_size:,} bytes")
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
