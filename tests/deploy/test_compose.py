"""deploy/compose: the central stack's compose file checked against the repository.

No container engine runs on the test machines, so the file is validated instead of started:
every mounted path exists, host ports do not clash, `lavos server` knows every option the
lavos service passes, every variable has a value in .env.example, and Grafana gets every
variable its provisioning files read.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.hub import REPO
from tests.support.matching import found
from tests.support.victoria import shipped_vm_flags, shipped_vmalert_flags

COMPOSE_DIR = REPO / "deploy" / "compose"
COMPOSE = COMPOSE_DIR / "compose.yaml"
ENV_EXAMPLE = COMPOSE_DIR / ".env.example"
SECRETS = COMPOSE_DIR / "secrets"
VAR = re.compile(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-?][^}]*)?\}")


def env_example() -> dict[str, str]:
    pairs = (line.split("=", 1) for line in ENV_EXAMPLE.read_text().splitlines() if line.strip() and not line.startswith("#"))
    return {k.strip(): v.strip() for k, v in pairs}


def interpolate(text: str, env: dict[str, str]) -> str:
    return VAR.sub(lambda m: env[m.group(1)], text).replace("$$", "$")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    result: dict[str, Any] = yaml.safe_load(interpolate(COMPOSE.read_text(), env_example()))
    return result


def bind_mounts(service: dict[str, Any]) -> list[tuple[str, str]]:
    """(host path, container path) of every bind mount; named volumes are left out."""
    out = []
    for spec in service.get("volumes", []):
        source, target = spec.split(":")[:2]
        if source.startswith((".", "/")):
            out.append((source, target))
    return out


def test_the_services_and_their_images(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"mosquitto", "lavos", "victoriametrics", "vmalert", "grafana"}
    assert services["mosquitto"]["image"].startswith("eclipse-mosquitto:2")
    # The version the tests run: Debian 12's victoria-metrics package.
    assert services["victoriametrics"]["image"] == "victoriametrics/victoria-metrics:v1.79.5"
    assert services["vmalert"]["image"] == "victoriametrics/vmalert:v1.79.5"
    assert services["lavos"]["build"]["dockerfile"] == "deploy/compose/Dockerfile"
    assert (COMPOSE_DIR / services["lavos"]["build"]["context"]).resolve() == REPO


def test_every_variable_is_defined_in_env_example() -> None:
    used = set(VAR.findall(COMPOSE.read_text()))
    defined = env_example()
    assert used - set(defined) == set(), "add these to deploy/compose/.env.example"
    assert set(defined) - used == set(), "unused in compose.yaml: drop them from .env.example"
    assert all(defined.values())


def test_every_mounted_path_exists_or_is_a_secret_the_readme_makes(compose: dict[str, Any]) -> None:
    readme = (COMPOSE_DIR / "README.md").read_text()
    assert (SECRETS / ".gitignore").read_text().splitlines()[-2:] == ["*", "!.gitignore"]  # secrets never committed
    sources = [src for svc in compose["services"].values() for src, _ in bind_mounts(svc)]
    sources += [s["file"] for s in compose["secrets"].values()]
    for src in sources:
        path = (COMPOSE_DIR / src).resolve()
        if path.is_relative_to(SECRETS):
            assert path.name in readme, f"{src}: README.md must say how to make it"
        else:
            assert path.exists(), f"{src} is mounted but does not exist in the repository"
            assert path.is_relative_to(REPO), f"{src} lies outside the repository"
    named = {
        spec.split(":")[0] for svc in compose["services"].values() for spec in svc.get("volumes", []) if not spec.startswith((".", "/"))
    }
    assert named <= set(compose["volumes"]), "a named volume is used but not declared"
    for svc in compose["services"].values():
        assert set(svc.get("secrets", [])) <= set(compose["secrets"])


def test_host_ports_do_not_clash(compose: dict[str, Any]) -> None:
    host_ports = []
    for svc in compose["services"].values():
        for spec in svc.get("ports", []):
            *host, _container = str(spec).split(":")
            host_ports.append(int(host[-1]))
    assert len(host_ports) == len(set(host_ports)), host_ports


def test_mosquitto_gets_our_config_acl_and_password_file_where_the_config_says(compose: dict[str, Any]) -> None:
    conf = (REPO / "deploy" / "mosquitto" / "lavos.conf").read_text()
    settings = dict(line.split(None, 1) for line in conf.splitlines() if line and not line.startswith("#") and " " in line)
    mounts = {target: (COMPOSE_DIR / src).resolve() for src, target in bind_mounts(compose["services"]["mosquitto"])}
    command = " ".join(compose["services"]["mosquitto"]["command"])
    config_in_container = found(r"mosquitto -c (\S+)", command).group(1)
    assert mounts[config_in_container] == (REPO / "deploy" / "mosquitto" / "lavos.conf").resolve()
    assert mounts[settings["acl_file"]] == (REPO / "deploy" / "mosquitto" / "acl").resolve()  # a link to broker/mosquitto_acl
    assert mounts[settings["password_file"]].is_relative_to(SECRETS)
    volumes = {spec.split(":")[1].rstrip("/") for spec in compose["services"]["mosquitto"]["volumes"]}
    # retained messages survive a restart: without persistence_location (Debian's main config sets
    # it) Mosquitto writes its database to the working directory, which must be the volume
    store = settings.get("persistence_location") or found(r"cd (\S+) && exec mosquitto", command).group(1)
    assert settings["persistence"] == "true" and store.rstrip("/") in volumes
    for tls_file in re.findall(r"^#?(?:cafile|certfile|keyfile) (\S+)", conf, re.M):
        assert Path(tls_file).parent.as_posix() in mounts, f"{tls_file}: the TLS listener's files are not mounted"


def server_options() -> set[str]:
    done = subprocess.run(
        [sys.executable, "-m", "lavos_cli", "server", "--help"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    return set(re.findall(r"(--[a-z][a-z-]+)", done.stdout))


def test_the_lavos_command_uses_only_options_lavos_server_knows(compose: dict[str, Any]) -> None:
    lavos = compose["services"]["lavos"]
    command = lavos["command"]
    assert command[0] == "server"
    args = dict(arg.split("=", 1) for arg in command[1:])
    assert set(args) <= server_options(), set(args) - server_options()
    # and the values point at things this compose file provides
    mounts = {target for _, target in bind_mounts(lavos)}
    assert args["--venue"] in mounts
    assert args["--mqtt-password-file"].removeprefix("/run/secrets/") in lavos["secrets"]
    assert re.match(r"mqtts?://lavos-hub@mosquitto:", args["--mqtt"])
    assert args["--influx"] == "http://victoriametrics:8428" and "--influx-token-file" not in args  # VictoriaMetrics needs none
    assert args["--http"].endswith(":8080") and any(str(p).endswith(":8080") for p in lavos["ports"])


def _flags(args: list[str]) -> dict[str, str]:
    return dict(a.lstrip("-").split("=", 1) for a in args)


def test_victoriametrics_and_vmalert_run_as_the_shipped_files_say(compose: dict[str, Any]) -> None:
    """The same flags as deploy/vmalert/victoria-metrics.default and deploy/systemd/lavos-vmalert.service
    (which tests/deploy/test_monitoring.py runs), but for the addresses and paths inside the containers."""
    vm = _flags(compose["services"]["victoriametrics"]["command"])
    assert {k: v for k, v in vm.items() if k not in ("storageDataPath", "httpListenAddr")} == _flags(list(shipped_vm_flags()))
    assert "ports" not in compose["services"]["victoriametrics"]  # it has no login
    vmalert = compose["services"]["vmalert"]
    flags, shipped = _flags(vmalert["command"]), shipped_vmalert_flags()
    local = ("rule", "datasource.url", "notifier.url", "notifier.bearerTokenFile", "httpListenAddr")
    assert {k: v for k, v in flags.items() if k not in local} == {k: v for k, v in shipped.items() if k not in local}
    mounts = {target: (COMPOSE_DIR / src).resolve() for src, target in bind_mounts(vmalert)}
    assert mounts[flags["rule"]] == REPO / "deploy" / "vmalert" / "lavos-rules.yml"
    assert flags["datasource.url"] == "http://victoriametrics:8428"
    assert flags["notifier.url"] == "http://lavos:8080" + shipped["notifier.url"].split(":8080", 1)[1]
    assert flags["notifier.bearerTokenFile"].removeprefix("/run/secrets/") in vmalert["secrets"]


def test_grafana_gets_the_provisioning_and_every_variable_it_reads(compose: dict[str, Any]) -> None:
    grafana = compose["services"]["grafana"]
    mounts = {(COMPOSE_DIR / src).resolve(): target for src, target in bind_mounts(grafana)}
    assert mounts[REPO / "deploy" / "grafana" / "provisioning"] == "/etc/grafana/provisioning"
    provided = set(grafana["environment"]) | set(re.findall(r"export (\w+)=", " ".join(grafana.get("entrypoint", []))))
    for f in (REPO / "deploy" / "grafana" / "provisioning").rglob("*.y*ml"):
        wanted = set(re.findall(r"\$\{?([A-Z_][A-Z0-9_]*)", f.read_text()))
        assert wanted <= provided, f"{f.relative_to(REPO)} reads {wanted - provided}, which compose.yaml does not set"
    dashboards_at = grafana["environment"].get("LAVOS_GRAFANA_DASHBOARDS")
    if dashboards_at:
        assert mounts[REPO / "deploy" / "grafana" / "dashboards"] == dashboards_at
    assert grafana["environment"]["LAVOS_METRICS_URL"] == "http://victoriametrics:8428"


def test_the_dockerfile_copies_what_exists_and_runs_lavos() -> None:
    text = (COMPOSE_DIR / "Dockerfile").read_text()
    for line in re.findall(r"^COPY (.+)$", text, re.M):
        *sources, _dest = line.split()
        for src in sources:
            assert (REPO / src).exists(), f"Dockerfile copies {src}, which is not in the repository"
    copied = {s for line in re.findall(r"^COPY (.+)$", text, re.M) for s in line.split()[:-1]}
    packages = found(r"include = \[(.*?)\]", (REPO / "pyproject.toml").read_text()).group(1)
    for pkg in re.findall(r'"(\w+)\*"', packages):
        assert pkg in copied, f"pyproject.toml packages {pkg}, the image does not copy it"
    assert re.search(r'^ENTRYPOINT \["lavos"\]', text, re.M)
    python = re.search(r"^FROM python:(\d+)\.(\d+)", text, re.M)
    assert python and (int(python[1]), int(python[2])) >= (3, 11)


def test_docker_compose_config_accepts_it(tmp_path: Path) -> None:
    docker = shutil.which("docker")
    if docker is None or subprocess.run([docker, "compose", "version"], capture_output=True).returncode != 0:
        pytest.skip("the docker compose plugin is not installed here, so `docker compose config` cannot check the file")
    secrets = [s["file"] for s in yaml.safe_load(COMPOSE.read_text())["secrets"].values()]
    missing = [s for s in secrets if not (COMPOSE_DIR / s).exists()]
    for s in missing:  # config only checks that secret files exist; placeholders, removed below
        (COMPOSE_DIR / s).write_text("placeholder\n")
    try:
        done = subprocess.run(
            [docker, "compose", "--env-file", str(ENV_EXAMPLE), "-f", str(COMPOSE), "config", "--quiet"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        for s in missing:
            (COMPOSE_DIR / s).unlink()
    assert done.returncode == 0, done.stderr
