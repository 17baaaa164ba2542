import sys

from retrieval.app.page import main

sys.exit(main())
