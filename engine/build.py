"""Which build of the engine runs: the pure-Python sources, or the compiled modules of ``make fast``.

``make fast`` compiles the rules modules (and the random bot) with mypyc into C extension modules
next to their sources (``*.so``, git-ignored); Python then imports them instead of the ``.py``
files. Both builds give the same results. A compiled module older than its source would run the
old rules, so importing one is refused (``check_fresh``) until it is rebuilt or removed.
"""

from __future__ import annotations

import os
import sys
from types import ModuleType

#: the command that removes the compiled modules (the pure-Python build runs again)
REMOVE = "find engine bots -name '*.so' -delete && rm -f *__mypyc*.so"


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


# the compiled modules of `make fast`, the engine's and the random bot's (engine/__init__.py imports
# this module first, so a stale one is refused before it is imported)
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
check_fresh(os.path.join(_ROOT, "engine"))
check_fresh(os.path.join(_ROOT, "bots"))
