"""Hardware drivers of a table node (gpiozero pins, card readers); the pin factory comes from gpiozero."""
