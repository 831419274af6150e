"""The documentation site and ``focal evaluate --plot``'s report, as a reader meets them.

The built site (``python -m sphinx -W -b html docs docs/_build/html``, or ``FOCAL_DOCS_HTML``) is
checked in two ways: every internal link and image of every page leads somewhere (a static
check of the HTML files), and a few pages (the index, a user-guide page, a gallery page, an API
page) and the HTML report of ``focal evaluate --plot`` on the sample data are opened in headless
Chromium (Debian's ``chromium`` and ``chromium-driver``, driven by selenium): no console error,
no image that did not load, no link to a missing page or anchor. A screenshot of each page
checked is kept in ``FOCAL_SCREENSHOTS`` (default ``docs/_build/screenshots``, ignored by git).

Without a built site or a browser these tests skip, unless ``FOCAL_REQUIRE_BROWSER=1`` (CI sets
it): then they fail.
"""

from __future__ import annotations

import functools
import html
import http.server
import os
import pathlib
import posixpath
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SITE = pathlib.Path(os.environ.get("FOCAL_DOCS_HTML", ROOT / "docs" / "_build" / "html"))
SCREENSHOTS = pathlib.Path(
    os.environ.get("FOCAL_SCREENSHOTS", ROOT / "docs" / "_build" / "screenshots")
)
REQUIRED = os.environ.get("FOCAL_REQUIRE_BROWSER") == "1"
# the pages opened in the browser: the index, a user-guide page, a gallery page, an API page
PAGES = (
    "index.html",
    "user_guide/plots.html",
    "gallery/speaker_fusion.html",
    "reference/api/focal.metrics.html",
)
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1600",
)

pytestmark = pytest.mark.browser


def _unavailable(reason):
    if REQUIRED:
        pytest.fail(f"{reason} (FOCAL_REQUIRE_BROWSER=1)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def site():
    if not (SITE / "index.html").is_file():
        _unavailable(f"the site is not built ({SITE}/index.html)")
    return SITE


_ATTRIBUTES = re.compile(r"<(a|img|link|script)\b([^>]*)>", re.I)
_VALUE = re.compile(r'\b(href|src|rel)\s*=\s*"([^"]*)"', re.I)
_IDS = re.compile(r'\b(?:id|name)\s*=\s*"([^"]*)"', re.I)


class _Page:
    """The ids of a page and the targets of its links, images, stylesheets and scripts."""

    def __init__(self, text):
        self.ids = {html.unescape(i) for i in _IDS.findall(text)}
        self.targets = []
        for tag, attributes in _ATTRIBUTES.findall(text):
            values = {k.lower(): html.unescape(v) for k, v in _VALUE.findall(attributes)}
            tag = tag.lower()
            if tag == "a" and values.get("href"):
                self.targets.append(("link", values["href"]))
            elif tag == "img" and values.get("src"):
                self.targets.append(("image", values["src"]))
            elif tag == "link" and values.get("href") and "stylesheet" in values.get("rel", ""):
                self.targets.append(("stylesheet", values["href"]))
            elif tag == "script" and values.get("src"):
                self.targets.append(("script", values["src"]))


@functools.cache
def _parse(path: pathlib.Path) -> _Page:
    return _Page(path.read_text(encoding="utf-8", errors="replace"))


@functools.cache
def _files(root: pathlib.Path) -> frozenset:
    """Every file of the site, as a path relative to its root."""
    return frozenset(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _broken_targets(page: pathlib.Path, root: pathlib.Path):
    """The internal links and resources of ``page`` that lead nowhere."""
    files, here = _files(root), page.relative_to(root).parent.as_posix()
    broken = []
    for kind, target in _parse(page).targets:
        parts = urllib.parse.urlsplit(target)
        if parts.scheme or target.startswith(("//", "mailto:", "javascript:")):
            continue  # outside the site: not fetched (CI has no network beyond registries)
        path = page.relative_to(root).as_posix()
        if parts.path:
            path = posixpath.normpath(posixpath.join(here, urllib.parse.unquote(parts.path)))
        if path not in files and posixpath.join(path, "index.html") in files:
            path = posixpath.join(path, "index.html")
        if path not in files:
            broken.append(f"{kind} {target}: no such file")
        elif parts.fragment and path.endswith(".html"):
            if urllib.parse.unquote(parts.fragment) not in _parse(root / path).ids:
                broken.append(f"{kind} {target}: no anchor #{parts.fragment}")
    return broken


def test_every_page_of_the_site_links_somewhere(site):
    pages = sorted(p for p in site.rglob("*.html") if "_static" not in p.parts)
    assert len(pages) > 100  # the API pages are there
    broken = {p.relative_to(site).as_posix(): b for p in pages if (b := _broken_targets(p, site))}
    assert not broken, broken


def test_broken_links_are_found(tmp_path):
    (tmp_path / "a.html").write_text('<p id="x"><a href="b.html">b</a><a href="#y">y</a></p>')
    (tmp_path / "c.html").write_text('<a href="a.html#x">a</a><img src="i.png">')
    assert _broken_targets(tmp_path / "a.html", tmp_path) == [
        "link b.html: no such file",
        "link #y: no anchor #y",
    ]
    assert _broken_targets(tmp_path / "c.html", tmp_path) == ["image i.png: no such file"]


# -- in the browser --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    webdriver = pytest.importorskip("selenium.webdriver") if not REQUIRED else None
    if webdriver is None:
        from selenium import webdriver
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver_path:
        _unavailable("Debian's chromium and chromium-driver are not installed")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=driver_path)
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def serve():
    """``serve(folder)``: the base address of ``folder`` served on the loopback interface."""
    servers = []

    def start(folder):
        handler = functools.partial(_Quiet, directory=str(folder))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


_BROKEN_IMAGES = """
window.scrollTo(0, document.body.scrollHeight);
return Array.from(document.images)
    .filter(img => !(img.complete && img.naturalWidth > 0))
    .map(img => img.currentSrc || img.src);
"""
_LINKS = "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href);"


def _status(url):
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, b""


def _console_errors(driver):
    """The errors the page logged on the console since the last call."""
    return [
        f"console: {entry['message']}"
        for entry in driver.get_log("browser")
        # a page without an icon link makes the browser ask the server for /favicon.ico; a page
        # opened as a file (an HTML report) asks nothing: that 404 is the test server's
        if entry["level"] == "SEVERE" and "/favicon.ico - " not in entry["message"]
    ]


def _check_in_browser(driver, url, screenshot):
    """Open ``url``; return its problems (console errors, images, links) and keep a screenshot."""
    driver.get(url)
    driver.execute_script("return document.readyState")
    problems = _console_errors(driver)
    broken_images = driver.execute_script(_BROKEN_IMAGES)
    if broken_images:  # lazy images: give them a moment once scrolled into view
        driver.implicitly_wait(2)
        broken_images = driver.execute_script(_BROKEN_IMAGES)
    problems += [f"image did not load: {src}" for src in broken_images]
    origin = urllib.parse.urlsplit(url).netloc
    for href in sorted(set(driver.execute_script(_LINKS))):
        parts = urllib.parse.urlsplit(href)
        if parts.netloc != origin:
            continue
        status, body = _status(urllib.parse.urlunsplit(parts._replace(fragment="")))
        if status != 200:
            problems.append(f"link {href}: HTTP {status}")
        elif parts.fragment:
            anchors = _Page(body.decode("utf-8", errors="replace")).ids
            if urllib.parse.unquote(parts.fragment) not in anchors:
                problems.append(f"link {href}: no anchor #{parts.fragment}")
    driver.execute_script("window.scrollTo(0, 0);")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(screenshot))
    return problems + _console_errors(driver)


@pytest.mark.parametrize("page", PAGES)
def test_site_page_in_the_browser(page, site, browser, serve):
    name = page.replace("/", "_").replace(".html", ".png")
    problems = _check_in_browser(browser, serve(site) + page, SCREENSHOTS / f"site_{name}")
    assert not problems, problems


def test_evaluate_report_in_the_browser(browser, serve, tmp_path):
    samples = ROOT / "data_samples" / "speaker_detection"
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    result = subprocess.run(
        [sys.executable, "-m", "focal", "evaluate"]
        + [str(samples / f"eval_sys{i}.scores") for i in (1, 2, 3)]
        + ["--key", str(samples / "eval.key"), "--plot", str(tmp_path / "report")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    url = serve(tmp_path / "report") + "index.html"
    problems = _check_in_browser(browser, url, SCREENSHOTS / "evaluate_report.png")
    assert not problems, problems


def test_a_broken_image_is_seen_by_the_browser(browser, serve, tmp_path):
    (tmp_path / "index.html").write_text(
        '<html><body><img src="missing.png"><a href="gone.html">gone</a></body></html>'
    )
    problems = _check_in_browser(browser, serve(tmp_path) + "index.html", tmp_path / "shot.png")
    assert any("image did not load" in p for p in problems), problems
    assert any("gone.html: HTTP 404" in p for p in problems), problems
    assert any(p.startswith("console:") for p in problems), problems  # the 404 of the image
