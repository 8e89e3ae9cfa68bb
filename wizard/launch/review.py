"""The launch review: what the server will run, judged on the exact argv and environment.

    rv = review_launch(cfg, policy)          # wizard.launch.launcher: the plan (argv + env) the launcher would run, reviewed
    rv.plan.argv                             # the words shown in "What Launch will run"
    rv.blocking, rv.needs_opt_in(policy)     # refused whatever the settings / without the opt-in

One plan, built once by :func:`wizard.launch.launcher.plan_launch` after every source was
merged (command, YAML, session, UI fields, ``invalid_values``, ``extra_args``), is both what is
shown and what is judged: the words after the entrypoint go through
:func:`wizard.launch_policy.review_argv` (vLLM's own parsing and the release's generated
allowlist), the variables from text through :func:`wizard.security.review_env`, and every
value through the upload-folder check. :class:`wizard.launch.launcher.Launcher` runs the same
review on the plan it is about to start (``policy=``) and raises :class:`PolicyRefused`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wizard.launch.errors import LaunchError
from wizard.launch.argv import entrypoint_len
from wizard.launch_policy import ArgvItem, ArgvReview, review_argv
from wizard.security import EnvVerdict, PathPolicy, review_env, upload_dirs, uses_upload
from wizard.vllm.versions import default_version

__all__ = ["LaunchReview", "review_plan", "PolicyRefused", "argv_words"]


class PolicyRefused(LaunchError):
    """The launch policy refuses the plan (``review``: the :class:`LaunchReview`)."""

    def __init__(self, review: "LaunchReview", policy: PathPolicy):
        self.review = review
        problems = review.problems(policy)
        super().__init__("refusing to launch: " + "; ".join(problems[:6]) + (" ..." if len(problems) > 6 else ""))


@dataclass
class LaunchReview:
    """What a launch would run and what the policy says of it.

    ``plan``: the :class:`~wizard.launch.process.LaunchPlan` (None when it could not be built:
    ``plan_error`` says why); ``env``: :func:`wizard.security.review_env` of the variables from
    text; ``argv``: :func:`wizard.launch_policy.review_argv` of the words; ``uploads``: fields
    pointing into upload folders."""

    plan: Any = None
    plan_error: str | None = None
    env: dict[str, list[EnvVerdict]] = field(default_factory=dict)
    argv: ArgvReview | None = None
    uploads: list[str] = field(default_factory=list)

    @property
    def risky(self) -> list[ArgvItem]:
        return list(self.argv.needs_opt_in) if self.argv else []

    @property
    def blocking(self) -> list[str]:
        out = [f"environment variable {v.reason}; drop it (set it in the shell that starts the wizard if "
               "you trust it)" for v in self.env.get("refuse", [])]
        out += [f"{f}: points into the UI's upload folder; uploaded files are never launch inputs" for f in self.uploads]
        if self.plan_error:
            out.append(f"the launch could not be prepared: {self.plan_error}")
        if self.argv is not None:
            out += self.argv.blocking
            out += [f"{s.option}: a credential would be visible in the process list (`ps`); the launcher could not move it "
                    "out of the command line" for s in self.argv.secrets]
        return out

    def needs_opt_in(self, policy: PathPolicy) -> list[ArgvItem]:
        return [] if policy.allow_unsafe_options else self.risky

    def problems(self, policy: PathPolicy) -> list[str]:
        """Every reason this plan may not start under ``policy`` (empty: it may)."""
        return self.blocking + [f"{r.text()}; allowed only when the UI was started with --allow-unsafe-options"
                                for r in self.needs_opt_in(policy)]


def argv_words(plan: Any) -> list[str]:
    """The words of ``plan.argv`` after the entrypoint (:func:`wizard.launch.argv.entrypoint_len`),
    as vLLM's parser receives them: ``["serve", M, ...]`` for ``vllm serve`` however it is started
    (the CPU build's ``python -c`` bootstrap, ``python -m vllm.entrypoints.cli.main``, the console
    script); the launcher's private ``--config`` file of credentials left out."""
    argv = list(plan.argv)
    words = argv[entrypoint_len(argv):]
    own = getattr(plan, "secret_config", None)
    if own and "--config" in words:
        i = words.index("--config")
        if i + 1 < len(words) and words[i + 1] == own:
            words = words[:i] + words[i + 2:]
    return words


def review_plan(plan: Any, cfg: Any, policy: PathPolicy | None = None, version: Any = None) -> LaunchReview:
    """The review of an already built ``plan`` for ``cfg`` (what :meth:`Launcher.launch` runs)."""
    policy = policy or PathPolicy()
    if version is None:
        version = default_version()
    rv = LaunchReview(plan=plan, env=review_env(getattr(cfg, "env", None), version), uploads=uses_upload(cfg))
    words = argv_words(plan)
    rv.argv = review_argv(words, version, policy)
    dirs = upload_dirs()
    if not rv.uploads and any(d and d in w for w in words for d in dirs):
        rv.uploads.append("argv")
    return rv
