"""vLLM's recipes (github.com/vllm-project/recipes) as a corpus of speculative commands and presets.

    python scripts/recipes_to_presets.py RECIPES_DIR [--commit SHA] \
        [--corpus tests/data/recipes/speculative_recipes.json] [--presets presets/recipes]

``RECIPES_DIR`` is a checkout (or a ``git worktree``) of vllm-project/recipes; the commit is read
with ``git rev-parse HEAD`` there unless ``--commit`` gives it. Every ``models/**/*.yaml`` recipe
is read with PyYAML; each speculative mode becomes one corpus entry:

* ``features.spec_decoding.args`` (one mode, ``default``) or ``features.spec_decoding.modes.<m>.args``;
* each ``hardware_overrides.<hw>.args`` of a mode is one more entry for that hardware key;
* the model is ``model.model_id``, or the first variant a mode lists (``variants: [...]``) with a
  ``model_id`` of its own; the command is ``vllm serve MODEL`` + ``model.base_args`` + the variant's
  ``extra_args`` + the mode's args, with ``--tensor-parallel-size`` from
  ``strategy_overrides.single_node_tp.tp`` when the recipe gives one.

The corpus (JSON: commit, entries with id, recipe, mode, hardware key, min_vllm_version, argv) is
what ``tests/test_recipes.py`` checks with the wizard, offline, release by release. ``--presets``
also writes one preset per entry (the ``presets/deployments`` schema, :mod:`wizard.io.presets`) for
the hardware the entry names (:data:`PROFILE_OF_KEY`, :data:`WIZARD_GPU`).

Nothing here is run through a shell; the recipes are data, never executed.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

#: recipe hardware keys (brand, generation or profile id of a mode's hardware_overrides; "default" for the
#: mode's own args) -> the taxonomy.yaml hardware profile the entry is checked on
PROFILE_OF_KEY = {"default": "h200", "nvidia": "h200", "hopper": "h200", "blackwell": "b200", "amd": "mi300x"}
#: taxonomy hardware profile -> the wizard's hardware catalog name (presets/hardware.yaml); a profile
#: without one (GB10, RTX PRO, TPU, Xeon, Arc, Ascend ...) is checked without hardware
WIZARD_GPU = {"h100": "H100", "h200": "H200", "b200": "B200", "mi300x": "MI300X", "mi325x": "MI325X"}


def load_profiles(root: Path) -> dict[str, dict[str, Any]]:
    """taxonomy.yaml hardware_profiles (gpu_count, vram_gb per node)."""
    try:
        data = yaml.safe_load((root / "taxonomy.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}
    prof = data.get("hardware_profiles")
    return prof if isinstance(prof, dict) else {}


def single_node_tp(recipe: dict[str, Any], variant: dict[str, Any] | None, profile: dict[str, Any]) -> int:
    """The recipes site's TP for single_node_tp (src/lib/command-synthesis.js resolveSingleNodeTp /
    autoFitTp): a declared tp (the variant's, else strategy_overrides.single_node_tp.tp) capped at the
    node's GPUs; else 1 when the variant's vram_minimum_gb fits one GPU, else every GPU of the node."""
    gpus = profile.get("gpu_count") if isinstance(profile.get("gpu_count"), int) else 1
    declared = (variant or {}).get("tp")
    if not isinstance(declared, int):
        declared = ((recipe.get("strategy_overrides") or {}).get("single_node_tp") or {}).get("tp")
    if isinstance(declared, int) and declared > 0:
        return min(declared, gpus)
    vram = profile.get("vram_gb")
    per_gpu = vram / gpus if isinstance(vram, (int, float)) and gpus else 0
    need = (variant or {}).get("vram_minimum_gb") or 0
    if not need or not per_gpu:
        return gpus
    return 1 if need <= per_gpu else gpus


def _words(items: Any) -> list[str]:
    """Arg items as the site's rendered command splits them: a flag item with spaces in it
    ("--max-model-len auto") is several shell words (the site quotes values, never flags)."""
    out: list[str] = []
    for x in items if isinstance(items, list) else []:
        x = str(x)
        out += shlex.split(x) if x.startswith("-") and any(c.isspace() for c in x) else [x]
    return out


def _args(block: Any, key: str = "args") -> list[str]:
    return _words(block.get(key)) if isinstance(block, dict) else []


def _has_spec(args: list[str]) -> bool:
    return any(x.startswith(("--speculative-config", "-sc", "--spec-")) for x in args)


def entries_of(recipe: dict[str, Any], rel: str, profiles: dict[str, dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The speculative modes of one parsed recipe YAML."""
    profiles = profiles or {}
    model = recipe.get("model") if isinstance(recipe.get("model"), dict) else {}
    model_id = model.get("model_id")
    if not isinstance(model_id, str):
        return []
    base = _words(model.get("base_args") or [])
    variants = recipe.get("variants") if isinstance(recipe.get("variants"), dict) else {}
    spec = ((recipe.get("features") or {}).get("spec_decoding"))
    if not isinstance(spec, dict):
        return []
    modes = spec.get("modes") if isinstance(spec.get("modes"), dict) else {"default": spec}
    out = []
    for mode, block in modes.items():
        if not isinstance(block, dict):
            continue
        vnames = [v for v in block.get("variants") or [] if isinstance(v, str)]
        variant = next((v for v in vnames if isinstance(variants.get(v), dict)), None)
        vblock = variants.get(variant) if variant else variants.get("default")
        mid = vblock.get("model_id") if isinstance(vblock, dict) and isinstance(vblock.get("model_id"), str) else model_id
        # the site adds a variant's extra_args only for a variant other than default
        vextra = _args(vblock, "extra_args") if variant and variant != "default" else []
        runs = [("default", _args(block))]
        for hw, ob in (block.get("hardware_overrides") or {}).items():
            runs.append((str(hw), _args(ob)))
        for hw, args in runs:
            if not _has_spec(args):
                continue
            pname = PROFILE_OF_KEY.get(hw.lower(), hw.lower())
            profile = profiles.get(pname) or {}
            tp = single_node_tp(recipe, vblock if isinstance(vblock, dict) else None, profile)
            # recipe-wide hardware_overrides.<generation | nvidia>.extra_args, as resolveCommand adds them
            rho = recipe.get("hardware_overrides") if isinstance(recipe.get("hardware_overrides"), dict) else {}
            gen = str(profile.get("generation") or "").lower()
            brand = str(profile.get("brand") or "").lower()
            hwextra = _args(rho.get(gen) or (rho.get("nvidia") if brand == "nvidia" else None), "extra_args")
            argv = ["vllm", "serve", mid, *base, *vextra, *hwextra, *args]
            if tp > 1 and not any(x in argv for x in ("--tensor-parallel-size", "-tp")):
                argv += ["--tensor-parallel-size", str(tp)]
            gpu = WIZARD_GPU.get(pname)
            gpus = profile.get("gpu_count") if isinstance(profile.get("gpu_count"), int) else 1
            slug = re.sub(r"[^a-z0-9]+", "-", f"{Path(rel).stem}-{mode}-{hw}".lower()).strip("-")
            out.append({"id": slug, "recipe": rel, "mode": mode, "hardware_key": hw, "profile": pname,
                        "hardware": f"{gpu}x{gpus}" if gpu else None, "variant": variant,
                        "min_vllm_version": model.get("min_vllm_version"), "argv": argv})
    return out


def read_recipes(root: Path) -> list[dict[str, Any]]:
    """Every speculative entry of ``root/models/**/*.yaml``, sorted by id (unreadable files skipped
    with a note on stderr)."""
    found: list[dict[str, Any]] = []
    profiles = load_profiles(root)
    for f in sorted((root / "models").rglob("*.yaml")):
        try:
            data = yaml.safe_load(f.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as err:
            sys.stderr.write(f"skipped {f}: {err}\n")
            continue
        if isinstance(data, dict):
            found += entries_of(data, str(f.relative_to(root)), profiles)
    seen: set[str] = set()
    for e in found:  # ids unique
        base, n = e["id"], 2
        while e["id"] in seen:
            e["id"], n = f"{base}-{n}", n + 1
        seen.add(e["id"])
    return sorted(found, key=lambda e: e["id"])


def preset_of(entry: dict[str, Any], commit: str) -> dict[str, Any]:
    """One ``presets/deployments``-schema preset for a corpus entry."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from wizard.io.argv import parse_command

    cfg = parse_command(entry["argv"]).to_dict()
    cfg.pop("import_notes", None)
    url = f"https://github.com/vllm-project/recipes/blob/{commit}/{entry['recipe']}"
    return {"name": f"recipe-{entry['id']}", "title": f"vLLM recipe {entry['recipe']} ({entry['mode']}, {entry['hardware_key']})",
            "rationale": (f"speculative mode '{entry['mode']}' of the vLLM recipe, hardware key {entry['hardware_key']}"
                          + ("" if entry["hardware"] else f" (profile {entry['profile']} is not in the wizard's "
                                                          "hardware catalog: checked on H200x8)")),
            "hardware": entry["hardware"] or "H200x8", "expected_acceptance": None, "sources": [url], "config": cfg}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("recipes", type=Path, help="checkout of vllm-project/recipes")
    ap.add_argument("--commit", default=None, help="the recipes commit (default: git rev-parse HEAD in RECIPES)")
    ap.add_argument("--corpus", type=Path, default=Path("tests/data/recipes/speculative_recipes.json"))
    ap.add_argument("--presets", type=Path, default=None, help="also write one preset YAML per entry here")
    a = ap.parse_args(argv)
    commit = a.commit
    if not commit:
        commit = subprocess.run(["git", "-C", str(a.recipes), "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
    entries = read_recipes(a.recipes)
    a.corpus.parent.mkdir(parents=True, exist_ok=True)
    a.corpus.write_text(json.dumps({"source": "https://github.com/vllm-project/recipes", "commit": commit,
                                    "generator": "scripts/recipes_to_presets.py", "entries": entries}, indent=1) + "\n",
                        encoding="utf-8")
    print(f"{len(entries)} speculative entries from {len({e['recipe'] for e in entries})} recipes -> {a.corpus}")
    if a.presets:
        a.presets.mkdir(parents=True, exist_ok=True)
        for e in entries:
            p = preset_of(e, commit)
            (a.presets / f"{p['name']}.yaml").write_text(yaml.safe_dump(p, sort_keys=False, allow_unicode=True),
                                                         encoding="utf-8")
        print(f"{len(entries)} presets -> {a.presets}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
