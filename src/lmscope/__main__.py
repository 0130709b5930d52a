import sys

from lmscope.cli import main

sys.exit(main())
