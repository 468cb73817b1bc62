import sys

from pcnn_explore.cli import main

sys.exit(main())
