"""``python -m api.cli``: the ``zhuoji`` command without the installed script."""

import sys

from api.cli import main

sys.exit(main())
