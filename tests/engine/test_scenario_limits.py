"""``rfg scenario run`` on malformed, hostile or endless files: the real command in a subprocess
(under a memory cap, with a time limit) stops with exit 2 and one line naming the field and the
problem - no traceback, no runaway memory, no endless run."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RFG = str(Path(sys.executable).parent / "rfg")
MEMORY_CAP = 1024 * 1024 * 1024  # 1 GiB of address space: a bounded run needs far less


def _cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_scenario(path: Path, timeout: float = 60) -> tuple[int, list[str], str]:
    out = subprocess.run(
        [RFG, "scenario", "run", str(path)],
        cwd=ROOT,
        capture_output=True,
        timeout=timeout,
        preexec_fn=_cap,
    )
    lines = [ln for ln in out.stdout.decode().splitlines() if ln.startswith("ERROR")]
    return out.returncode, lines, out.stderr.decode()


def assert_refused(path: Path, *needles: str) -> str:
    code, errors, stderr = run_scenario(path)
    assert "Traceback" not in stderr, stderr
    assert code == 2, (code, errors, stderr[-1000:])
    assert len(errors) == 1, errors
    line = errors[0]
    assert "the engine failed" not in line, line
    for needle in needles:
        assert needle in line, f"{needle!r} not in {line!r}"
    return line


BILLION_LAUGHS = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
seats: [*i, *i]
step: ship
"""


def test_a_scenario_where_no_seat_has_a_die_stops_at_the_round_cap(tmp_path: Path) -> None:
    f = tmp_path / "nodice.yaml"
    f.write_text("name: nobody owns a die\nstep: assign\nseats: [{}, {}]\n")
    assert_refused(f, "seats:", "100 rounds", "die")


def test_billion_laughs_is_refused_without_expanding(tmp_path: Path) -> None:
    f = tmp_path / "laughs.yaml"
    f.write_text(BILLION_LAUGHS)
    assert_refused(f, "line 1", "aliases")


@pytest.mark.parametrize(
    "suffix,text",
    [
        (".yaml", "seats: " + "[" * 50_000 + "]" * 50_000 + "\n"),
        (".json", '{"seats": ' + "[" * 50_000 + "]" * 50_000 + "}"),
    ],
)
def test_deep_nesting_is_refused(tmp_path: Path, suffix: str, text: str) -> None:
    f = tmp_path / f"deep{suffix}"
    f.write_text(text)
    assert_refused(f, "nested more than 32 levels")


def test_a_huge_file_is_refused_before_parsing(tmp_path: Path) -> None:
    f = tmp_path / "huge.yaml"
    f.write_text("name: " + "x" * (2 * 1024 * 1024) + "\nseats: [{}, {}]\n")
    assert_refused(f, "larger than 1024 KiB")


def test_a_binary_file_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "bin.yaml"
    f.write_bytes(bytes(range(256)) * 8)
    assert_refused(f, "not UTF-8")


@pytest.mark.parametrize(
    "body,needles",
    [
        ("step: ship\nseats: [{faction: x}, {}]", ("seats[0].faction", "'x'")),
        ("step: ship\nrules: abc\nseats: [{}, {}]", ("rules:", "'abc'")),
        (
            "step: ship\nseats: [{dev_stack: [999]}, {}]",
            ("seats[0].dev_stack[0]", "unknown tile 999"),
        ),
        ("step: ship\nseats: [{columns: [blue]}, {}]", ("seats[0].columns", "must be a mapping")),
        ("step: ship\nbag: [999]\nseats: [{}, {}]", ("bag[0]", "unknown tile 999")),
        ("step: ship\nvp_pool: -5\nseats: [{}, {}]", ("vp_pool", "-5")),
        ("step: ship\nseats: [{home: 10}, {}]", ("seats[0].home", "1 to 9")),
        ("step: ship\nseats: [{cup: [blue]}, {}]\nsteps: []", ("steps", "unknown field")),
        ("step: ship\nseats: [{}, {credit: 3}]", ("seats[1].credit", "unknown field")),
        (
            "step: ship\nseats: [{}, {}]\nscript: [{seat: 7, command: {kind: ship}}]",
            ("script[0].seat", "0 to 1"),
        ),
        (
            "step: ship\nseats: [{}, {}]\nbag: [3]\nround: 1\nchance: {tiles: [3], dice: []}",
            ("chance.dice", "unknown field"),
        ),
        ("step: ship\nseats: [{dev_stack: [3]}, {}]\nbag: [3]", ("bag", "[3]")),
        ("step: ship\nseats: {a: 1}", ("seats", "must be a list")),
        ("round: 99999999999999999999999\nseats: [{}, {}]", ("round", "1 to 100")),
        ("- 1\n- 2", ("one scenario mapping",)),
        ("seats: [{}, {}\n", ("not valid YAML",)),
    ],
)
def test_schema_errors_name_the_field(tmp_path: Path, body: str, needles: tuple[str, ...]) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(body + "\n")
    assert_refused(f, *needles)


def test_a_good_file_still_passes(tmp_path: Path) -> None:
    out = subprocess.run(
        [RFG, "scenario", "run", str(ROOT / "tests/scenarios/rules/scoring-example.yaml")],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stdout.decode() + out.stderr.decode()


AMBITION_FILE = ROOT / "tests/scenarios/ambition/two-phase-reveal-shift.yaml"
SYNTHETIC = ROOT / "tests/data/ambition-synthetic.yaml"


def test_an_ambition_scenario_without_components_names_the_option() -> None:
    assert_refused(AMBITION_FILE, "ambition:", "--components FILE")


def test_ambition_dice_in_a_base_scenario_are_refused(tmp_path: Path) -> None:
    f = tmp_path / "base.yaml"
    f.write_text("step: ship\nseats: [{cup: [black]}, {}]\n")
    assert_refused(f, "seats[0].cup[0]", "'black'", "ambition: true")


def test_an_ambition_scenario_passes_with_a_component_file() -> None:
    out = subprocess.run(
        [RFG, "scenario", "run", "--components", str(SYNTHETIC), str(AMBITION_FILE)],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stdout.decode() + out.stderr.decode()


def test_a_broken_component_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "components.yaml"
    bad.write_text("format: rfg-ambition-components/1\nname: x\n")
    out = subprocess.run(
        [RFG, "scenario", "run", "--components", str(bad), str(AMBITION_FILE)],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stdout.decode().startswith(f"ERROR {bad}: "), out.stdout.decode()
