"""The MCP glue: tools that call the routing core and the methods, and map their errors. Nothing else.

Nothing is imported here: the command line (``server.cli``) must start without loading the MCP SDK, and
``from pick_a_method.server.app import create_server`` is where the server lives.
"""
