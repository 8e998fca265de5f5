"""The TypeScript verifier (clients/typescript/src/verify.ts, on node) checks every golden log of
the repository - the hash chain, the seed commitment, the Ed25519 signature with the public key
as ``GET /signing-key`` serves it - and rejects tampered copies; its canonical JSON, hashing,
commitments and signature checking agree with docs/log-format.md's test vectors."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.events.verify import forgeries

from .conftest import ROOT, node

GOLDEN = ROOT / "tests" / "golden"
KEY = GOLDEN / "signing-key.json"
LOGS = sorted(p.name for p in GOLDEN.glob("*.jsonl"))
#: RFC 8032's first test key (docs/log-format.md's signature vector): not the golden log's key
OTHER_KEY = "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="


def verdicts(ts: Path, *files: Path, key: str = str(KEY)) -> list[dict[str, Any]]:
    run = node(ts, "src/verify-cli.js", "--key", key, *map(str, files))
    assert run.returncode in (0, 1), run.stderr
    out = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(out) == len(files), run.stdout + run.stderr
    return out


def test_the_document_s_test_vectors_pass(ts_client: Path) -> None:
    run = node(ts_client, "src/vectors-cli.js", str(ROOT / "docs" / "log-format.md"))
    assert run.returncode == 0, run.stdout + run.stderr
    assert re.match(r"^\d+ test vectors passed$", run.stdout.strip())


def test_every_golden_log_verifies(ts_client: Path) -> None:
    assert LOGS, "no golden logs found"
    out = {Path(v["file"]).name: v for v in verdicts(ts_client, *(GOLDEN / n for n in LOGS))}
    for name, v in out.items():
        assert v["ok"], (name, v["reason"], v["line"])
        assert v["over"] and v["commitment"] == "checked", name
    exports = [n for n in LOGS if n.startswith("export-")]
    assert {out[n]["kind"] for n in exports} == {"envelopes"}
    assert {out[n]["kind"] for n in LOGS if n not in exports} == {"events"}
    signed = [n for n in exports if out[n]["signature"] == "signed"]
    assert signed, "no golden log is signed"
    assert all(out[n]["chainHead"] == _last_hash(n) for n in exports)


def _last_hash(name: str) -> str:
    lines = (GOLDEN / name).read_text(encoding="utf-8").splitlines()
    return str([json.loads(x) for x in lines if '"hash":' in x][-1]["hash"])


def _tampered(name: str) -> dict[str, tuple[str, str]]:
    """label -> (the tampered log's text, a fragment the verifier's reason must hold)."""
    lines = (GOLDEN / name).read_text(encoding="utf-8").splitlines()
    text = (GOLDEN / name).read_text(encoding="utf-8")
    out: dict[str, tuple[str, str]] = {}
    created = lines[0]
    seed = re.search(r'"seed":"([^"]*)"', created)
    assert seed is not None
    out["another seed"] = (  # in an export the hash chain notices it first
        text.replace(f'"seed":"{seed.group(1)}"', f'"seed":"{seed.group(1)}x"'),
        "hash does not match" if name.startswith("export-") else "commitment",
    )
    if not name.startswith("export-"):
        return out
    mid = len(lines) // 2

    def edit(i: int, new: str) -> str:
        return "\n".join(lines[:i] + [new] + lines[i + 1 :]) + "\n"

    changed = re.sub(
        r'("seat":)(\d)', lambda m: m.group(1) + str(1 - int(m.group(2)) % 2), lines[mid], count=1
    )
    if changed == lines[mid]:
        changed = lines[mid].replace('"actor":"', '"actor":"x', 1)
    out["an altered event"] = (edit(mid, changed), "hash does not match")
    out["a missing event"] = ("\n".join(lines[:mid] + lines[mid + 1 :]) + "\n", "seq")
    swapped = lines[:]
    swapped[mid], swapped[mid + 1] = swapped[mid + 1], swapped[mid]
    out["two events swapped"] = ("\n".join(swapped) + "\n", "seq")
    out["a line re-spaced"] = (edit(mid, lines[mid].replace(",", ", ", 1)), "canonical")
    if '"signature"' in lines[-1]:
        sig = json.loads(lines[-1])["signature"]
        worse = dict(sig, result={**sig["result"], "winners": [1]})
        out["another result signed"] = (
            edit(len(lines) - 1, _canonical({"signature": worse})),
            "result",
        )
        out["the signature forged"] = (
            edit(len(lines) - 1, lines[-1].replace(sig["sig"], sig["sig"][::-1])),
            "signature does not match",
        )
        out["the last event cut"] = (
            "\n".join(lines[:-2] + lines[-1:]) + "\n",
            "names another log",
        )
        out["the signature removed, a signature required"] = (
            "\n".join(lines[:-1]) + "\n",
            "no signature",
        )
    return out


def _canonical(obj: Any) -> str:
    from engine.canonical import canonical_json

    return canonical_json(obj)


@pytest.mark.parametrize("name", LOGS)
def test_tampered_copies_are_rejected(ts_client: Path, tmp_path: Path, name: str) -> None:
    cases = _tampered(name)
    files = []
    for i, (label, (text, _)) in enumerate(cases.items()):
        path = tmp_path / f"{i}.jsonl"
        path.write_text(text, encoding="utf-8")
        files.append((label, path))
    plain = [f for label, f in files if "required" not in label]
    required = [f for label, f in files if "required" in label]
    out = verdicts(ts_client, *plain)
    if required:
        run = node(
            ts_client,
            "src/verify-cli.js",
            "--require-signature",
            "--key",
            str(KEY),
            *map(str, required),
        )
        out += [json.loads(line) for line in run.stdout.splitlines()]
    reasons = {Path(v["file"]).name: v for v in out}
    for label, path in files:
        v = reasons[path.name]
        assert not v["ok"], f"{name}: {label} was accepted"
        assert cases[label][1] in v["reason"], f"{name}: {label}: {v['reason']}"


def test_a_signed_log_needs_the_server_s_key(ts_client: Path) -> None:
    signed = GOLDEN / "export-rules4-2p-signed.jsonl"
    (v,) = verdicts(ts_client, signed, key=OTHER_KEY)
    assert not v["ok"] and "not by the key given" in v["reason"]
    pem = json.loads(KEY.read_text())["pem"]
    (v,) = verdicts(ts_client, signed, key=pem)  # the key as PEM works as well
    assert v["ok"] and v["signature"] == "signed"


def test_logs_that_cannot_be_verified_say_why(ts_client: Path, tmp_path: Path) -> None:
    feed = tmp_path / "redacted.jsonl"  # a live game's export: the viewer's feed items
    item = {"actor": "system", "command_id": "create", "event": {"type": "RoundStarted", "v": 1}}
    feed.write_text(
        _canonical({**item, "seq": 1, "ts": "2026-01-01T00:00:00Z", "type": "RoundStarted"}) + "\n"
    )
    withheld = tmp_path / "withheld.jsonl"
    withheld.write_text('{"seed_withheld":{"detail":"d","game_id":"g","reason":"duplicate-set"}}\n')
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    out = verdicts(ts_client, feed, withheld, empty)
    assert [v["ok"] for v in out] == [False] * 3
    assert (
        "redacted" in out[0]["reason"]
        and out[1]["kind"] == "withheld"
        and "empty" in out[2]["reason"]
    )


def test_a_resigned_game_s_log_verifies_and_its_forgeries_are_refused(
    ts_client: Path, tmp_path: Path
) -> None:
    """The signed result is GameEnded's (a resignation's winners are not the scores' best), and a
    key given twice in any line, which JSON.parse would hide, is refused."""
    log = forgeries.resigned_log(forgeries.new_app_client())
    genuine = tmp_path / "genuine.jsonl"
    genuine.write_text(log, encoding="utf-8")
    forged = forgeries.forgeries(log)
    files = {}
    for i, (label, (text, _)) in enumerate(sorted(forged.items())):
        files[label] = tmp_path / f"{i}.jsonl"
        files[label].write_text(text, encoding="utf-8")
    out = verdicts(ts_client, genuine, *files.values(), key=forgeries.PUBLIC_KEY)
    assert out[0]["ok"] and out[0]["signature"] == "signed", out[0]
    for (label, path), v in zip(files.items(), out[1:], strict=True):
        assert Path(v["file"]) == path
        words = "twice" if forged[label][1] == forgeries.DUPLICATE else "GameEnded"
        assert not v["ok"] and words in v["reason"], (label, v)


def test_an_aborted_game_s_log_verifies_and_a_changed_ending_does_not(
    ts_client: Path, tmp_path: Path
) -> None:
    """A challenge game aborted in its first round ends GameAborted, GameEnded (reason aborted,
    no winner): the verifier takes it as a finished, signed log; the same log claiming a
    resignation instead is refused."""
    log = forgeries.aborted_log(forgeries.new_app_client())
    genuine = tmp_path / "aborted.jsonl"
    genuine.write_text(log, encoding="utf-8")
    changed = tmp_path / "changed.jsonl"
    changed.write_text(log.replace('"reason":"aborted"', '"reason":"resigned"'), encoding="utf-8")
    ok, bad = verdicts(ts_client, genuine, changed, key=forgeries.PUBLIC_KEY)
    assert ok["ok"] and ok["over"] and ok["signature"] == "signed", ok
    assert ok["commitment"] == "checked" and ok["kind"] == "envelopes", ok
    assert not bad["ok"] and "hash does not match" in bad["reason"], bad


#: (a JSON text, what keyProblem says of it: "twice", "order" or None)
KEY_CASES = [
    ('{"a":1,"a":2}', "twice"),
    ('{"b":1,"a":2}', "order"),
    ('{"winners":[9],"reason":"r","winners":[1]}', "twice"),  # the duplicate, not the disorder
    ('{"a":{"b":1,"b":2}}', "twice"),
    ('{"a":1,"b":{"c":1},"b":2}', "twice"),  # back in the outer object after a nested one
    ('[{"a":1},{"a":1,"a":1}]', "twice"),
    ('{"k":1,"\\u006b":2}', "twice"),  # the same key, once escaped
    ('{"\\"":1,"\\"":2}', "twice"),
    ('{"a\\\\":1,"a\\\\":2}', "twice"),
    ('{"a":[{"c":1},{"c":2}],"c":{"a":1}}', None),  # one key in different objects
    ('{"a":"{\\"b\\":1,\\"b\\":2}","b":"[,{"}', None),  # braces and quotes inside strings
    ('{"B":{},"a":1,"ab":2,"b":[1,{"x":[],"y":{}}]}', None),
    ('{"\\uffff":1,"\\ud83d\\ude00":2}', None),  # code point order, not UTF-16's
    ('{"\\ud83d\\ude00":1,"\\uffff":2}', "order"),
    ("{}", None),
]


def test_key_problem_finds_a_key_twice_and_keys_out_of_order(ts_client: Path) -> None:
    script = (
        "import { keyProblem } from './dist/src/canonical.js';"
        "const cases = JSON.parse(process.argv[1]);"
        "process.stdout.write(JSON.stringify(cases.map((t) => keyProblem(t))));"
    )
    run = subprocess.run(
        ["node", "--input-type=module", "-e", script, json.dumps([t for t, _ in KEY_CASES])],
        cwd=ts_client,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    for (text, want), said in zip(KEY_CASES, json.loads(run.stdout), strict=True):
        json.loads(text)  # every case is JSON
        if want is None:
            assert said is None, (text, said)
        else:
            assert said is not None and want in said, (text, said)
