"""Which build of the engine runs: the pure-Python sources, or the compiled modules of ``make fast``.

``make fast`` (``python -m engine.compiled``, ``main`` below) compiles the rules modules (and the
random bot) with mypyc into C extension modules next to their sources (``*.so``, git-ignored),
with the runtime they share in ``engine/_compiled__mypyc*.so`` (inside the package, so it is found
from any working directory); Python then imports them instead of the ``.py`` files. Both builds
give the same results. A compiled module older than its source would run the old rules, so
importing one is refused (``check_fresh``) until it is rebuilt or removed.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

#: the command that removes the compiled modules (the pure-Python build runs again)
REMOVE = "find engine bots -name '*.so' -delete"

#: what ``make fast`` compiles: the rules and the random bot's hot loop. Left pure: engine/__init__
#: (a compiled function refuses a wrong argument type with TypeError, and ``engine.play`` must
#: answer IllegalCommand), errors, the sampler, and the power handlers (``powers/table.py`` reads
#: their ``__qualname__``, which compiled nested functions lack).
MODULES = (
    "engine/catalogue.py",
    "engine/economy.py",
    "engine/flow.py",
    "engine/fold.py",
    "engine/leaving.py",
    "engine/observe.py",
    "engine/record.py",
    "engine/rng.py",
    "engine/scenario.py",
    "engine/scoring.py",
    "engine/state.py",
    "engine/phases/*.py",
    "engine/powers/registry.py",
    "bots/random_bot.py",
    "bots/arena.py",
)


def is_compiled(module: ModuleType) -> bool:
    return (getattr(module, "__file__", None) or "").endswith((".so", ".pyd"))


def compiled_modules(packages: tuple[str, ...] = ("engine", "bots")) -> list[str]:
    """The names of the loaded modules of these packages that are compiled."""
    return sorted(
        name
        for name, module in list(sys.modules.items())
        if name.split(".")[0] in packages and module is not None and is_compiled(module)
    )


def check_fresh(package_dir: str) -> None:
    """Refuse the compiled modules of a package (its directory, subpackages included) whose
    source changed after they were built: they would run the old code."""
    for folder, _dirs, files in os.walk(package_dir):
        for name in files:
            if not name.endswith((".so", ".pyd")):
                continue
            compiled = os.path.join(folder, name)
            source = os.path.join(folder, name.split(".", 1)[0] + ".py")
            if os.path.exists(source) and os.path.getmtime(source) > os.path.getmtime(compiled):
                raise ImportError(
                    f"{compiled} was compiled before {source} last changed, so it would run the "
                    f"old code: run `make fast` again, or remove the compiled modules ({REMOVE})"
                )


def describe() -> str:
    """The build in a few words, for benchmarks and logs."""
    compiled = compiled_modules()
    if not compiled:
        return "pure Python"
    return f"compiled ({len(compiled)} extension modules: make fast)"


def main() -> None:
    """Compile ``MODULES`` in place (run from the repository's root, with no compiled module
    present: ``make fast`` removes them first)."""
    import glob

    from mypyc.build import mypycify
    from setuptools import setup

    paths = [p for pattern in MODULES for p in sorted(glob.glob(pattern))]
    extensions = mypycify(paths, group_name="engine._compiled")
    setup(name="rfg-engine-compiled", ext_modules=extensions, script_args=["build_ext", "-i"])
    for folder in ("engine", "bots"):  # newer than their sources, whatever the copy order was
        for here, _dirs, files in os.walk(folder):
            for name in files:
                if name.endswith((".so", ".pyd")):
                    os.utime(os.path.join(here, name))


if __name__ == "__main__":
    main()

# the compiled modules of `make fast`, the engine's and the random bot's (engine/__init__.py imports
# this module first, so a stale one is refused before it is imported)
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
check_fresh(os.path.join(_ROOT, "engine"))
check_fresh(os.path.join(_ROOT, "bots"))
