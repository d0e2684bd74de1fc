"""``python -m dnnresolve`` and the ``dnnresolve`` console script: the process is set up before the CLI loads."""

import gc
import sys

# A first question makes 15,000-31,000 objects that live to its end (modules, classes, its data); at the default
# threshold of 700 the cycle collector went over them 27 times, 2-5 ms of an explain. Set before the CLI's imports
# (a third of them); garbage cycles are still collected, 50,000 new objects apart.
gc.set_threshold(50_000, 10, 10)

from dnnresolve.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
