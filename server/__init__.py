"""The MCP glue and the command line: tools that call the routing core and the methods, and map their errors.

Nothing is imported here: the command line (``server.cli``) must start without loading the MCP SDK, and
``from pick_a_method.server.app import create_server`` is where the server lives.

    declare.py       how a tool's arguments are declared: one pydantic model a tool, with how the CLI spells each
    rows_tools.py    the routing tools' argument models (and their call into the core)
    writer_tools.py  the config writers' argument models (each its writer's options model, trainers/<trainer>/
                     options.py, with the CLI's spelling) and preview_update's
    arguments.py     every tool's model, in listing order; `after` once the core has it
    app.py           the MCP tools, each a few lines: read the rows, call the core off the event loop, map errors
    wire.py          PickServer: lists the declared tools, checks and runs calls, compact text (public SDK hooks)
    listing.py       the lean listing: inlined, slimmed input schemas and outline output schemas (no MCP import)
    schemas.py       the argument types, strict-safe (rows, trajectories, fields, trainer; key=value pairs and
                     counts from common/shapes.py)
    explain.py       argument-error wording (no MCP import: the CLI uses it too)
    cli.py           `pick-a-method`: serve MCP, or print a verdict for a person (never imports MCP for a command)
    cli_flags.py     the parser, made from the argument models; cli_words.py hints in flags, not MCP words
    options.py       the operator's caps; extras.py the [torch] extra's error; skill.py SKILL.md as shipped
"""
