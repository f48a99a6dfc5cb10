#!/usr/bin/env bash
# Make a private CA and a server certificate for Mosquitto's TLS listener (port 8883).
#
#   deploy/mosquitto/make-certs.sh [--out DIR] [--days N] [--force] HOST [HOST...]
#
# HOST: every name or address the Pis and the hub use to reach the broker, e.g.
#   deploy/mosquitto/make-certs.sh --out /root/lavos-certs lavos.local 192.168.1.10
# (deploy/hub/install.sh runs it for you: --out /etc/lavos/tls lavos.local and its --name NAMEs)
#
# Running it again keeps the CA (every Pi already trusts it) and re-issues the server
# certificate only when the host list changed or it expires within 30 days. --force makes a new
# CA as well, and then every Pi needs the new ca.crt.
set -euo pipefail

usage() {
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
die() { echo "error: $*" >&2; exit 2; }

out=./lavos-certs
days=825          # the longest validity some TLS clients accept for a server certificate
ca_days=3650
force=0
hosts=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out) [ $# -ge 2 ] || die "--out needs a directory"; out=$2; shift 2 ;;
        --days) [ $# -ge 2 ] && [[ $2 =~ ^[0-9]+$ ]] && [ "$2" -gt 0 ] || die "--days needs a positive number of days"; days=$2; shift 2 ;;
        --force) force=1; shift ;;
        -h|--help) usage ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) hosts+=("$1"); shift ;;
    esac
done
[ ${#hosts[@]} -gt 0 ] || die "name at least one host the broker is reached as, e.g. $0 lavos.local 192.168.1.10"
command -v openssl >/dev/null || die "openssl is missing: apt-get install openssl"

# Subject alternative names: clients check the host they dialled against these, never the CN.
san=""
for h in "${hosts[@]}"; do
    if [[ $h =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ || $h == *:* ]]; then
        entry="IP:$h"
    elif [[ $h =~ ^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$ ]]; then
        entry="DNS:$h"
    else
        die "$h is neither a host name nor an IP address"
    fi
    san="${san:+$san,}$entry"
done

mkdir -p "$out"
umask 077
cd "$out"

if [ -f ca.crt ] && [ -f ca.key ] && [ $force -eq 0 ]; then
    echo "CA: keeping $out/ca.crt (--force makes a new one)"
else
    openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout ca.key -out ca.crt -days "$ca_days" -subj "/O=Lavos/CN=Lavos MQTT CA" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    rm -f server.crt   # signed by the old CA: no client would accept it any more
    echo "CA: made $out/ca.crt"
fi

# The SAN list as openssl prints it ("DNS:a, IP Address:1.2.3.4"), normalised to our spelling.
current_san() {
    openssl x509 -in server.crt -noout -ext subjectAltName 2>/dev/null | tail -n +2 \
        | sed -e 's/IP Address:/IP:/g' -e 's/^ *//' -e 's/, /,/g'
}
wanted_san=$(tr ',' '\n' <<<"$san" | sort | paste -sd, -)
reissue=1
if [ -f server.crt ] && [ -f server.key ] && [ $force -eq 0 ] \
    && openssl verify -CAfile ca.crt server.crt >/dev/null 2>&1 \
    && openssl x509 -in server.crt -noout -checkend $((30 * 86400)) >/dev/null; then
    have_san=$(current_san | tr ',' '\n' | sort | paste -sd, -)
    [ "$have_san" = "$wanted_san" ] && reissue=0
fi

if [ $reissue -eq 0 ]; then
    echo "server: keeping $out/server.crt ($san)"
else
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout server.key -out server.csr -subj "/O=Lavos/CN=${hosts[0]}" 2>/dev/null
    printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
        "extendedKeyUsage=serverAuth" "subjectAltName=$san" > server.ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt \
        -days "$days" -sha256 -extfile server.ext 2>/dev/null
    rm -f server.csr server.ext
    echo "server: made $out/server.crt for $san, valid $days days"
fi
chmod 644 ca.crt server.crt
chmod 600 ca.key server.key

dir=$(pwd)
cat <<EOF

What goes where:
  central box (Mosquitto):
    install -d /etc/mosquitto/certs
    install -m 644 $dir/ca.crt $dir/server.crt /etc/mosquitto/certs/
    install -m 600 -o mosquitto $dir/server.key /etc/mosquitto/certs/
    then uncomment the 8883 listener in /etc/mosquitto/conf.d/lavos.conf; systemctl restart mosquitto
  hub: install -m 644 $dir/ca.crt /etc/lavos/ca.crt
    lavos server --mqtt 'mqtts://lavos-hub@${hosts[0]}:8883?cafile=/etc/lavos/ca.crt' ...
  every Pi: /etc/lavos/ca.crt (mode 644), and in /etc/lavos/node.toml under [mqtt]:
    port = 8883, tls = true, ca_file = "/etc/lavos/ca.crt"
    (lavos broker add-node TABLE --tls --mqtt-port 8883 --mqtt-host ${hosts[0]} writes that for you)
  keep $dir/ca.key off the network: whoever has it can impersonate the broker.
EOF
