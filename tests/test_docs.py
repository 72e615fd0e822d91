"""The documentation site: its generated pages are what the code makes today, it builds with no
warning (a broken link or anchor, a page left out of the navigation), every picture it shows
exists, and the built site loads nothing from the network."""

import functools
import html
import http.server
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))


def _make_docs():
    spec = importlib.util.spec_from_file_location("make_docs", ROOT / "scripts" / "make_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["docs/cli.md", "docs/index.md"])
def test_the_generated_pages_are_current(name):
    """docs/cli.md from the argument parsers, docs/index.md from README.md: a changed option or
    README without `python scripts/make_docs.py` fails here."""
    make = _make_docs().PAGES[name]
    assert (ROOT / name).read_text() == make(), f"{name} is not current: run python scripts/make_docs.py"


def test_the_cli_page_has_every_command_and_option():
    from viewer.cli import COMMANDS, build_parser

    page = (DOCS / "cli.md").read_text()
    commands = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    for name in COMMANDS:
        assert f"\n## {name}\n" in page, name
        section = page.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        for action in commands.choices[name]._actions:
            for spelling in action.option_strings:
                if spelling not in ("-h", "--help"):
                    assert f"`{spelling}" in section, (name, spelling)


def _nav_pages(items) -> list[str]:
    pages = []
    for item in items:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def test_every_page_is_in_the_navigation_once():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    nav = _nav_pages(config["nav"])
    assert sorted(nav) == sorted(p.name for p in PAGES)


IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def test_every_picture_shown_exists_and_every_picture_is_shown():
    shown = set()
    for page in [ROOT / "README.md", *PAGES]:
        for target in IMAGE.findall(page.read_text()):
            assert not target.startswith(("http:", "https:", "//")), (page.name, target)
            path = (page.parent / target).resolve()
            assert path.is_file(), (page.name, target)
            shown.add(path)
    pictures = {p.resolve() for p in (DOCS / "images").iterdir()}
    assert pictures - shown == set(), "pictures in docs/images/ that no page shows"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site, built as scripts/docs.sh builds it, with warnings as errors."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    return out, result


def test_the_site_builds_without_a_warning(site):
    out, result = site
    assert result.returncode == 0, result.stderr[-3000:]
    assert "WARNING" not in result.stderr, result.stderr[-3000:]
    for page in PAGES:
        assert (out / page.with_suffix(".html").name).is_file(), page.name


def test_the_api_page_is_filled_from_the_docstrings(site):
    out, _ = site
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", (out / "api.html").read_text())).split())
    # A sentence from the docstrings of a method, a function and the remote client, as written.
    for sentence in ("Where this bone's local pose lives: its linked node (glTF joints), else the bone.",
                     "Write scene as it is now to path",
                     "A Client connected to address"):
        assert sentence in text, sentence


def test_the_site_loads_nothing_from_the_network_and_can_be_searched(site):
    out, _ = site
    for page in out.glob("*.html"):
        html = page.read_text()
        for tag in re.findall(r"<(?:script|link|img)\b[^>]*>", html):
            assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", tag), (page.name, tag)
    assert "fonts.googleapis" not in "".join(p.read_text() for p in out.glob("*.html"))
    index = (out / "search" / "search_index.js").read_text()  # the offline plugin's, for file://
    assert index.startswith("var __index = ") and "retarget" in index


@pytest.fixture(scope="module")
def served_site(site):
    """The built site served over HTTP on 127.0.0.1 (a free port), from a thread."""
    out, result = site
    assert result.returncode == 0, result.stderr[-3000:]

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # no line per request on the test's stderr
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(out)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_every_page_loads_in_headless_chromium_with_its_images_and_the_search_finds_a_command(served_site,
                                                                                              tmp_path):
    """Debian's chromium driven by pip's playwright (no browser download: shared/PLATFORM.md): every
    page of the navigation loads (HTTP 200, no console error, no failed request), every picture on
    it decodes, and typing a command's name into the search box offers its page."""
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.fail("chromium is missing: scripts/setup.sh installs Debian's chromium package")
    from playwright.sync_api import sync_playwright

    nav = _nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"])
    problems, images_seen = [], 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda message: message.type == "error" and problems.append(f"console: {message.text}"))
            page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            # (a request the next page's navigation cuts off is aborted, not failed; a missing file is a 404)
            page.on("requestfailed", lambda request: request.failure != "net::ERR_ABORTED" and problems.append(
                f"failed: {request.url} ({request.failure})"))
            page.on("response", lambda response: response.status >= 400 and problems.append(
                f"{response.status}: {response.url}"))
            for name in nav:
                response = page.goto(served_site + name.replace(".md", ".html"), wait_until="load")
                assert response.status == 200, name  # "load": after every (eager) image has loaded or failed
                images = page.evaluate("Array.from(document.images).map(i => [i.getAttribute('src'), i.naturalWidth])")
                problems += [f"{name}: broken image {src}" for src, width in images if not width > 0]
                images_seen += len(images)
            assert problems == []
            assert images_seen >= len(list((DOCS / "images").iterdir()))  # every picture is on some page

            page.goto(served_site + "index.html", wait_until="load")
            page.click("input.md-search__input")
            page.keyboard.type("synth")
            result = page.locator(".md-search-result__item a[href*='synth.html']").first
            result.wait_for(state="visible", timeout=10_000)
            page.screenshot(path=str(tmp_path / "search.png"))
            assert "synth" in result.inner_text().lower()
            result.click()
            page.wait_for_url("**/synth.html*")
            assert "synth" in page.title().lower()
            assert problems == []
        finally:
            browser.close()
