"""``python -m datasets.synth ...``: build synthetic scenes (see the package's docstring)."""

from datasets.synth.build import main

main()
