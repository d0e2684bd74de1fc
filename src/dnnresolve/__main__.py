import sys

from dnnresolve.cli import main

sys.exit(main())
