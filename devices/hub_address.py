"""Where a table node finds the hub box: one name, one TLS port, its secrets' places on the Pi.

No imports: `lavos --help` and the Pi's tools read these without loading anything.
"""

from __future__ import annotations

from pathlib import Path

# The hub box's one name on the club's LAN (mDNS via avahi, set up by deploy/hub/install.sh): in
# every node.toml, in the broker's certificate, on the tablets (http://lavos.local:8080/), in the docs.
HUB_HOST = "lavos.local"
MQTT_TLS_PORT = 8883  # the broker's TLS listener (deploy/mosquitto/lavos.conf): the only MQTT port on the LAN
# Where a node's secrets live on its Pi (deploy/pi/install.sh puts them there).
NODE_PASSWORD_FILE = Path("/etc/lavos/mqtt-password")
NODE_CA_FILE = Path("/etc/lavos/ca.crt")
