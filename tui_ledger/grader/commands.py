"""What a shell command or a tool call does to files and to the repository's history.

`shell_effects(command)` reads a shell command the way a shell splits it (`shlex`, with `&&`,
`||`, `;`, `|`, `&`, newlines, subshells, redirections, heredocs and `bash -c '...'` read
inside) and returns its `Effect`s: each file it writes, moves, truncates or deletes (`write`),
and each read of history beyond the checked-out branch (`lookup`). `call_effects(call)` does
the same for one tool call: an edit tool with a path (create, str_replace, insert, write,
edit), a patch (`apply_patch`), a shell tool's command, Python code writing with
`open(..., "w"/"a")`. Reading, running, grepping and listing are no effect at all: only what
can change a file or read another branch's history is named. Which written files belong to
the grader is `signals.py`'s question, not this module's.

Pure functions of text: no files are read, nothing is run.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from tui_ledger.trajectory.model import ToolCall

EffectKind = Literal["write", "lookup"]


@dataclass(frozen=True)
class Effect:
    """One thing a command does: `write` a path (`recursive`: a folder and all it holds), or
    `lookup` the history (path is None)."""

    kind: EffectKind
    path: str | None
    recursive: bool = False


_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "\n", "(", ")", ";;", "|&", "{", "}"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&"})
_READ_REDIRECTS = frozenset({"<", "<>", "<&"})
_PREFIXES = frozenset(
    {"sudo", "env", "command", "exec", "nohup", "time", "builtin", "nice", "timeout", "xargs"}
)
# The wrappers' options that take the next word as their value.
_PREFIX_VALUES: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-h", "-p", "-U"}),
    "nice": frozenset({"-n"}),
    "timeout": frozenset({"-s", "-k"}),
    "xargs": frozenset({"-I", "-n", "-P", "-d", "-L", "-s", "-E"}),
    "env": frozenset({"-u", "-C", "-S"}),
}
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_PYTHONS = re.compile(r"^python(\d+(\.\d+)?)?$")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# What a command needs to contain to have an effect at all (a fast test before lexing it): a
# redirection, or the name of a command `_command_effects` reads.
_MAY_ACT = re.compile(
    r">|\b(?:tee|sed|perl|rm|unlink|shred|mv|cp|ln|install|truncate|git|find|dd|python[\d.]*"
    r"|bash|sh|zsh|dash|ksh)\b"
)
_HEREDOC = re.compile(r"<<(-?)\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\2")
_HISTORY_OPTIONS = ("--all", "--branches", "--remotes", "--reflog", "--glob")
_HISTORY_COMMANDS = frozenset({"log", "rev-list", "show-branch"})
# git's options before the subcommand that take a value as the next word.
_GIT_VALUE_OPTIONS = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})


def shell_effects(command: str, depth: int = 0) -> list[Effect]:
    """Every write and history lookup in a shell command (several lines, scripts included)."""
    if depth > 3:  # bash -c "bash -c '...'": deep enough for anything an agent types
        return []
    if _MAY_ACT.search(command) is None:
        return []  # no redirection and no command that writes or reads history: no lexing
    text, bodies = _without_heredoc_bodies(command.replace("\\\n", " "))
    try:
        tokens = _tokens(text)
    except ValueError:  # a quote never closed: read what comes before it
        tokens = _tokens_until_broken(text)
    effects: list[Effect] = []
    for words, redirects, heredocs in _simple_commands(tokens, bodies):
        effects.extend(Effect("write", target) for target in redirects)
        effects.extend(_command_effects(words, heredocs, depth))
    return effects


def call_effects(call: ToolCall) -> list[Effect]:
    """Every write and history lookup in one tool call."""
    arguments = parse_arguments(call.arguments)
    name = call.name.lower()
    if isinstance(arguments, dict):
        effects = _edit_effects(name, arguments)
        if effects is not None:
            return effects
        for key in ("patch", "input") if "patch" in name else ():
            if isinstance(arguments.get(key), str):
                return _patch_effects(arguments[key])
        code = next(
            (arguments[key] for key in ("code", "source") if isinstance(arguments.get(key), str)),
            None,
        )
        if code is not None and ("python" in name or "ipython" in name or "jupyter" in name):
            return [Effect("write", path) for path in python_writes(code)]
        for key in ("command", "cmd", "keystrokes", "script", "commands"):
            value = arguments.get(key)
            if isinstance(value, list) and all(isinstance(item, str) for item in value):
                value = shlex.join(value) if key != "commands" else "\n".join(value)
            if isinstance(value, str):
                return shell_effects(value)
        return []
    text = call.arguments
    if "patch" in name:
        return _patch_effects(text)
    if "python" in name:
        return [Effect("write", path) for path in python_writes(text)]
    if name in ("bash", "shell", "sh", "terminal", "execute_bash", "run", "exec", "cmd"):
        return shell_effects(text)
    return _action_effects(call.name, text)


def _action_effects(name: str, text: str) -> list[Effect]:
    """SWE-agent's actions: the command line as typed, named by its first word
    (`str_replace_editor create PATH ...`, `create PATH`, or any shell command)."""
    words = text.split()
    if not words or words[0] != name:
        return []
    if len(words) >= 3 and words[1] in _EDIT_COMMANDS and "edit" in name:
        return [Effect("write", words[2])]
    if name == "create" and len(words) >= 2:
        return [Effect("write", words[1])]
    return shell_effects(text)


def python_writes(code: str) -> list[str]:
    """The files Python code opens for writing (`open(p, "w"/"a"/"x"/"+")`,
    `Path(p).write_text(...)`, `write_bytes`), where the path is written out as a string."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return _python_writes_by_pattern(code)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        name = function.id if isinstance(function, ast.Name) else None
        attribute = function.attr if isinstance(function, ast.Attribute) else None
        if name == "open" or (
            isinstance(function, ast.Attribute) and attribute == "open" and _is_io(function)
        ):
            path = _string(node.args[0]) if node.args else _keyword(node, "file")
            mode = _string(node.args[1]) if len(node.args) > 1 else _keyword(node, "mode")
            if path is not None and mode is not None and set(mode) & set("wax+"):
                found.append(path)
        elif attribute in ("write_text", "write_bytes") and isinstance(function, ast.Attribute):
            path = _path_of(function.value)
            if path is not None:
                found.append(path)
    return found


def _is_io(function: ast.Attribute) -> bool:
    return isinstance(function.value, ast.Name) and function.value.id in ("io", "codecs", "os")


def _path_of(node: ast.expr) -> str | None:
    """`Path("x")` / `pathlib.Path("x")` -> "x"."""
    if isinstance(node, ast.Call) and node.args:
        function = node.func
        name = function.id if isinstance(function, ast.Name) else getattr(function, "attr", None)
        if name in ("Path", "PosixPath", "PurePath"):
            return _string(node.args[0])
    return None


def _string(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _keyword(node: ast.Call, name: str) -> str | None:
    for keyword in node.keywords:
        if keyword.arg == name:
            return _string(keyword.value)
    return None


_OPEN_PATTERN = re.compile(
    r"open\(\s*(['\"])(?P<path>[^'\"]+)\1\s*,\s*(?:mode\s*=\s*)?(['\"])(?P<mode>[^'\"]*)\3"
)


def _python_writes_by_pattern(code: str) -> list[str]:
    return [
        found.group("path")
        for found in _OPEN_PATTERN.finditer(code)
        if set(found.group("mode")) & set("wax+")
    ]


# --- edit tools and patches -------------------------------------------------------------------

PATH_KEYS = ("path", "file_path", "filename", "file", "target_file", "filepath", "notebook_path")
_EDIT_COMMANDS = frozenset({"create", "str_replace", "insert", "write", "edit", "undo_edit"})
_EDIT_NAMES = ("write", "edit", "create", "str_replace", "insert", "replace")


def _edit_effects(name: str, arguments: dict[str, object]) -> list[Effect] | None:
    """An edit tool's write, [] for its reads (`view`), None when the call is no edit tool."""
    path = next((arguments[key] for key in PATH_KEYS if isinstance(arguments.get(key), str)), None)
    if path is None:
        return None
    command = arguments.get("command")
    if isinstance(command, str):
        return [Effect("write", str(path))] if command in _EDIT_COMMANDS else []
    if any(word in name for word in _EDIT_NAMES):
        return [Effect("write", str(path))]
    return None


_PATCH_FILE = re.compile(
    r"^(?:\*\*\* (?:Add|Update|Delete) File: |\*\*\* Move to: |\+\+\+ (?:b/)?|--- (?:a/)?)(\S+)",
    re.MULTILINE,
)


def _patch_effects(patch: str) -> list[Effect]:
    """Every file a patch adds, updates, deletes or moves (apply_patch's and unified diffs)."""
    return [
        Effect("write", found.group(1))
        for found in _PATCH_FILE.finditer(patch)
        if found.group(1) != "/dev/null"
    ]


def parse_arguments(text: str) -> object:
    """A call's arguments: the JSON object they spell, else the text as it is."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            return json.loads(stripped)
        except ValueError:
            return text
    return text


# --- the shell --------------------------------------------------------------------------------


def _without_heredoc_bodies(text: str) -> tuple[str, list[str]]:
    """The command with each heredoc's body taken out, and the bodies in the order their `<<`
    appear (the shell reads them so: a line's heredocs start on the next line)."""
    lines = text.split("\n")
    kept: list[str] = []
    bodies: list[str] = []
    position = 0
    while position < len(lines):
        line = lines[position]
        kept.append(line)
        position += 1
        for found in _HEREDOC.finditer(line.replace("<<<", "   ")):
            tabs, delimiter = found.group(1) == "-", found.group(3)
            body = []
            while position < len(lines):
                candidate = lines[position].lstrip("\t") if tabs else lines[position]
                position += 1
                if candidate == delimiter:
                    break
                body.append(lines[position - 1])
            bodies.append("\n".join(body))
    return "\n".join(kept), bodies


def _lexer(text: str) -> shlex.shlex:
    lexer = shlex.shlex(text, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    return lexer


def _tokens(text: str) -> list[str]:
    return _without_comments(list(_lexer(text)))


def _tokens_until_broken(text: str) -> list[str]:
    tokens: list[str] = []
    lexer = _lexer(text)
    try:
        for token in lexer:
            tokens.append(token)
    except ValueError:
        pass
    return _without_comments(tokens)


def _without_comments(tokens: list[str]) -> list[str]:
    """A word starting with `#` starts a comment to the end of its line."""
    kept: list[str] = []
    skipping = False
    for token in tokens:
        if token == "\n":
            skipping = False
        elif skipping or token.startswith("#"):
            skipping = True
            continue
        kept.append(token)
    return kept


def _simple_commands(
    tokens: Sequence[str], bodies: list[str]
) -> Iterator[tuple[list[str], list[str], list[str]]]:
    """Each simple command: its words, the files its redirections write, its heredocs' bodies."""
    words: list[str] = []
    writes: list[str] = []
    heredocs: list[str] = []
    position = 0
    while position < len(tokens):
        token = tokens[position]
        position += 1
        if token in _SEPARATORS or (set(token) <= set("&|;") and token):
            if words or writes:
                yield words, writes, heredocs
            words, writes, heredocs = [], [], []
            continue
        if token in ("<<", "<<-"):
            position += 1  # the delimiter
            if bodies:
                heredocs.append(bodies.pop(0))
            continue
        if token == "<<<" or token in _READ_REDIRECTS:
            position += 1
            continue
        if token in _WRITE_REDIRECTS or (token.startswith(">") and set(token) <= set(">|&")):
            target = tokens[position] if position < len(tokens) else ""
            position += 1
            if words and words[-1].isdigit():
                words.pop()  # `2>`: the descriptor, not an argument
            if token.endswith("&") and (target.isdigit() or target == "-"):
                continue  # `2>&1`: a descriptor duplicated, no file
            if target and target not in _SEPARATORS:
                writes.append(target)
            continue
        words.append(token)
    if words or writes:
        yield words, writes, heredocs


def _command_effects(words: list[str], heredocs: list[str], depth: int) -> list[Effect]:
    words = _unwrapped(words)
    if not words:
        return []
    name = words[0].rsplit("/", 1)[-1]
    arguments = words[1:]
    if name in _SHELLS:
        script = _shell_script(arguments)
        if script is not None:
            return shell_effects(script, depth + 1)
        return [effect for body in heredocs for effect in shell_effects(body, depth + 1)]
    if _PYTHONS.match(name):
        code = _option_value(arguments, "-c")
        sources = [code] if code is not None else heredocs
        return [Effect("write", path) for source in sources for path in python_writes(source)]
    handler = _HANDLERS.get(name)
    return handler(arguments) if handler is not None else []


def _unwrapped(words: list[str]) -> list[str]:
    """The command without `FOO=bar` assignments and the wrappers before it (`sudo -u USER`,
    `env -i`, `time`, `nice -n 5`, `timeout 60`, `xargs -0`), with their options."""
    position = 0
    wrapper: str | None = None
    while position < len(words):
        word = words[position]
        if _ASSIGNMENT.match(word):
            position += 1
        elif word in _PREFIXES:
            wrapper = word
            position += 1
            if word == "timeout":  # its duration comes first
                while position < len(words) and words[position].startswith("-"):
                    position += 1
                position += 1
        elif wrapper is not None and word.startswith("-"):
            position += 2 if word in _PREFIX_VALUES.get(wrapper, ()) else 1
        else:
            break
    return words[position:]


def _shell_script(arguments: list[str]) -> str | None:
    """`bash -c 'SCRIPT'` (also `-lc`, `-ec`): the script."""
    for position, word in enumerate(arguments):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            return arguments[position + 1] if position + 1 < len(arguments) else None
        if not word.startswith("-"):
            return None
    return None


def _option_value(arguments: list[str], option: str) -> str | None:
    for position, word in enumerate(arguments):
        if word == option:
            return arguments[position + 1] if position + 1 < len(arguments) else None
    return None


def _operands(arguments: list[str], with_value: frozenset[str] = frozenset()) -> list[str]:
    """The arguments that are not options (`--` ends the options; `with_value` options take
    the next word)."""
    operands = []
    position = 0
    ended = False
    while position < len(arguments):
        word = arguments[position]
        position += 1
        if ended or not word.startswith("-") or word == "-":
            operands.append(word)
        elif word == "--":
            ended = True
        elif word in with_value:
            position += 1
    return operands


def _writes(paths: Sequence[str], *, recursive: bool = False) -> list[Effect]:
    return [Effect("write", path, recursive) for path in paths]


def _rm(arguments: list[str]) -> list[Effect]:
    recursive = any(
        word == "--recursive" or (re.match(r"^-[a-zA-Z]*[rR]", word) is not None)
        for word in arguments
    )
    return _writes(_operands(arguments), recursive=recursive)


def _tee(arguments: list[str]) -> list[Effect]:
    return _writes(_operands(arguments))


def _truncate(arguments: list[str]) -> list[Effect]:
    return _writes(_operands(arguments, frozenset({"-s", "--size", "-r", "--reference"})))


# `-i`, `-i.bak`, `-ni`, `-Ei`: in place (the letters before `i` take no value).
_SED_IN_PLACE = re.compile(r"^-[nrEsuz]*i")
_PERL_IN_PLACE = re.compile(r"^-[a-zA-Z]*i")
_PERL_SCRIPT = re.compile(r"^-[a-zA-Z]*[eE]$")


def _sed(arguments: list[str]) -> list[Effect]:
    in_place = any(word.startswith("--in-place") or _SED_IN_PLACE.match(word) for word in arguments)
    if not in_place:
        return []
    scripted = any(word in ("-e", "-f", "--expression", "--file") for word in arguments)
    operands = _operands(arguments, frozenset({"-e", "-f", "--expression", "--file", "-l"}))
    return _writes(operands if scripted else operands[1:])


def _perl(arguments: list[str]) -> list[Effect]:
    if not any(_PERL_IN_PLACE.match(word) for word in arguments):
        return []
    operands = _operands(arguments, frozenset({"-e", "-E", "-M", "-I"}))
    scripted = any(_PERL_SCRIPT.match(word) for word in arguments)
    return _writes(operands if scripted else operands[1:])


def _copy(arguments: list[str], *, moves: bool) -> list[Effect]:
    """cp, install, mv: the destination is written (a folder: the file of the source's name in
    it); mv also takes each source away."""
    target = _option_value(arguments, "-t") or _option_value(arguments, "--target-directory")
    operands = _operands(
        arguments, frozenset({"-t", "--target-directory", "-m", "--mode", "-o", "-g", "-S"})
    )
    if target is None:
        if len(operands) < 2:
            return []
        sources, target = operands[:-1], operands[-1]
        into_folder = len(sources) > 1 or target.endswith("/") or target in (".", "..")
    else:
        sources, into_folder = operands, True
    effects = _writes(sources, recursive=True) if moves else []
    if into_folder:
        folder = target.rstrip("/") or "/"
        effects += [
            Effect("write", f"{folder}/{source.rstrip('/').rsplit('/', 1)[-1]}")
            for source in sources
        ]
    else:
        effects.append(Effect("write", target))
        # `cp x dir` where dir is a folder: the file the source's name in it.
        effects += [Effect("write", f"{target}/{source.rsplit('/', 1)[-1]}") for source in sources]
    return effects


def _find(arguments: list[str]) -> list[Effect]:
    """`find ROOT... -delete`, or `-exec` of a command that writes (`rm`, `sed -i`, ...):
    everything below the roots may change."""
    writes = "-delete" in arguments or any(
        word in ("-exec", "-execdir")
        and position + 1 < len(arguments)
        and arguments[position + 1] in ("rm", "sed", "perl", "truncate", "tee", "shred", "unlink")
        and (arguments[position + 1] not in ("sed", "perl") or _in_place(arguments[position:]))
        for position, word in enumerate(arguments)
    )
    if not writes:
        return []
    roots = []
    for word in arguments:
        if word.startswith(("-", "(", "!")):
            break
        roots.append(word)
    return _writes(roots, recursive=True)


def _in_place(arguments: list[str]) -> bool:
    return any(_SED_IN_PLACE.match(word) or _PERL_IN_PLACE.match(word) for word in arguments)


def _dd(arguments: list[str]) -> list[Effect]:
    return _writes([word[3:] for word in arguments if word.startswith("of=")])


def _git(arguments: list[str]) -> list[Effect]:
    position = 0
    while position < len(arguments) and arguments[position].startswith("-"):
        position += 2 if arguments[position] in _GIT_VALUE_OPTIONS else 1
    if position >= len(arguments):
        return []
    subcommand, rest = arguments[position], arguments[position + 1 :]
    if subcommand in _HISTORY_COMMANDS:
        if any(word.split("=", 1)[0] in _HISTORY_OPTIONS for word in rest):
            return [Effect("lookup", None)]
        return []
    if subcommand == "reflog" or (subcommand == "fsck" and "--lost-found" in rest):
        return [Effect("lookup", None)]
    if subcommand == "checkout" and "--" in rest:
        return _writes(rest[rest.index("--") + 1 :])
    if subcommand == "checkout":
        # `git checkout HEAD~3 tests/x.py`: paths after a tree-ish (a lone branch name is no
        # grader file, so every operand may be read as a path)
        return _writes(_operands(rest, frozenset({"-b", "-B", "--orphan"})))
    if subcommand == "rm":
        return _writes(_operands(rest), recursive="-r" in rest)
    if subcommand == "restore":
        return _writes(_operands(rest, frozenset({"-s", "--source"})))
    if subcommand == "mv":
        return _copy(rest, moves=True)
    return []


_HANDLERS = {
    "rm": _rm,
    "unlink": _tee,
    "shred": _tee,
    "tee": _tee,
    "truncate": _truncate,
    "sed": _sed,
    "perl": _perl,
    "cp": lambda arguments: _copy(arguments, moves=False),
    "install": lambda arguments: _copy(arguments, moves=False),
    "mv": lambda arguments: _copy(arguments, moves=True),
    "ln": lambda arguments: _copy(arguments, moves=False),
    "find": _find,
    "dd": _dd,
    "git": _git,
}
