"""A table node agent as a real process, on mock pins, driven through stdin (for kill -9 tests).

    python -m tests.edge.agent_proc node.toml
stdin lines: "pulses <pocket> <count>" drives that many ball drops; "depth" prints the outbox
depth; "light" prints "on"/"off" and what last set it (boot, command, button); "quit" closes cleanly. Each command is answered with one line on stdout.
"""

from __future__ import annotations

import logging
import sys

from devices.nodeconfig import load_node_config
from edge import EdgeNode
from sim.pins import PulseScript, drive_pulses, timed_mock_factory
from tests.support.hub import light_of, outbox_of


def main(config_path: str) -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    config = load_node_config(config_path)
    factory = timed_mock_factory()
    node = EdgeNode(config, pin_factory=factory).start()
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "pulses":
            pocket, count = int(words[1]), int(words[2])
            drive_pulses(factory.pin(config.pins.pockets[pocket]), count, PulseScript(duration_s=0.02, chatter_edges=1))
            print("driven", flush=True)
        elif words[0] == "depth":
            print(outbox_of(node).depth, flush=True)
        elif words[0] == "light":
            print("on" if light_of(node).on else "off", node._light_cause[0], flush=True)
        elif words[0] == "quit":
            break
    node.close()
    print("closed", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
