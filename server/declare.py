"""How a tool's arguments are declared: one pydantic model per tool, each field with its type, its description and
its default, and beside them how the command line spells it (`Cli`). From that one model come the MCP input schema
(server/listing.py slims it), the command's flags (server/cli_flags.py), the hints' flag names (server/cli_words.py)
and the call into the core (each model's `call`).

No MCP import here: the command line builds its parser from these models without the SDK. The models are built
lazily (`defer_build`): `--help` reads their fields, never validates.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

from pydantic import BaseModel, ConfigDict, Field


@dataclass(frozen=True, kw_only=True)
class Cli:
    """How an argument appears on the command line; the defaults make `--kebab-case NAME`. Its fields,
    grouped by what they say: its name, how its words are read, whether it is there."""

    flag: str | None = None
    """The flag's own name where it is not the argument's (`--teacher-rows` for teacher_rows_path, `-k`); `None`
    with `positional`."""
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    """The words taken."""
    help: str | None = None
    """What a person reads, where it says more than the description; "(default: X)" is added from the model."""

    positional: bool = False
    """A positional, with its metavar (`ROWS`, `taskset`)."""
    many: bool = False
    """It takes one or more words."""
    parse: Callable[[str], Any] | None = None
    """Turns the word into the argument's value (`--throughput 2000,4000`)."""
    pairs: bool = False
    """Repeatable KEY=VALUE, kept as "key=value" strings, as the MCP tool takes them."""
    yes_no: bool = False
    """`--flag true|false`; else a bool defaulting to True is `--no-NAME`, one defaulting to False `--NAME`."""

    off: tuple[str, str] | None = None
    """(flag, help) of a flag that sets the argument to False (`--no-checkpoint`)."""
    skip: bool = False
    """The argument is not on the command line (inline rows, picture)."""


NOT_ON_THE_COMMAND_LINE = Cli(skip=True)
PLAIN = Cli()


def arg(default: Any = ..., description: str | None = None, *, cli: Cli = PLAIN, **constraints: Any) -> Any:
    """A field of an argument model: its default, its one-line description (the MCP schema's), its bounds, and how
    the command line spells it."""
    info = Field(default, description=description, **constraints)
    info.metadata.append(cli)
    return info


def cli_of(model: type[BaseModel], name: str) -> Cli:
    """How the command line spells the argument `name`: its entry in the `clis` of the model or a base (an argument
    a writer's options model declares), else the `Cli` the field was declared with (`arg`), else `--kebab-case`."""
    for klass in model.__mro__:
        cli = vars(klass).get("clis", {}).get(name)
        if cli is not None:
            return cli
    return next((m for m in model.model_fields[name].metadata if isinstance(m, Cli)), PLAIN)


# extra="forbid": an argument the tool does not declare is refused (named, with the closest one); the title stays the
# class name, which ends in "Arguments" (server/explain.py words such errors "bad argument: ...").
ARGUMENTS = ConfigDict(extra="forbid", protected_namespaces=(), defer_build=True)


class Arguments(BaseModel):
    """A tool's arguments. Each subclass names its tool, says what the tool does (its docstring is the description
    agents read), and makes the call into the core (`call`), which the server and the command line both make."""

    model_config = ARGUMENTS

    tool: ClassVar[str]  # the MCP tool; the command is the same with dashes
    title: ClassVar[str]  # the listing's title; the command's help
    row_sets: ClassVar[dict[str, bool]] = {}  # the row sets it reads (name -> required): <name> inline or <name>_path
    pictured: ClassVar[bool] = False  # it draws a picture: picture=true over MCP, the sketch and --plot on the CLI
    writes: ClassVar[bool] = False  # it may write a file (out): not read-only, and --allow-write on the CLI
    compares_tokenizers: ClassVar[bool] = False  # teacher_tokenizer / student_tokenizer compared before its call
    reads_more: ClassVar[bool] = False  # its core reads files of its own (a manifest, a run): it gets the read roots
    reads_itself: ClassVar[bool] = False  # no row sets: its core reads its input (a run folder) from its arguments

    answers: ClassVar[str]  # "module:Model", the model it answers with (its MCP outputSchema)
    clis: ClassVar[dict[str, Cli]] = {}  # the command line's spelling of arguments declared elsewhere (cli_of)

    @classmethod
    def result(cls) -> Any:
        """The model the tool answers with, imported on use (never at start-up)."""
        module, _, name = cls.answers.partition(":")
        return getattr(importlib.import_module(module), name)

    @classmethod
    def cli_flags(cls, parser: Any) -> None:
        """Flags of the command line's own beyond the declared arguments (track's --follow)."""

    def picture_of(self, rows: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """(the rows the picture is of, the picture's other arguments), from the row sets read by name."""
        raise NotImplementedError(type(self).__name__)

    def cli_picture(self, args: Any, verdict: Any) -> tuple[str, str] | None:
        """The command line's (sketch, --plot line) where the tool draws its own; None: the verdict's picture of the
        rows read (server/cli_picture.py)."""
        return None

    def words(self, verdict: Any) -> str | None:
        """The verdict as a person reads it on the command line; None: the generic rendering (server/render.py)."""
        return None

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "tool" in vars(cls):
            cls.tool = str(cls.tool)  # the name itself (common.next_step.Tool declares it), as every message shows it

    @classmethod
    def command(cls) -> str:
        return cls.tool.replace("_", "-")

    @classmethod
    def description(cls) -> str:
        return " ".join((cls.__doc__ or "").split())
