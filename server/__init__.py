"""The MCP glue: tools that call the routing core and the methods, and map their errors. Nothing else."""

from .app import create_server
from .options import ServerOptions

__all__ = ["create_server", "ServerOptions"]
