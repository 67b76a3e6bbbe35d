import os
import sys

# fp_reference.py and other test helpers sit next to the tests.
sys.path.insert(0, os.path.dirname(__file__))
