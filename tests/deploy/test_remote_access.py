"""Reaching the dashboard from home (deploy/remote-access.md): what can be tested on this machine.

- The login cookie's flags as a real `lavos server` process sets them, over plain http, as a
  proxy on the same box forwards https, and with `--https-cookies`.
- The shipped Caddyfile, as far as it can be checked without Caddy (not installed here; Debian
  12's `caddy` package is installable): its blocks, targets and HSTS; `caddy validate` when the
  binary is there.
- Mosquitto's shipped listeners are the ones the page describes.
Not here: Tailscale, WireGuard, Let's Encrypt, the router and the nftables rules.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support import httpc
from tests.support.matching import found
from tests.support.server import serving

if TYPE_CHECKING:
    from sim.mosquitto import Mosquitto
    from tests.support.server import Serving


REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "deploy" / "remote-access.md"
CADDYFILE = REPO / "deploy" / "caddy" / "Caddyfile"
SERVICE = REPO / "deploy" / "systemd" / "lavos-server.service"
MOSQUITTO_CONF = REPO / "broker" / "mosquitto_conf"
GRAFANA_PORT = 3000  # Grafana's default http_port
YEAR_S = 365 * 24 * 3600


def login_cookie(base: str, **headers: str) -> dict[str, str | bool]:
    """The Set-Cookie of GET /login (it sets the session cookie that carries the CSRF token), as attributes."""
    r = httpc.get(f"{base}/login", headers=headers, timeout=30)
    assert r.status_code == 200
    (cookie,) = [v for k, v in r.headers.multi_items() if k == "set-cookie" and v.startswith("lavos_session=")]
    attrs: dict[str, str | bool] = {}
    for part in cookie.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        attrs[key.lower()] = value.lower() if value else True
    return attrs


@pytest.fixture(scope="module")
def plain_server(mosquitto: Mosquitto, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serving]:
    """`lavos server` as lavos-server.service runs it: no --https-cookies, uvicorn's default trust."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("FORWARDED_ALLOW_IPS", raising=False)  # uvicorn's own default: 127.0.0.1 and ::1
        with serving(mosquitto.port, tmp_path_factory.mktemp("plain")) as s:
            yield s


def test_over_plain_http_the_cookie_is_http_only_lax_and_not_secure(plain_server: Serving) -> None:
    attrs = login_cookie(plain_server.base)
    assert attrs["httponly"] is True and attrs["samesite"] == "lax" and attrs["path"] == "/"
    assert "secure" not in attrs  # a LAN tablet on http://hub:8080 must get its cookie back


def test_behind_a_proxy_on_the_same_box_the_cookie_is_secure(plain_server: Serving) -> None:
    """Caddy or `tailscale serve` on the box connect from 127.0.0.1 and say the phone came over https."""
    attrs = login_cookie(plain_server.base, **{"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.7"})
    assert attrs["secure"] is True and attrs["httponly"] is True and attrs["samesite"] == "lax"


def test_https_cookies_flag_makes_it_secure_over_plain_http(mosquitto: Mosquitto, tmp_path: Path) -> None:
    # A proxy elsewhere is trusted only when named; here a made-up one, so loopback is not trusted.
    with serving(mosquitto.port, tmp_path, "--https-cookies", env={"FORWARDED_ALLOW_IPS": "192.0.2.1"}) as s:
        attrs = login_cookie(s.base)
    assert attrs["secure"] is True and attrs["httponly"] is True and attrs["samesite"] == "lax"


# ---- the Caddyfile --------------------------------------------------------------------------


def caddy_blocks() -> dict[str, str]:
    """Top-level blocks of the Caddyfile: address (or "" for the global options) → body.
    Checks the braces balance; comments stripped (Caddy's `#` starts a comment after whitespace)."""
    text = "\n".join(re.sub(r"(^|\s)#.*$", "", line) for line in CADDYFILE.read_text(encoding="utf-8").splitlines())
    blocks: dict[str, str] = {}
    depth, start, head = 0, 0, ""
    for i, ch in enumerate(text):
        if ch == "{" and not (i + 1 < len(text) and text[i + 1] == "$"):
            if depth == 0:
                head = text[start:i].strip()
                start = i + 1
            depth += 1
        elif ch == "}" and depth > 0 and not _closes_placeholder(text, i):
            depth -= 1
            if depth == 0:
                assert head not in blocks, f"two blocks for {head!r}"
                blocks[head] = text[start:i]
                start = i + 1
        assert depth >= 0
    assert depth == 0 and not text[start:].strip(), "unbalanced braces or text after the last block"
    return blocks


def _closes_placeholder(text: str, i: int) -> bool:
    opening = text.rfind("{", 0, i)
    return opening >= 0 and text[opening + 1 : opening + 2] == "$" and "\n" not in text[opening:i]


def test_the_caddyfile_proxies_each_site_with_hsts() -> None:
    blocks = caddy_blocks()
    assert "email {$LAVOS_ACME_EMAIL}" in blocks.pop("")
    lavos_port = int(found(r"--http [0-9.]+:(\d+)", SERVICE.read_text(encoding="utf-8"))[1])
    targets = {"{$LAVOS_HOSTNAME}": lavos_port, "{$LAVOS_GRAFANA_HOSTNAME}": GRAFANA_PORT}
    assert set(blocks) == set(targets)
    for site, body in blocks.items():
        assert re.findall(r"reverse_proxy\s+(\S+)", body) == [f"127.0.0.1:{targets[site]}"], site
        max_age = re.search(r'Strict-Transport-Security\s+"max-age=(\d+)', body)
        assert max_age and int(max_age[1]) >= YEAR_S, site
        # Automatic https stays on: no plain-http site, no self-signed certificate.
        assert "tls internal" not in body and "auto_https off" not in CADDYFILE.read_text(encoding="utf-8")
    assert not any(site.startswith("http://") or ":80" in site for site in blocks)


def test_the_caddyfile_placeholders_are_documented() -> None:
    text = CADDYFILE.read_text(encoding="utf-8")
    doc = DOC.read_text(encoding="utf-8")
    for name in set(re.findall(r"\{\$([A-Z_]+)\}", text)):
        assert f"Environment={name}=" in text and name in doc, name


@pytest.mark.skipif(shutil.which("caddy") is None, reason="caddy is not installed (Debian 12 package `caddy` is installable)")
def test_caddy_validates_the_caddyfile() -> None:
    env = {"LAVOS_HOSTNAME": "herna.example.sk", "LAVOS_GRAFANA_HOSTNAME": "grafana.herna.example.sk", "LAVOS_ACME_EMAIL": "a@example.sk"}
    done = subprocess.run(
        ["caddy", "validate", "--adapter", "caddyfile", "--config", str(CADDYFILE)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr


# ---- Mosquitto --------------------------------------------------------------------------------


def listeners(commented: bool) -> list[list[str]]:
    prefix = "#listener " if commented else "listener "
    return [line.split()[1:] for line in MOSQUITTO_CONF.read_text(encoding="utf-8").splitlines() if line.startswith(prefix)]


def test_mosquitto_listens_as_the_page_says() -> None:
    # TLS on every interface (no address: the LAN's nodes reach it), plain MQTT on loopback only.
    assert listeners(commented=False) == [["1883", "127.0.0.1"], ["8883"]]
    assert listeners(commented=True) == []
    assert "allow_anonymous false" in MOSQUITTO_CONF.read_text(encoding="utf-8")
    doc = DOC.read_text(encoding="utf-8")
    assert "`listener 8883` with no address" in doc and "`listener 1883 127.0.0.1`" in doc and "never forward 1883 or 8883" in doc
    # The firewall opens the broker's TLS port and the server's plain port to the LAN only; 1883 not at all.
    (lan_rule,) = [line for line in doc.splitlines() if "ip saddr" in line]
    assert all(port in lan_rule for port in ("8883", "8080", "3000")) and "1883" not in lan_rule
    (public,) = [line for line in doc.splitlines() if line.strip().startswith("tcp dport { 80, 443 }")]
    assert "1883" not in public and "8080" not in public


def test_the_readme_links_the_page() -> None:
    assert "(deploy/remote-access.md)" in (REPO / "README.md").read_text(encoding="utf-8")
