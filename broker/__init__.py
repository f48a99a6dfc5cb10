"""The hub of a hall (games, billing, lights, alerts, members, metrics).

Not the MQTT broker — that is Mosquitto; the folder keeps the name the club gave it. The hub's
sub-packages, each importing only those below it (import-linter checks it, `./run check`):
ops and compose → hall → accounts → adapters | storage → domain. docs/concurrency.md says
which thread owns which state.
"""
