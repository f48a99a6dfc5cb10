"""`python -m edge --config node.toml`: the agent alone, as the systemd unit runs it.

`lavos edge` does the same, but the `lavos` command imports every layer's CLI (the central
service's SQLAlchemy among them) and typer/rich: ~20 MB a Pi node never uses.
"""

import argparse
from pathlib import Path

from edge.agent_main import run_agent

if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m edge", description="Lavos table node agent")
    parser.add_argument("--config", "-c", type=Path, default=Path("/etc/lavos/node.toml"))
    parser.add_argument("--log-level", default="INFO")
    args = parser.parse_args()
    raise SystemExit(run_agent(args.config, args.log_level))
