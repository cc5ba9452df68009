"""The MCP glue: tools that call the routing core and the methods, and map their errors. Nothing else.

Nothing is imported here: the command line (``server.cli``) must start without loading the MCP SDK, and
``from pick_a_method.server.app import create_server`` is where the server lives.

    app.py      the tools, each a few lines: read the rows, call the core off the event loop, map errors
    schemas.py  the tools' argument types, strict-safe (rows, trajectories, fields, trainer, {key, value} pairs)
    wire.py     PickServer: refuses undeclared arguments, explains argument errors, slims the listing, compact text
    listing.py  the lean listing: inlined, slimmed input schemas and outline output schemas (no MCP import)
    explain.py  argument-error wording (no MCP import: the CLI uses it too)
    cli.py      `pick-a-method`: serve MCP, or print a verdict for a person (never imports MCP for a command)
    options.py  the operator's caps; extras.py the [torch] extra's error; skill.py SKILL.md as shipped
"""
