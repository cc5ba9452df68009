"""pick-a-method: read graded rollouts, pick the post-training method, write the trainer's config.

The distribution claims this one import namespace. Its subpackages live in the repository's top-level
folders (setuptools maps them in pyproject.toml):

    pick_a_method.routing   routing/   rows in, verdicts out (numpy + pydantic)
    pick_a_method.methods   methods/   method objects, torch update rules, config writers
    pick_a_method.server    server/    the MCP server and the command line
    pick_a_method.skill     skill/     SKILL.md, served to agents
"""

from pathlib import Path as _Path

# Run from a clone's own folder (`python -c ...` there, or a script that puts the clone first on sys.path), this
# folder shadows the installed package, and its subpackages are the clone's top-level folders (pyproject.toml's
# package-dir): look for them there too, so the clone imports as the installed package does.
_clone = _Path(__file__).resolve().parent.parent
if (_clone / "pyproject.toml").is_file() and (_clone / "routing" / "__init__.py").is_file():
    __path__.append(str(_clone))  # noqa: F821 - a package's __path__
