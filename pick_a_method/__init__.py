"""pick-a-method: read graded rollouts, pick the post-training method, write the trainer's config.

The distribution claims this one import namespace. Its subpackages live in the repository's top-level
folders (setuptools maps them in pyproject.toml):

    pick_a_method.routing   routing/   rows in, verdicts out (numpy + pydantic)
    pick_a_method.methods   methods/   method objects, torch update rules, config writers
    pick_a_method.server    server/    the MCP server and the command line
    pick_a_method.skill     skill/     SKILL.md, served to agents
"""
