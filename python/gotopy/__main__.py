"""``python -m gotopy``: the command line (see ``gotopy._cli``)."""

import sys

from gotopy._cli import main

if __name__ == "__main__":
    sys.exit(main(prog="python -m gotopy"))
