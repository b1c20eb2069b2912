import sys

from controller.cli import entry

sys.exit(entry())
