"""track's tests import their simulator and fixture builders from this folder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
