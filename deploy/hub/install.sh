#!/usr/bin/env bash
# Install (or bring up to date) the Lavos hub box on Debian 12 or Raspberry Pi OS (Bookworm). Safe
# to run again: what is already right is left alone, and a service restarts only if its files changed.
#
#   sudo deploy/hub/install.sh --manager jana                 # a new club
#   sudo deploy/hub/install.sh --restore /media/lavos-backup/lavos-2026-12-07T043000Z.tar.gz
#
# Options:
#   --manager NAME   the first manager's login: made once, with a one-time password printed here
#   --name NAME      another name or address the Pis may use for the box, put in the broker's
#                    certificate beside lavos.local (e.g. its fixed LAN address); may be repeated
#   --rtc | --no-rtc the box has (or has not) a battery-backed real-time clock: a clock it set at
#                    boot counts as synchronised (lavos server --clock-check ntp-or-rtc); kept
#                    from the last run when neither is given
#   --restore FILE   a box backup (lavos backup --nightly or --box): this club's database and files
#                    come back first, so nothing new is made (same CA, passwords, accounts)
#   --no-pip         do not (re)install the Python packages into the venv
#   --prefix DIR     a test root: every path under DIR, and no apt-get, useradd, chown or systemctl
#                    (printed as "would: ..." instead)
set -euo pipefail

die() { echo "error: $*" >&2; exit 2; }
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit "${1:-0}"; }  # the comment on top

SRC=$(cd "$(dirname "$0")/../.." && pwd)
prefix="" manager="" restore="" rtc="" pip=1
names=()
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix|--manager|--name|--restore)
            [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value (see --help)"
            case "$1" in
                --prefix) prefix=$(mkdir -p "$2" && cd "$2" && pwd) ;;
                --manager) manager=$2 ;;
                --name) names+=("$2") ;;
                --restore) restore=$(cd "$(dirname "$2")" 2>/dev/null && pwd)/$(basename "$2") ;;
            esac
            shift 2 ;;
        --rtc) rtc=ntp-or-rtc; shift ;;
        --no-rtc) rtc=ntp; shift ;;
        --no-pip) pip=0; shift ;;
        -h|--help) usage 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
done
[ -z "$restore" ] || [ -f "$restore" ] || die "$restore does not exist (the box backup to restore)"
[ -z "$restore" ] || [ -z "$manager" ] || die "--restore brings the club's accounts back: no --manager with it"
[ -n "$prefix" ] || [ "$(id -u)" -eq 0 ] || die "run as root (sudo), or with --prefix DIR to try it out"
# A PostgreSQL box names its database in LAVOS_DB (README.md, "Deploying at a club"); a test root has its own SQLite.
[ -z "$prefix" ] || unset LAVOS_DB

ROOT=${prefix:-/}
ETC=$prefix/etc/lavos
MOSQ=$prefix/etc/mosquitto
STATE=$prefix/var/lib/lavos
OPT=$prefix/opt/lavos
VENV=$OPT/.venv
UNITS=$prefix/etc/systemd/system
AVAHI=$prefix/etc/avahi/avahi-daemon.conf
VM_DEFAULTS=$prefix/etc/default/victoria-metrics
HOST=lavos.local   # the box's one name (devices/hub_address.py HUB_HOST): mDNS below, certificate, node kits, tablets
changed_hub=0 changed_mqtt=0 changed_avahi=0 changed_vm=0 changed_vmalert=0

# Privileged or system-wide steps: done for real, or only said under --prefix.
system() {
    if [ -n "$prefix" ]; then echo "would: $*"; else "$@"; fi
}
owner() {  # chown to users that exist only on a real install
    if [ -n "$prefix" ]; then echo "would: chown $*"; else chown "$@"; fi
}

# Install $1 as $2 with mode $3 only when the content differs; says which service's files changed
# ($4: hub, mqtt, avahi, vm or vmalert).
put() {
    local src=$1 dest=$2 mode=$3 what=${4:-hub}
    if [ -f "$dest" ] && cmp -s "$src" "$dest"; then
        echo "unchanged: $dest"
        [ "$(stat -c %a "$dest")" = "$mode" ] || chmod "$mode" "$dest"
    else
        install -D -m "$mode" "$src" "$dest"
        echo "installed: $dest"
        case "$what" in
            hub) changed_hub=1 ;; mqtt) changed_mqtt=1 ;; avahi) changed_avahi=1 ;; vm) changed_vm=1 ;; vmalert) changed_vmalert=1 ;;
        esac
    fi
}
keep_or_put() {  # the club's own files: installed once from the template, never overwritten
    if [ -f "$2" ]; then echo "kept: $2 (yours to edit)"; else put "$@"; fi
}

# 1. packages and the service user
missing=()
# victoria-metrics: the metrics store and vmalert (Debian's package; Grafana is not in Debian)
for pkg in mosquitto mosquitto-clients python3-venv avahi-daemon openssl rsync victoria-metrics; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
    system apt-get update  # a fresh image's package lists are stale or missing
    system apt-get install -y "${missing[@]}"
fi
# Debian's victoria-metrics starts listening on every interface, with no login: loopback only (and
# 3 years kept) before anything else, as deploy/vmalert/victoria-metrics.default says.
put "$SRC/deploy/vmalert/victoria-metrics.default" "$VM_DEFAULTS" 644 vm
[ $changed_vm -eq 0 ] || system systemctl restart victoria-metrics.service
if ! id lavos >/dev/null 2>&1; then
    system useradd --system --user-group --home-dir /var/lib/lavos --shell /usr/sbin/nologin lavos
fi

# 2. the venv with the hub, the dashboard and the API
if [ ! -x "$VENV/bin/python" ]; then
    mkdir -p "$OPT"
    python3 -m venv --without-pip "$VENV"
    echo "made: venv $VENV"
    changed_hub=1
fi
if [ $pip -eq 1 ]; then
    [ -x "$VENV/bin/pip" ] || "$VENV/bin/python" -m ensurepip --upgrade >/dev/null
    stamp=$(cd "$SRC" && find pyproject.toml lavos_cli.py devices edge broker dashboard sim -type f \
        ! -path '*/__pycache__/*' -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
    if [ "$(cat "$VENV/.lavos-source" 2>/dev/null)" = "$stamp" ]; then
        echo "unchanged: Python packages in $VENV"
    else
        "$VENV/bin/pip" install --quiet "$SRC[hub]"
        echo "$stamp" > "$VENV/.lavos-source"
        echo "installed: lavos[hub] into $VENV"
        changed_hub=1
    fi
else
    echo "skipped: pip install (--no-pip)"
fi
LAVOS=$VENV/bin/lavos
[ -x "$LAVOS" ] || die "no lavos in $VENV: run without --no-pip"
# `lavos` on root's PATH, as the README spells the commands
if [ "$(readlink "$prefix/usr/local/bin/lavos" 2>/dev/null)" != /opt/lavos/.venv/bin/lavos ]; then
    mkdir -p "$prefix/usr/local/bin"
    ln -sfn /opt/lavos/.venv/bin/lavos "$prefix/usr/local/bin/lavos"
    echo "installed: $prefix/usr/local/bin/lavos -> /opt/lavos/.venv/bin/lavos"
fi

# 3. a backup of this club first, when asked: what it brings back is then kept by every step below
if [ -n "$restore" ]; then
    # A hub running on this box keeps open games in memory: it must not see its database replaced.
    if [ -n "$prefix" ] || systemctl is-active --quiet lavos-server.service 2>/dev/null; then
        system systemctl stop lavos-server.service
    fi
    "$LAVOS" restore "$restore" --root "$ROOT" || die "the restore failed (above); nothing else was changed"
    changed_hub=1 changed_mqtt=1 changed_vmalert=1   # vmalert's token may be the backup's
fi

# 4. the club's files: the venue to edit, the backup settings
install -d -m 755 "$ETC"
keep_or_put "$SRC/deploy/venues/lavos.toml" "$ETC/venue.toml" 644
keep_or_put "$SRC/deploy/hub/backup.toml" "$ETC/backup.toml" 644
if [ -n "$rtc" ] || [ ! -f "$ETC/server.env" ]; then
    env_file=$(mktemp)
    printf '%s\n' "# Written by deploy/hub/install.sh (--rtc / --no-rtc): how lavos server judges its clock." \
        "LAVOS_CLOCK_CHECK=${rtc:-ntp}" > "$env_file"
    put "$env_file" "$ETC/server.env" 644
    rm -f "$env_file"
fi

# 5. TLS: the club's CA and the broker's certificate (kept when there; re-issued 30 days before
#    its end or when the names change), where Mosquitto, the hub and the node kits read them
install -d -m 700 "$ETC/tls"   # the CA's key: root only
certs_out=$(bash "$SRC/deploy/mosquitto/make-certs.sh" --out "$ETC/tls" "$HOST" "${names[@]}") \
    || die "make-certs.sh failed (above)"
grep -E "^(CA|server):" <<<"$certs_out" || true
put "$ETC/tls/ca.crt" "$ETC/ca.crt" 644
install -d -m 755 "$MOSQ/certs"
put "$ETC/tls/ca.crt" "$MOSQ/certs/ca.crt" 644 mqtt
put "$ETC/tls/server.crt" "$MOSQ/certs/server.crt" 644 mqtt
put "$ETC/tls/server.key" "$MOSQ/certs/server.key" 600 mqtt
owner mosquitto: "$MOSQ/certs/server.key"

# 6. Mosquitto: our config (TLS on 8883 for the LAN, plain MQTT on loopback), ACL, password file
put "$SRC/deploy/mosquitto/lavos.conf" "$MOSQ/conf.d/lavos.conf" 644 mqtt
put "$SRC/deploy/mosquitto/acl" "$MOSQ/lavos.acl" 640 mqtt
owner root:mosquitto "$MOSQ/lavos.acl"
if [ ! -f "$MOSQ/lavos.passwd" ]; then
    install -m 600 /dev/null "$MOSQ/lavos.passwd"
fi

# 7. one name on the LAN: avahi announces this box as lavos.local, whatever its host name
if [ -f "$AVAHI" ]; then cp "$AVAHI" "$AVAHI.new"; else mkdir -p "$(dirname "$AVAHI")"; printf '[server]\n' > "$AVAHI.new"; fi
python3 - "$AVAHI.new" "${HOST%.local}" <<'PY'
import re, sys
path, name = sys.argv[1], sys.argv[2]
text = open(path).read()
line = f"host-name={name}"
if re.search(rf"^{re.escape(line)}$", text, re.M) is None:
    text, n = re.subn(r"^#?\s*host-name=.*$", line, text, count=1, flags=re.M)
    if n == 0:
        text = re.sub(r"^\[server\]$", f"[server]\n{line}", text, count=1, flags=re.M) if "[server]" in text else f"[server]\n{line}\n{text}"
open(path, "w").write(text)
PY
put "$AVAHI.new" "$AVAHI" 644 avahi
rm -f "$AVAHI.new"

# 8. the monitoring: VictoriaMetrics (set up in 1; the hub's unit writes its metrics there),
#    vmalert evaluating the hall's rules and posting what fires to the hub
install -d -m 755 "$ETC/vmalert"
put "$SRC/deploy/vmalert/lavos-rules.yml" "$ETC/vmalert/lavos-rules.yml" 644 vmalert

# 9. what needs Lavos: the hub's MQTT login, a kit per venue table (/etc/lavos/nodes) and the
#    fleet's inventory, the first manager, vmalert's API token (/etc/lavos/vmalert-token, made once)
[ -s "$ETC/vmalert-token" ] || changed_vmalert=1
passwd_before=$(sha256sum "$MOSQ/lavos.passwd" | cut -d' ' -f1)
"$LAVOS" box setup --root "$ROOT" ${manager:+--manager "$manager"} | sed 's/^box: /lavos box: /' || die "lavos box setup failed (above)"
[ "$(sha256sum "$MOSQ/lavos.passwd" | cut -d' ' -f1)" = "$passwd_before" ] || changed_mqtt=1
owner mosquitto:mosquitto "$MOSQ/lavos.passwd"
owner root:lavos "$ETC/hub-password"
chmod 640 "$ETC/hub-password"
install -d -m 700 "$STATE"
owner -R lavos:lavos "$STATE"
# The hub reads the venue when it starts: an edited venue file restarts it (checked by box setup above).
venue_sum=$(sha256sum < "$ETC/venue.toml" | cut -d' ' -f1)
[ "$(cat "$STATE/.venue-started" 2>/dev/null)" = "$venue_sum" ] || changed_hub=1

# 10. systemd: the hub, vmalert, the nightly backup, and a bounded wait for NTP at boot
put "$SRC/deploy/systemd/lavos-server.service" "$UNITS/lavos-server.service" 644
put "$SRC/deploy/systemd/lavos-vmalert.service" "$UNITS/lavos-vmalert.service" 644 vmalert
put "$SRC/deploy/systemd/lavos-backup.service" "$UNITS/lavos-backup.service" 644
put "$SRC/deploy/systemd/lavos-backup.timer" "$UNITS/lavos-backup.timer" 644
# A Pi hub has no real-time clock: the hub starts after NTP has set it (time-sync.target, which
# needs systemd-time-wait-sync), but waits at most 90 s: a club with no internet still opens, and
# the hub says on every tablet that its clock is unsynchronised.
wait_conf=$(mktemp)
printf '%s\n' "# Installed by deploy/hub/install.sh: wait for NTP at boot, but at most 90 s." \
    "[Service]" "TimeoutStartSec=90s" > "$wait_conf"
put "$wait_conf" "$UNITS/systemd-time-wait-sync.service.d/lavos.conf" 644
rm -f "$wait_conf"
system systemctl daemon-reload
system systemctl enable avahi-daemon.service mosquitto.service systemd-time-wait-sync.service victoria-metrics.service \
    lavos-server.service lavos-vmalert.service lavos-backup.timer
[ $changed_avahi -eq 0 ] || system systemctl restart avahi-daemon.service
[ $changed_mqtt -eq 0 ] || system systemctl restart mosquitto.service
if [ $changed_hub -eq 1 ] || [ $changed_mqtt -eq 1 ]; then
    system systemctl restart lavos-server.service
    echo "$venue_sum" > "$STATE/.venue-started"
fi
[ $changed_vmalert -eq 0 ] || system systemctl restart lavos-vmalert.service
system systemctl start lavos-backup.timer

if [ $((changed_hub + changed_mqtt + changed_avahi + changed_vm + changed_vmalert)) -eq 0 ]; then
    echo "done: nothing changed"
else
    cat <<EOF
done: the hub box is up as $HOST
  tablets:     http://$HOST:8080/   (log in as the manager, then add staff on Obsluha)
  venue:       $ETC/venue.toml: edit the tables, prices and [operator], then run this script again
  table nodes: one kit per table in $ETC/nodes (T.toml, T.password, ca.crt) for deploy/pi/install.sh
  backups:     every night at 04:30 into the dir of $ETC/backup.toml: set copy_to there (USB stick or NAS)
  metrics:     VictoriaMetrics on 127.0.0.1:8428 (3 years), its alert rules to the manager's push targets;
               Grafana on it: deploy/grafana/README.md
  log:         journalctl -u lavos-server -f
EOF
fi
