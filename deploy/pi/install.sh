#!/usr/bin/env bash
# Install (or bring up to date) the Lavos table node agent on a Raspberry Pi. Safe to run again:
# what is already right is left alone, and the agent restarts only if something changed.
#
#   sudo deploy/pi/install.sh --config pool-01.toml --password-file pool-01.password [--ca-file ca.crt]
#   sudo deploy/pi/install.sh --table pool-01 --mqtt-host lavos.local [--venue deploy/venues/lavos.toml]
#
# Options:
#   --config FILE         node.toml made on the central box (lavos broker add-node / lavos node-config)
#   --table ID --mqtt-host HOST [--mqtt-port N] [--venue FILE]
#                         make node.toml here with `lavos node-config` instead
#   --password-file FILE  the node's MQTT password -> /etc/lavos/mqtt-password
#   --ca-file FILE        the broker's CA (make-certs.sh) -> /etc/lavos/ca.crt, for TLS
#   --no-pip              do not (re)install the Python packages into the venv
#   --prefix DIR          a test root: every path under DIR, and no apt-get, useradd or systemctl
#                         (printed as "would: ..." instead)
set -euo pipefail

die() { echo "error: $*" >&2; exit 2; }
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit "${1:-0}"; }  # the comment on top

SRC=$(cd "$(dirname "$0")/../.." && pwd)
prefix="" config="" table="" mqtt_host="" mqtt_port=1883 venue="$SRC/deploy/venues/lavos.toml"
password_file="" ca_file="" pip=1
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix|--config|--table|--mqtt-host|--mqtt-port|--venue|--password-file|--ca-file)
            [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value (see --help)"
            case "$1" in
                --prefix) prefix=$(mkdir -p "$2" && cd "$2" && pwd) ;;
                --config) config=$2 ;;
                --table) table=$2 ;;
                --mqtt-host) mqtt_host=$2 ;;
                --mqtt-port) mqtt_port=$2 ;;
                --venue) venue=$2 ;;
                --password-file) password_file=$2 ;;
                --ca-file) ca_file=$2 ;;
            esac
            shift 2 ;;
        --no-pip) pip=0; shift ;;
        -h|--help) usage 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
done
[ -z "$config" ] || [ -z "$table" ] || die "give --config or --table, not both"
[ -z "$table" ] || [ -n "$mqtt_host" ] || die "--table needs --mqtt-host (the central box as the Pi reaches it)"
for f in "$config" "$password_file" "$ca_file"; do
    [ -z "$f" ] || [ -f "$f" ] || die "$f does not exist"
done
[ -n "$prefix" ] || [ "$(id -u)" -eq 0 ] || die "run as root (sudo), or with --prefix DIR to try it out"
if [ -n "$config" ]; then  # before anything is installed: a bad file must not leave half a node
    python3 -c 'import sys, tomllib; tomllib.load(open(sys.argv[1], "rb"))' "$config" 2>/dev/null \
        || die "$config is not valid TOML: make it with lavos node-config TABLE --mqtt-host HOST"
fi

ETC=$prefix/etc/lavos
STATE=$prefix/var/lib/lavos
OPT=$prefix/opt/lavos
VENV=$OPT/.venv
UNITS=$prefix/etc/systemd/system
changed=0
if [ -z "$config" ] && [ -z "$table" ] && [ ! -f "$ETC/node.toml" ]; then
    die "no $ETC/node.toml yet: pass --config FILE (from lavos broker add-node) or --table ID --mqtt-host HOST"
fi

# Privileged or system-wide steps: done for real, or only said under --prefix.
system() {
    if [ -n "$prefix" ]; then echo "would: $*"; else "$@"; fi
}

# Install $1 as $2 with mode $3 only when the content differs; counts a change.
put() {
    local src=$1 dest=$2 mode=$3
    if [ -f "$dest" ] && cmp -s "$src" "$dest"; then
        echo "unchanged: $dest"
    else
        install -D -m "$mode" "$src" "$dest"
        echo "installed: $dest"
        changed=1
    fi
}

# 1. packages and the service user
# What the node's own build needs on a fresh Raspberry Pi OS Lite, which has no compiler:
#   python3-venv            the venv (Debian leaves ensurepip out of python3)
#   gcc libc6-dev python3-dev  a C compiler, the C library's and Python's headers (libc6-dev brings
#                           the kernel's input headers): evdev (the USB card reader) has no wheel for
#                           the Pi and builds from source, as do RPi.GPIO and spidev for an MFRC522
#   swig liblgpio-dev       lgpio's own build, where its wheel does not fit (32-bit Pi OS, a newer Python)
NEEDED_PACKAGES=(python3-venv python3-dev gcc libc6-dev swig liblgpio-dev)
missing=()
for pkg in "${NEEDED_PACKAGES[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    system apt-get update  # a fresh image's package lists are stale or missing
    system apt-get install -y "${missing[@]}"
fi
# gpio owns /dev/gpiochip* (the agent exits 3 naming it when it may not open them), input the card reader.
groups=$(for g in gpio input; do getent group "$g" >/dev/null && printf '%s,' "$g"; done)
if ! id lavos >/dev/null 2>&1; then
    system useradd --system --home-dir /var/lib/lavos --shell /usr/sbin/nologin ${groups:+--groups "${groups%,}"} lavos
else
    for g in ${groups//,/ }; do
        id -nG lavos | tr ' ' '\n' | grep -qx "$g" || { system usermod -aG "$g" lavos; changed=1; }
    done
fi
owner() {  # chown/chgrp to lavos, which exists only on a real install
    if [ -n "$prefix" ]; then echo "would: chown $1 $2"; else chown "$1" "$2"; fi
}

# 2. the venv with the agent and the Pi GPIO backends
if [ ! -x "$VENV/bin/python" ]; then
    mkdir -p "$OPT"
    python3 -m venv --without-pip "$VENV"  # pip comes below, only when it is needed
    echo "made: venv $VENV"
    changed=1
fi
# The agent and, on ARM, lgpio: no hub packages. An MFRC522 reader (card_reader.kind in node.toml)
# adds its package, which drives SPI through RPi.GPIO (not on a Pi 5: use the USB reader there).
extras=edge
node_toml=${config:-$ETC/node.toml}
if [ -f "$node_toml" ] && python3 -c 'import sys, tomllib; sys.exit(tomllib.load(open(sys.argv[1], "rb")).get("card_reader", {}).get("kind") != "mfrc522")' "$node_toml" 2>/dev/null; then
    extras=edge,mfrc522
fi
if [ $pip -eq 1 ]; then
    [ -x "$VENV/bin/pip" ] || "$VENV/bin/python" -m ensurepip --upgrade >/dev/null
    # Reinstall only when the source (or the extras) changed since the last install: a second run is a no-op.
    stamp=$( (echo "$extras"; cd "$SRC" && find pyproject.toml lavos_cli.py devices edge broker dashboard sim -type f \
        ! -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1)
    if [ "$(cat "$VENV/.lavos-source" 2>/dev/null)" = "$stamp" ]; then
        echo "unchanged: Python packages in $VENV"
    else
        "$VENV/bin/pip" install --quiet "$SRC[$extras]"
        echo "$stamp" > "$VENV/.lavos-source"
        echo "installed: lavos[$extras] into $VENV"
        changed=1
    fi
else
    echo "skipped: pip install (--no-pip)"
fi

# 3. configuration
install -d -m 755 "$ETC"
if [ -n "$table" ]; then
    [ -x "$VENV/bin/lavos" ] || die "no lavos in $VENV to make node.toml with: run without --no-pip, or pass --config FILE"
    tmp=$(mktemp)
    trap 'rm -f "$tmp"' EXIT
    "$VENV/bin/lavos" node-config "$table" --venue "$venue" --mqtt-host "$mqtt_host" --mqtt-port "$mqtt_port" > "$tmp" \
        || die "lavos node-config failed for $table (see above)"
    config=$tmp
fi
if [ -n "$config" ]; then
    put "$config" "$ETC/node.toml" 644
else
    echo "unchanged: $ETC/node.toml (kept)"
fi
if [ -n "$password_file" ]; then
    put "$password_file" "$ETC/mqtt-password" 640
    owner root:lavos "$ETC/mqtt-password"
elif [ ! -f "$ETC/mqtt-password" ]; then
    echo "note: no $ETC/mqtt-password yet; copy the node's password there (mode 640, group lavos)"
fi
[ -z "$ca_file" ] || put "$ca_file" "$ETC/ca.crt" 644
install -d -m 750 "$STATE"
owner lavos:lavos "$STATE"

# 4. systemd: the agent's unit, and a bounded wait for NTP before it starts
put "$SRC/deploy/systemd/lavos-edge.service" "$UNITS/lavos-edge.service" 644
# A Pi has no real-time clock: until NTP answers, its clock is wherever it stopped. The unit is
# ordered after time-sync.target, which means something only with systemd-time-wait-sync
# enabled. The wait is bounded: a club whose internet is down still gets its lights, and the
# agent marks such events ts_synced=false (the hub's clock bills anyway).
wait_conf=$(mktemp)
printf '%s\n' "# Installed by deploy/pi/install.sh: wait for NTP at boot, but at most 90 s." \
    "[Service]" "TimeoutStartSec=90s" > "$wait_conf"
put "$wait_conf" "$UNITS/systemd-time-wait-sync.service.d/lavos.conf" 644
rm -f "$wait_conf"
system systemctl daemon-reload
system systemctl enable systemd-time-wait-sync.service lavos-edge.service
if [ $changed -eq 1 ]; then
    system systemctl restart lavos-edge.service
    echo "done: lavos-edge (re)started with the new setup; journalctl -u lavos-edge -f to watch it"
else
    echo "done: nothing changed"
fi
