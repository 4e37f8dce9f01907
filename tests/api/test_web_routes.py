"""The page's own routes without a browser: the share link, the favicon, the webfont and the scripts."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.service.app import create_app


@pytest.fixture(scope="module")
def client():
    app = create_app(model_path="/nonexistent/model.onnx")
    with TestClient(app) as c:
        yield c
    assert app.state.internal_errors == 0


def test_a_share_link_serves_the_page(client):
    r = client.get("/t/0123abcd")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/web/main.js">' in r.text  # absolute asset paths: they load under /t/ too


def test_favicon_and_assets(client):
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.text.lstrip().startswith("<svg")
    for path, kind in [("/web/favicon.svg", "image/svg+xml"), ("/web/zhuoji-cjk.woff2", "font/woff2"),
                       ("/web/table.js", "javascript"), ("/web/scorer.js", "javascript"),
                       ("/web/main.js", "javascript"), ("/sw.js", "javascript"),
                       ("/manifest.webmanifest", "application/manifest+json"), ("/web/icon-192.png", "image/png")]:
        r = client.get(path)
        assert r.status_code == 200 and kind in r.headers["content-type"], path
    assert client.get("/web/zhuoji-cjk.woff2").content[:4] == b"wOF2"


def test_the_page_names_its_icon_and_font(client):
    page = client.get("/").text
    assert 'rel="icon" href="/web/favicon.svg"' in page
    css = client.get("/web/style.css").text
    assert '@font-face { font-family: "Zhuoji CJK"; src: url("/web/zhuoji-cjk.woff2")' in css
    assert 'font: 16px/1.4 "Zhuoji CJK"' in css
