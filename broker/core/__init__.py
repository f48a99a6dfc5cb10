"""The hub's core: the one writer, commands and their handlers' registry, the hub's errors, the listeners, the hall state the parts share and the ports they declare."""
