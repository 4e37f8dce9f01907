"""``python -m api.cli``: the ``zhuoji`` command."""

import sys

from api.cli import main

sys.exit(main())
