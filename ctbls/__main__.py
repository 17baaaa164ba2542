import sys

from ctbls.cli import main

sys.exit(main())
