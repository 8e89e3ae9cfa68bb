"""The shell around a pasted `vllm serve` command: words, quoting, wrappers and entrypoints.

People paste commands as they run them: ``VAR=value`` prefixes, ``\\``-newline continuations,
``# comments``, quoting, ``nohup ... > log 2>&1 &``, wrapper programs (``env``, ``sudo``,
``timeout``, ``uv run``, ``conda run``, ``docker run IMAGE``...) and several entrypoints (``vllm
serve``, ``python -m vllm.entrypoints.openai.api_server``). This module reads that text the way
a POSIX shell would (for the subset such lines use) and returns the vLLM command's words; what
it left out is recorded on :class:`Shell` for an import note. Nothing is ever executed.

    words, env, shell = split_shell_text("CUDA_VISIBLE_DEVICES=0 nohup vllm serve M -tp 2 > log &")
    args = entry_args(words)       # ['M', '-tp', '2']
"""

from __future__ import annotations

import os
import re
import shlex

from wizard.config import ConfigError

__all__ = ["Shell", "tokenize", "strip_prefix", "is_program", "entry_args", "split_shell_text"]

_ENV_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)

_SEPARATORS = (";;", "&&", "||", "|&", ";", "&", "|", "(", ")")
_REDIRECTS = ("&>>", "&>", "<<<", "<<-", "<<", ">>", ">|", ">&", "<&", "<>", ">", "<")
_DQ_ESCAPABLE = '$`"\\\n'


class Shell:
    """What a shell text holds besides the words of the chosen command (for an import note)."""

    def __init__(self) -> None:
        self.redirections: list[str] = []
        self.background = False
        self.other_commands: list[str] = []
        self.wrappers: list[str] = []


def tokenize(text: str, shell: Shell) -> list[list[str]]:
    """Split a POSIX shell text into commands (lists of words) the way sh does, for the subset
    pasted ``vllm serve`` lines use: single/double quotes and backslashes, ``\\``-newline
    continuations, ``#`` comments at the start of a word, command separators (``;`` ``&&``
    ``||`` ``|`` ``&`` and parentheses) and redirections (``> log``, ``2>&1``, ``&>> f``, ``<
    in``; a number written right before the operator is its file descriptor). Redirections
    and a trailing ``&`` are recorded on ``shell`` and not returned as words.

    Raises:
        ConfigError: an unterminated quote (field ``command``).
    """
    segments: list[list[str]] = [[]]
    i, n = 0, len(text)
    word: list[str] = []
    in_word = False  # a word was started (an empty quoted word "" counts)
    quoted = False  # some part of the current word was quoted or escaped
    redirect: str | None = None  # operator waiting for its target word

    def end_word() -> None:
        nonlocal word, in_word, quoted, redirect
        if in_word:
            w = "".join(word)
            if redirect is not None:
                shell.redirections.append(redirect + w)
                redirect = None
            else:
                segments[-1].append(w)
        word, in_word, quoted = [], False, False

    while i < n:
        ch = text[i]
        if ch == "\\":
            if i + 1 < n and text[i + 1] == "\n":
                i += 2
                continue
            if i + 2 < n and text[i + 1] == "\r" and text[i + 2] == "\n":
                i += 3
                continue
            if i + 1 < n:
                word.append(text[i + 1])
            in_word = quoted = True
            i += 2
            continue
        if ch == "'":
            j = text.find("'", i + 1)
            if j < 0:
                raise ConfigError(
                    "command: cannot split the command line (a ' quote is not closed); close the quote, e.g. around "
                    "the --speculative-config JSON", field="command")
            word.append(text[i + 1:j])
            in_word = quoted = True
            i = j + 1
            continue
        if ch == '"':
            j = i + 1
            buf: list[str] = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n and text[j + 1] in _DQ_ESCAPABLE:
                    if text[j + 1] != "\n":
                        buf.append(text[j + 1])
                    j += 2
                    continue
                buf.append(text[j])
                j += 1
            if j >= n:
                raise ConfigError(
                    'command: cannot split the command line (a " quote is not closed); close the quote, e.g. around '
                    "the --speculative-config JSON", field="command")
            word.append("".join(buf))
            in_word = quoted = True
            i = j + 1
            continue
        if ch in " \t\r\n":
            end_word()
            i += 1
            continue
        if ch == "#" and not in_word:
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if ch in "<>&;|()":
            fd = ""
            if in_word and not quoted and word and "".join(word).isdigit() and ch in "<>":
                fd = "".join(word)
                word, in_word = [], False
            else:
                if not (ch == "&" and text.startswith("&>", i)):
                    end_word()
                else:
                    end_word()
            op = next((o for o in _REDIRECTS if text.startswith(o, i)), None)
            if op is not None:
                if redirect is not None:  # `> > x`: keep going, the shell would reject it anyway
                    shell.redirections.append(redirect)
                redirect = fd + op
                i += len(op)
                if op in (">&", "<&"):  # >&1, >&-: the target follows directly
                    j = i
                    while j < n and (text[j].isdigit() or text[j] == "-"):
                        j += 1
                    if j > i:
                        shell.redirections.append(redirect + text[i:j])
                        redirect = None
                        i = j
                continue
            sep = next(o for o in _SEPARATORS if text.startswith(o, i))
            if redirect is not None:
                shell.redirections.append(redirect)
                redirect = None
            if sep == "&":
                shell.background = True
            segments.append([])
            i += len(sep)
            continue
        word.append(ch)
        in_word = True
        i += 1
    end_word()
    if redirect is not None:
        shell.redirections.append(redirect)
    return [s for s in segments if s]


# wrapper programs -> (options that take a value, whether the first non-option word is an
# argument of the wrapper rather than the command). Options are from each tool's --help
# (GNU coreutils env/nice/timeout/stdbuf/taskset, sudo 1.9, uv 0.8 `uv run`, conda run).
_WRAPPER_VALUE_OPTS: dict[str, frozenset[str]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string", "--block-signal", "--default-signal",
                      "--ignore-signal"}),
    "nohup": frozenset(),
    "exec": frozenset({"-a"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "time": frozenset({"-f", "--format", "-o", "--output"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}),
    "stdbuf": frozenset({"-i", "--input", "-o", "--output", "-e", "--error"}),
    "taskset": frozenset(),
    "numactl": frozenset({"-N", "-m", "-C", "-i", "-p", "--cpunodebind", "--membind", "--physcpubind", "--interleave",
                          "--preferred", "--preferred-many", "--weighted-interleave"}),
    "sudo": frozenset({"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir", "-h", "--host", "-p",
                       "--prompt", "-r", "--role", "-t", "--type", "-T", "--command-timeout", "-U", "--other-user",
                       "-R", "--chroot"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "uv": frozenset({"--with", "--with-editable", "--with-requirements", "--extra", "--group", "--only-group",
                     "--no-group", "--env-file", "--package", "--python", "-p", "--directory", "--project", "--index",
                     "--default-index", "--index-url", "-i", "--extra-index-url", "--find-links", "-f",
                     "--index-strategy", "--keyring-provider", "--resolution", "--prerelease", "--exclude-newer",
                     "--link-mode", "--config-setting", "-C", "--refresh-package", "--reinstall-package",
                     "--upgrade-package", "-P", "--no-binary-package", "--no-build-package", "--cache-dir",
                     "--config-file", "--color", "--python-preference", "--python-platform", "--from",
                     "-m", "--module"}),
    "uvx": frozenset({"--with", "--with-editable", "--with-requirements", "--from", "--python", "-p", "--index",
                      "--default-index", "--index-url", "-i", "--extra-index-url", "--cache-dir", "--config-file",
                      "-m", "--module"}),
    "conda": frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}),
    "mamba": frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}),
    "micromamba": frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}),
    "pixi": frozenset({"-e", "--environment", "--manifest-path"}),
    "poetry": frozenset({"-C", "--directory", "-P", "--project"}),
}
#: wrappers whose first word after the options is theirs (taskset MASK, timeout DURATION,
#: and the sub-command `run` / `exec` of package managers)
_WRAPPER_FIRST_ARG = {"taskset": 1, "timeout": 1}
_WRAPPER_SUBCOMMANDS = {"uv": ("run", "tool"), "conda": ("run",), "mamba": ("run",), "micromamba": ("run",),
                        "pixi": ("run", "exec"), "poetry": ("run",)}
_CONTAINER_VALUE_OPTS = frozenset("""
-a --attach --add-host --annotation --blkio-weight --blkio-weight-device --cap-add --cap-drop --cgroup-parent
--cgroupns --cidfile -c --cpu-shares --cpu-period --cpu-quota --cpu-rt-period --cpu-rt-runtime --cpus --cpuset-cpus
--cpuset-mems --device --device-cgroup-rule --device-read-bps --device-read-iops --device-write-bps
--device-write-iops --dns --dns-option --dns-search --domainname --entrypoint -e --env --env-file --expose --gpus
--group-add --health-cmd --health-interval --health-retries --health-start-interval --health-start-period
--health-timeout -h --hostname --ip --ip6 --ipc --isolation --kernel-memory -l --label --label-file --link
--link-local-ip --log-driver --log-opt --mac-address -m --memory --memory-reservation --memory-swap
--memory-swappiness --mount --name --network --net --network-alias --oom-score-adj --pid --pids-limit --platform -p
--publish --pull --restart --runtime --security-opt --shm-size --stop-signal --stop-timeout --storage-opt --sysctl
--tmpfs -u --user --userns --uts -v --volume --volumes-from -w --workdir --detach-keys
""".split())


_PYTHON_RE = re.compile(r"python[0-9.]*(\.exe)?")


def is_program(tokens: list[str]) -> bool:
    if not tokens:
        return False
    base = os.path.basename(tokens[0])
    return base in ("vllm", "vllm.exe") or bool(_PYTHON_RE.fullmatch(base))



def _skip_options(tokens: list[str], i: int, value_opts: frozenset[str], stop: tuple[str, ...] = ()) -> int:
    """Index of the first word after the options of a wrapper starting at ``i`` (an option in
    ``stop`` ends the options after its value: ``uv run -m MODULE ARGS``)."""
    while i < len(tokens):
        t = tokens[i]
        if t == "--":
            return i + 1
        if not t.startswith("-") or t == "-":
            return i
        i += 1
        if "=" not in t and t in value_opts and i < len(tokens):
            i += 1
        if t.partition("=")[0] in stop:
            return i
    return i


def strip_prefix(tokens: list[str], env: dict[str, str], shell: Shell | None = None) -> list[str]:
    """Remove what comes before the program: ``VAR=value`` assignments (into ``env``),
    ``export``, and wrapper programs with their own options -- ``env [-i] [-u VAR]`` (unset
    variables leave ``env``), ``nohup``, ``exec``, ``time [-p]``, ``nice -n N``, ``sudo [-E]
    [-u USER]``, ``timeout 10m``, ``taskset -c 0-7``, ``numactl ...``, ``stdbuf -oL``, ``uv run
    [--with X ...]``, ``uvx``, ``conda run -n ENV``, and ``docker run|exec [...] IMAGE`` /
    ``podman run`` (``-e VAR=value`` goes to ``env``; the image's entrypoint is ``vllm serve``,
    as in vllm/vllm-openai, so words after the image are serve arguments). The dropped wrapper
    words are recorded on ``shell.wrappers``."""
    i = 0
    n = len(tokens)
    start = 0
    while i < n:
        t = tokens[i]
        base = os.path.basename(t)
        m = _ENV_RE.match(t)
        if m:
            env[m.group(1)] = m.group(2)
            i += 1
        elif t in ("export", "readonly"):
            i += 1
            while i < n and tokens[i].startswith("-"):
                i += 1
        elif base in ("docker", "podman", "nerdctl") and i + 1 < n and tokens[i + 1] in ("run", "exec", "container"):
            j = i + 2
            if tokens[i + 1] == "container" and j < n and tokens[j] in ("run", "exec"):
                j += 1
            sub = tokens[j - 1]
            while j < n:
                t2 = tokens[j]
                if t2 == "--":
                    j += 1
                    break
                if not t2.startswith("-") or t2 == "-":
                    break
                opt, eq, val = t2.partition("=")
                j += 1
                if opt in _CONTAINER_VALUE_OPTS and not eq:
                    val = tokens[j] if j < n else ""
                    j += 1
                if opt in ("-e", "--env"):
                    m2 = _ENV_RE.match(val)
                    if m2:
                        env[m2.group(1)] = m2.group(2)
            if shell is not None:
                shell.wrappers.append(" ".join(tokens[start:j + 1]))
            image_end = j + 1  # the image (run) or the container (exec)
            rest = tokens[image_end:]
            if sub == "run" and not (is_program(rest) or (rest and os.path.basename(rest[0]) in _WRAPPER_VALUE_OPTS)):
                return ["vllm", "serve"] + rest  # vllm/vllm-openai: ENTRYPOINT ["vllm", "serve"]
            i = start = image_end
            continue
        elif base in _WRAPPER_VALUE_OPTS:
            j = i + 1
            subs = _WRAPPER_SUBCOMMANDS.get(base)
            if subs is not None:
                if j < n and tokens[j] in subs:
                    j += 1
                    if tokens[j - 1] == "tool" and j < n and tokens[j] == "run":
                        j += 1
                elif base != "uvx":
                    break  # `uv pip ...`, `conda install`: not a wrapper
            j = _skip_options(tokens, j, _WRAPPER_VALUE_OPTS[base], ("-m", "--module") if base in ("uv", "uvx") else ())
            if base == "env":
                k = i + 1
                while k < j:
                    opt, eq, val = tokens[k].partition("=")
                    if opt in ("-u", "--unset"):
                        var = val if eq else (tokens[k + 1] if k + 1 < n else "")
                        env.pop(var, None)
                        k += 1 if eq else 2
                        continue
                    if opt in ("-i", "--ignore-environment") or tokens[k] == "-":
                        env.clear()
                    k += 1
            if base in ("uv", "uvx"):
                opt, eq, val = tokens[j - 1].partition("=") if j - 1 > i else ("", "", "")
                if j - 2 > i and tokens[j - 2] in ("-m", "--module"):
                    opt, eq, val = tokens[j - 2], "=", tokens[j - 1]
                if opt in ("-m", "--module") and eq:  # `uv run -m MODULE ...` is `python -m MODULE ...`
                    if shell is not None:
                        shell.wrappers.append(" ".join(tokens[i:j]))
                    return ["python", "-m", val] + tokens[j:]
            j += _WRAPPER_FIRST_ARG.get(base, 0) if j < n else 0
            if shell is not None:
                shell.wrappers.append(" ".join(tokens[i:j]))
            i = start = j
        else:
            break
    return tokens[i:]


_SERVER_MODULES = ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server")


def entry_args(tokens: list[str]) -> list[str]:
    """The arguments after the entrypoint (``vllm serve`` / ``python -m ...api_server``)."""
    if not tokens:
        return []
    base = os.path.basename(tokens[0])
    if base in ("vllm", "vllm.exe"):
        if len(tokens) < 2:
            raise ConfigError("command: `vllm` needs the `serve` sub-command: vllm serve MODEL [options]", field="command")
        if tokens[1] != "serve":
            raise ConfigError(
                f"command: `vllm {tokens[1]}` is not `vllm serve`; give a `vllm serve MODEL ...` command", field="command"
            )
        return tokens[2:]
    if _PYTHON_RE.fullmatch(base):
        j = 1
        module = None
        while j < len(tokens):
            t = tokens[j]
            if t == "-m" and j + 1 < len(tokens):
                module, j = tokens[j + 1], j + 2
                break
            if t.startswith("-m") and len(t) > 2:
                module, j = t[2:], j + 1
                break
            if not t.startswith("-"):
                break
            j += 1
        if module in _SERVER_MODULES:
            return tokens[j:]
        if module in ("vllm.entrypoints.cli.main", "vllm"):
            if j < len(tokens) and tokens[j] == "serve":
                return tokens[j + 1:]
            raise ConfigError(f"command: `python -m {module}` needs the `serve` sub-command", field="command")
        raise ConfigError(
            f"command: `{' '.join(tokens[:j + 1])}` is not a vLLM server; use `vllm serve MODEL` or "
            "`python -m vllm.entrypoints.openai.api_server --model MODEL`",
            field="command",
        )
    if tokens[0] == "serve":
        return tokens[1:]
    first = tokens[0]
    if first.startswith("-") or "/" in first or "\\" in first or os.path.exists(os.path.expanduser(first)):
        return tokens  # the short form: MODEL [options] (a Hub id org/name or a local path), or options only
    shown = [t if len(t) <= 60 else t[:57] + "..." for t in tokens[:3]]  # a pasted wall of text is not echoed whole
    raise ConfigError(
        f"command: `{shlex.join(shown)}{' ...' if len(tokens) > 3 else ''}` is not a vLLM command; give "
        f"`vllm serve MODEL ...` (if {shown[0]!r} is a model id: `vllm serve {shlex.quote(shown[0])} ...`)",
        field="command",
    )


def split_shell_text(text: str) -> tuple[list[str], dict[str, str], Shell]:
    """The words of the `vllm serve` command in a pasted shell text, the environment its
    ``VAR=value`` prefixes (and wrappers such as ``env``/``docker run -e``) set, and what else the
    text held (:class:`Shell`). The first command whose program is vLLM/python (or ``serve``) is
    chosen; without one, the last command. Raises ConfigError (field ``command``) on an
    unterminated quote."""
    env: dict[str, str] = {}
    shell = Shell()
    segments = tokenize(text, shell)
    for idx, seg in enumerate(segments):
        rest = strip_prefix(seg, env, shell)
        if is_program(rest) or (rest and rest[0] == "serve"):
            shell.other_commands += [shlex.join(s) for s in segments[idx + 1:]]
            return rest, env, shell
        if rest:
            shell.other_commands.append(shlex.join(seg))
    shell.wrappers = []
    shell.other_commands = [shlex.join(s) for s in segments[:-1]]
    if not segments:
        return [], env, shell
    env = {}
    for seg in segments[:-1]:
        strip_prefix(seg, env)
    return strip_prefix(segments[-1], env, shell), env, shell
