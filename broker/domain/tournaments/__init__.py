"""The Lavosliga's rules: formats, the draw, who plays whom, standings and payouts. Pure.

`rules` (what is played), `bracket` (the matches and their feeds), `groups` and `swiss` (the
formats whose later matches depend on results), `progress` (the state from the draw and the
results), `standings` (places, payouts, season points), `pace` (when it will be over), `draw`.
"""
