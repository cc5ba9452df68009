"""What the routing core and the methods both need, so that neither imports the other: the next step a verdict
ends with (next_step.py), the one path validator (paths.py), the error bad input raises (errors.py), and the
atomic, confined file write (write.py). numpy, torch and MCP are never imported here.
"""
