"""The MCP server: every declared tool registered with the answer for its kind (server/calls.py), the skill as a
resource and a prompt.

The arguments of every tool are declared once (server/rows_tools.py, server/writer_tools.py); here is only what the
server adds: the client's roots, progress, the time budget, the tokenizer check and the picture. Neither torch nor
transformers is imported here: `preview_update` and the tokenizer check import them on first use, so `initialize`
and `tools/list` answer fast.
"""

from __future__ import annotations

import importlib.metadata
import logging
import typing

from pydantic import Field

from .arguments import served
from .calls import Calls
from .options import ServerOptions
from .skill import skill_description, skill_text
from .wire import PickServer

log = logging.getLogger("pick_a_method.server")

NAME = "pick-a-method"
SKILL_URI = f"skill://{NAME}/SKILL.md"

INSTRUCTIONS = """\
pick-a-method reads graded rollouts (one row per rollout: task_id, reward, truncated, model) and picks the
post-training method. Start with `route` on the rows and the model you will train: it asks the skill's questions in
order and returns the route, each question's evidence (`trace`) and `next_step`, the call to make next (`tool`,
`arguments`; fill what `needs` lists; `command` is a shell line to run instead). Every verdict has `summary`,
`warnings` (read them) and `next_step`. One question alone: `truncated_passes`, `band`, `pass_at`, `teacher_clears`;
`holdout_size` sizes the held-out set, `after` checks the trained model on it; `prime_rl_config`, `trl_config` and
`verl_config` write a trainer's config; `preview_update` runs an update rule on logged rollouts.

What the tools' shared arguments mean (they are not described again on each tool):
- rows: JSONL text, one row object a line (every field is kept); or rows_path: a file (JSONL, JSON, CSV, Parquet),
  an eval run's folder or log (vf-eval, lm-eval, inspect, verl), or a glob. teacher_rows, student_rows,
  before_rows, after_rows, random_selection_rows and random_reward_rows likewise, each with its _path.
- fields: your field names as "name=yours" (["reward=correct", "model=sampling.model"]; a dotted path reaches into
  objects). Names: task_id, reward, truncated, model, arm, tokens, completion, cut_off (finish reasons that mean
  the reply was cut off) and other_rewards (other graders' fields), the last two comma-separated.
- pass_threshold: a row passes when reward >= it. effect: the gain to prove (0.05 = five points). picture: add a PNG.
- knobs (the method's) and overrides (the trainer's own keys, dotted): "key=value" strings, the value read as JSON
  when it parses, a dotted knob nests. out: write the config there (else it is only returned); overwrite: replace a
  file. teacher_tokenizer / student_tokenizer: folders or hub ids to compare; tokenizers_match: say it instead.
The full guide is the resource skill://pick-a-method/SKILL.md.
"""


def _version() -> str:
    try:
        return importlib.metadata.version(NAME)
    except importlib.metadata.PackageNotFoundError:
        return "0.0.0+local"


def create_server(options: ServerOptions | None = None) -> PickServer:
    options = options or ServerOptions()
    mcp = PickServer(NAME, title="pick-a-method", version=_version(), instructions=INSTRUCTIONS)

    calls = Calls(options)
    for arguments in served():
        mcp.serve(arguments, arguments.result(), calls.answer_for(arguments))

    @mcp.resource(SKILL_URI, name=NAME, title="pick-a-method skill", description=skill_description(),
                  mime_type="text/markdown")
    def skill_md() -> str:
        return skill_text()

    @mcp.prompt(name=NAME, title="Pick a post-training method")
    def pick_a_method_prompt(rows_path: typing.Annotated[str | None, Field(description="Your graded rows file.")] = None
                             ) -> str:
        """The pick-a-method skill, to follow on your graded rows."""
        ask = f"\n\nMy graded rows are in {rows_path}. Route them." if rows_path else ""
        return skill_text() + ask

    return mcp
