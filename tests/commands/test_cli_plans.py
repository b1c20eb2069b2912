"""The plan-file commands as a user runs them: real `plangate` subprocesses, real files."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from controller.plan import yamlio
from tests.support.gitenv import git, run_cli
from tests.support.plan_factory import BASE_TEXT, write_plan


def test_validate_json_reports_each_file(tmp_path: Path) -> None:
    good = write_plan(tmp_path, name="good")
    bad = write_plan(
        tmp_path, BASE_TEXT.replace("$<inputs.service>", "$<inputs.nope>", 1), name="bad"
    )
    result = run_cli("validate", "--json", str(good), str(bad))
    assert result.returncode == 1
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert first["valid"] and first["errors"] == [] and first["hash"].startswith("sha256:")
    assert second == {
        "path": str(bad),
        "format": "plan.yml",
        "valid": False,
        "hash": None,
        "errors": [
            {
                "code": "E_REF_UNKNOWN",
                "message": second["errors"][0]["message"],
                "path": "actions[0].params.service",
                "line": BASE_TEXT.splitlines().index('      service: "$<inputs.service>"') + 1,
                "remedy": second["errors"][0]["remedy"],
            }
        ],
        "warnings": second["warnings"],
    }


def test_validate_uses_catalog_from_config_lookup(tmp_path: Path) -> None:
    plan = write_plan(tmp_path)
    (tmp_path / "plangate.yml").write_text("tools:\n  other: {kind: echo}\n")
    result = run_cli("validate", str(plan), cwd=tmp_path)
    assert result.returncode == 1 and "E_TOOL_UNKNOWN" in result.stderr
    ok = tmp_path / "ok.yml"
    ok.write_text("tools:\n  echo: {kind: echo}\n")
    assert (
        run_cli("validate", str(plan), cwd=tmp_path, env={"PLANGATE_CONFIG": str(ok)}).returncode
        == 0
    )
    assert run_cli("--config", str(ok), "validate", str(plan), cwd=tmp_path).returncode == 0


@pytest.mark.parametrize(
    "config",
    [
        "tools:\n  x: {kind: shell}\n",
        "approvers: []\n",
        "approval:\n  max_age: soon\n",
        "tools: [1\n",
        "tools:\n  x: {kind: exec}\n",
        "identity: {name: caf\xe9}\n",  # not UTF-8: once an internal error
    ],
)
def test_bad_config_is_exit_2_with_code(tmp_path: Path, config: str) -> None:
    plan = write_plan(tmp_path)
    (tmp_path / "plangate.yml").write_bytes(config.encode("latin-1"))
    result = run_cli("validate", str(plan), cwd=tmp_path)
    assert result.returncode == 2
    assert "E_CONFIG_INVALID" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("kind", ["folder", "FIFO", "missing", "loop", "dangling"])
def test_a_config_that_is_no_file_says_what_it_is(tmp_path: Path, kind: str) -> None:
    """``--config`` naming a folder or a FIFO said "does not exist", which sent people looking
    for a file that was there (round 109's surfaces, noticed): now it names what is there. So
    for a link in a loop of links and a link to nothing (round 111's surfaces, noticed)."""
    config = tmp_path / "plangate.yml"
    if kind == "folder":
        config.mkdir()
    elif kind == "FIFO":
        os.mkfifo(config)
    elif kind == "loop":
        (tmp_path / "other.yml").symlink_to(config)
        config.symlink_to(tmp_path / "other.yml")
    elif kind == "dangling":
        config.symlink_to("gone.yml")
    result = run_cli("status", "--config", str(config), cwd=tmp_path)
    assert result.returncode == 2
    assert "E_CONFIG_INVALID" in result.stderr and "Traceback" not in result.stderr
    said = {
        "folder": "is a folder, not a regular file",
        "FIFO": "is a FIFO, not a regular file",
        "loop": "is a symbolic link in a loop of them",
        "dangling": "is a symbolic link to gone.yml, which does not exist",
    }
    assert said.get(kind, "does not exist") in result.stderr, result.stderr


@pytest.mark.parametrize(
    "content",
    [
        b"\xff\xfe\x00garbage",
        b"",
        b"- a list\n",
        b"plan: {{{\n",
        b"\x00" * 10,
        b"x: " + b"[" * 100_000 + b"]" * 100_000 + b"\n",
    ],
)
def test_garbage_never_tracebacks(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "PLAN.yml"
    path.write_bytes(content)
    for command in (["validate"], ["freeze"], ["hash"], ["show"], ["validate", "--json"]):
        result = run_cli(*command, str(path))
        assert result.returncode == 1, (command, result.stderr)
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr
        assert "E_" in result.stderr + result.stdout


def test_missing_file_is_usage_error(tmp_path: Path) -> None:
    result = run_cli("validate", str(tmp_path / "nope" / "PLAN.yml"))
    assert result.returncode == 2 and "no such plan file" in result.stderr


@pytest.mark.parametrize(
    ("argv", "said", "remedy"),
    [
        (["frobnicate"], "argument COMMAND: invalid choice: 'frobnicate'", "plangate --help"),
        (
            ["show"],
            "plangate show: the following arguments are required: PATH",
            "plangate show --help",
        ),
        (["validate", "--bogus", "x.yml"], "unrecognized arguments: --bogus", "plangate --help"),
    ],
)
def test_a_usage_mistake_names_its_code_and_remedy(
    tmp_path: Path, argv: list[str], said: str, remedy: str
) -> None:
    result = run_cli(*argv, cwd=tmp_path)
    assert result.returncode == 2
    assert "usage: plangate" in result.stderr  # the usage line first, as argparse prints it
    assert f"plangate: E_USAGE: {said}" in result.stderr
    assert f"remedy: see `{remedy}`" in result.stderr
    assert "Traceback" not in result.stderr
    shaped = run_cli(*argv, "--json", cwd=tmp_path)
    answer = json.loads(shaped.stdout)
    assert shaped.returncode == 2 and answer["code"] == "E_USAGE" and said in answer["message"]
    assert "usage:" not in shaped.stderr  # JSON callers get the shape, not argparse's text


def test_hash_matches_validate_and_ignores_status(tmp_path: Path) -> None:
    path = write_plan(tmp_path)
    first = run_cli("hash", str(path)).stdout.strip()
    path.write_text(BASE_TEXT.replace("status: pending_approval", "status: draft"))
    assert run_cli("hash", str(path)).stdout.strip() == first
    assert json.loads(run_cli("validate", "--json", str(path)).stdout)["hash"] == first


def test_show_preview_for_reviewers(tmp_path: Path) -> None:
    text = BASE_TEXT.replace(
        "    retries: 2", "    retries: 2\n    requires_approval: true\n    timeout: 30"
    )
    path = write_plan(tmp_path, text)
    out = run_cli("show", str(path)).stdout
    assert "Plan: Rotate keys" in out and "not frozen" in out
    assert "[2] echo - Rotate the first key" in out
    assert "«$<actions[1].outputs.keys>»" in out
    assert "output keys <- $.service" in out
    assert "on failure: retry up to 2 times; timeout 30s" in out
    assert "GATE" in out
    data = json.loads(run_cli("show", "--json", str(path)).stdout)
    assert data["actions"][1]["requires_approval"] is True and data["hash"].startswith("sha256:")


def test_schema_validates_plans_for_editors(tmp_path: Path) -> None:
    schema = json.loads(run_cli("schema").stdout)
    jsonschema.Draft202012Validator.check_schema(schema)
    data = yamlio.read_yaml(BASE_TEXT).data
    jsonschema.validate(data, schema)
    data["actions"][0]["on_faliure"] = "stop"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema)


def test_init_refuses_a_file_and_a_folder_inside_a_repository(tmp_path: Path) -> None:
    """Round 107: init into a file was an internal error; into the watched plans repo (or a
    plan's folder in it) it wrote the config, which decides who may approve, where that
    repository's agent writes and commits."""
    (tmp_path / "afile").write_text("x")
    repo = tmp_path / "plans-repo"
    repo.mkdir()
    git(repo, "init", "-q")
    env = {"GIT_AUTHOR_EMAIL": "me@example.com"}
    for target, said in (
        (tmp_path / "afile", "is not a folder"),
        (tmp_path / "afile" / "x", "cannot make"),
        (repo / "ops", f"is inside the git working tree {repo}"),
        (repo / "plans" / "new", f"is inside the git working tree {repo}"),
    ):
        result = run_cli("init", str(target), env=env)
        assert result.returncode == 2 and "E_USAGE" in result.stderr, result.stderr
        assert said in result.stderr and "Traceback" not in result.stderr
        assert "remedy:" in result.stderr
    assert not (repo / "ops").exists() and not (repo / "plans").exists()


def test_init_refuses_a_bare_repository_and_a_folder_in_it(tmp_path: Path) -> None:
    """Round 111 (atk111b, ``init-into-bare-repo``): ``init <bare repository>`` exited 0 and
    wrote plangate.yml and a nested plans repository into that git directory. A git
    directory is a repository as much as a working tree is: E_USAGE, nothing written."""
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    before = sorted(p.name for p in bare.iterdir())
    for target in (bare, bare / "refs" / "ops"):
        result = run_cli("init", str(target), env={"GIT_AUTHOR_EMAIL": "me@example.com"})
        assert result.returncode == 2 and "E_USAGE" in result.stderr, result.stderr
        assert f"is inside the git directory (a bare repository) {bare}" in result.stderr
        assert "outside every git repository" in result.stderr
    assert sorted(p.name for p in bare.iterdir()) == before
    assert not (bare / "refs" / "ops").exists()


def test_init_walkthrough_works_exactly_as_printed(tmp_path: Path) -> None:
    result = run_cli("init", str(tmp_path / "ops"), env={"GIT_AUTHOR_EMAIL": "me@example.com"})
    assert result.returncode == 0, result.stderr
    config = yamlio.read_yaml((tmp_path / "ops" / "plangate.yml").read_text()).data
    assert config["approval"]["approvers"] == ["me@example.com"]
    repo = tmp_path / "ops" / "plans-repo"
    assert git(repo, "status", "--porcelain") == ""  # the config is not in the repository
    steps = [line[4:] for line in result.stdout.splitlines() if line.startswith("  $ ")]
    assert steps and steps[0].startswith("cd ")
    cwd, env = tmp_path, {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.update(GIT_AUTHOR_EMAIL="me@example.com", GIT_COMMITTER_EMAIL="me@example.com")
    outputs = []
    for step in steps:  # every line as printed, in a shell, from where the previous left off
        if step.startswith("cd "):
            cwd = cwd / shlex.split(step)[1]
            continue
        done = subprocess.run(
            step, shell=True, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True
        )
        assert done.returncode == 0, (step, done.stdout, done.stderr)
        outputs.append(done.stdout)
    assert "completed" in outputs[-2].splitlines()[1]  # `plangate status`
    assert "controller: plangate: complete plans/hello" in outputs[-1]  # `git log`
    assert "plangate: plangate:" not in outputs[-1]
    assert "me@example.com" in git(repo, "log", "-1", "--format=%b", "--grep=start")
    again = run_cli("init", str(tmp_path / "ops"))
    assert again.returncode == 2 and "E_USAGE" in again.stderr


def test_special_files_are_usage_errors_not_hangs(tmp_path: Path) -> None:
    fifo = tmp_path / "PLAN.yml"
    os.mkfifo(fifo)
    for target in (fifo, Path("/dev/zero")):  # once: blocked forever / read until OOM
        for command in ("validate", "hash", "freeze", "show"):
            result = run_cli(command, str(target), timeout=30)
            assert result.returncode == 2, (command, result.stderr)
            assert "E_USAGE" in result.stderr and "not a regular file" in result.stderr


def test_freeze_writes_through_a_symlinked_plan(tmp_path: Path) -> None:
    real = write_plan(tmp_path, name="real")
    folder = tmp_path / "plans" / "linked"
    folder.mkdir(parents=True)
    (folder / "PLAN.yml").symlink_to(real)
    result = run_cli("freeze", str(folder))
    assert result.returncode == 0, result.stderr
    assert (folder / "PLAN.yml").is_symlink()  # was replaced by a regular file
    assert real.read_text().startswith(BASE_TEXT) and "frozen:" in real.read_text()


def test_plan_with_thousands_of_problems_reports_them_all(tmp_path: Path) -> None:
    # finding each problem's line once rebuilt an index of the whole file: hours for 10k
    count = 5000
    actions = "".join(
        f"  - {{id: {i}, tool: nope, why: w, params: {{}}}}\n" for i in range(1, count + 1)
    )
    path = write_plan(tmp_path, BASE_TEXT.split("actions:\n")[0] + "actions:\n" + actions)
    config = tmp_path / "plangate.yml"
    config.write_text(f"limits: {{max_actions: {count}}}\ntools: {{echo: {{kind: echo}}}}\n")
    result = run_cli("--config", str(config), "validate", "--json", str(path), timeout=60)
    (record,) = (json.loads(line) for line in result.stdout.splitlines())
    assert len(record["errors"]) == 2 * count  # not declared, and not in the catalog
    assert record["errors"][-1]["line"] == BASE_TEXT.split("actions:\n")[0].count("\n") + count + 1


def test_show_escapes_text_that_could_hide_or_reorder_what_a_reviewer_reads(
    tmp_path: Path,
) -> None:
    text = BASE_TEXT.replace(
        'why: "List the keys"', 'why: "List\\e[8m hidden\\e[0m\\rsafe \\u202Eexe.txt\\x9b"'
    ).replace("      limit: 10", '      "li\\emit": "v\\x9b\\u2066"')
    path = write_plan(tmp_path, text)
    result = run_cli("show", str(path))
    assert result.returncode == 0, result.stderr
    for raw in ("\x1b", "\r", "\u202e", "\x9b", "\u2066"):
        assert raw not in result.stdout
    assert "List\\x1b[8m hidden\\x1b[0m\\rsafe \\u202eexe.txt\\x9b" in result.stdout
    assert 'param li\\x1bmit = "v\\x9b\\u2066"' in result.stdout


@pytest.mark.parametrize(
    ("claim", "kind"),
    [("plan.yml", "symlink"), ("PLAN.YML", "folder"), ("PLAN.y\u200cml", "file"),
     ("PLAN.md", "file"), ("plan.JSON", "file")],
)  # fmt: skip
def test_the_cli_holds_a_source_the_controller_holds(tmp_path: Path, claim: str, kind: str) -> None:
    """Round 74: ``validate`` said a ``PLAN.json`` beside a symlink ``plan.yml``, a folder
    ``PLAN.YML/``, a twin ``plan.JSON`` or a second source "valid (sha256:...)", ``hash``
    printed a hash, ``show`` one of two documents, and ``freeze`` wrote ``frozen:`` into a
    source beside its twin, where the controller holds the folder E_PLAN_AMBIGUOUS and
    converts nothing. Every command now answers the folder's verdict and writes nothing."""
    folder = tmp_path / "plans" / "x"
    folder.mkdir(parents=True)
    text = yamlio.read_yaml(BASE_TEXT).data
    (folder / "PLAN.json").write_text(json.dumps(text, indent=1))
    if kind == "symlink":
        (folder / claim).symlink_to("../y/PLAN.yml")
    elif kind == "folder":
        (folder / claim).mkdir()
        (folder / claim / "PLAN.yml").write_text(BASE_TEXT)
    else:
        (folder / claim).write_text(BASE_TEXT)
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    for command in ("validate", "hash", "show", "freeze"):
        for target in (folder, folder / "PLAN.json"):
            result = run_cli(command, str(target))
            out = result.stdout + result.stderr
            assert result.returncode == 1 and "E_PLAN_AMBIGUOUS" in out, (command, out)
            assert "sha256:" not in out, (command, out)
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before


def test_the_cli_reads_a_lone_source_as_the_daemon_converts_it(tmp_path: Path) -> None:
    folder = tmp_path / "plans" / "x"
    folder.mkdir(parents=True)
    (folder / "PLAN.json").write_text(json.dumps(yamlio.read_yaml(BASE_TEXT).data))
    (folder / "EXECUTION_LOG.md").write_text("# Execution log\n")  # no claim of its place
    result = run_cli("validate", str(folder))
    assert result.returncode == 0 and "valid (sha256:" in result.stdout, result.stderr


@pytest.mark.parametrize("name", ["PLAN.json", "PLAN.md"])
def test_show_renders_a_source_as_the_daemon_converts_it(tmp_path: Path, name: str) -> None:
    """``show`` of a plan folder holding only a source read the source as YAML: a valid
    PLAN.md or PLAN.json was "E_YAML_PARSE", while ``validate`` and ``hash`` read it as the
    daemon converts it. The reviewer's view is now that conversion, in every format, with
    the hash ``hash`` gives, and says it is a source's."""
    import toon_format

    folder = tmp_path / "plans" / "x"
    folder.mkdir(parents=True)
    if name == "PLAN.json":
        (folder / name).write_text(json.dumps(yamlio.read_yaml(BASE_TEXT).data))
    else:
        examples = Path(__file__).resolve().parents[2] / "examples" / "formats"
        (folder / name).write_bytes((examples / "toon-plan-core.md").read_bytes())
    hashed = run_cli("hash", str(folder))
    assert hashed.returncode == 0, hashed.stderr
    plan_hash = hashed.stdout.split()[-1]
    assert plan_hash.startswith("sha256:"), hashed.stdout
    for target in (folder, folder / name):
        text = run_cli("show", str(target))
        assert text.returncode == 0, text.stderr
        assert plan_hash in text.stdout and f"Source:  {name}, shown as" in text.stdout
        as_json = run_cli("show", str(target), "--format", "json")
        view = json.loads(as_json.stdout)
        assert (view["hash"], view["converted_from"]) == (plan_hash, name)
        toon = run_cli("show", str(target), "--format", "toon")
        assert toon_format.decode(toon.stdout.strip()) == view
        md = run_cli("show", str(target), "--format", "markdown")
        assert md.returncode == 0 and "shown as the daemon converts it" in md.stdout
    (folder / name).write_text("# Only a title\n\nno steps\n" if name == "PLAN.md" else "{}")
    broken = run_cli("show", str(folder))
    assert broken.returncode == 1 and "E_YAML_PARSE" not in broken.stderr, broken.stderr
    said = json.loads(run_cli("validate", str(folder), "--json").stdout)  # the conversion's
    assert f": {said['errors'][0]['code']}: " in broken.stderr, (said, broken.stderr)


@pytest.mark.parametrize("hold", ["attributes", "link"])
def test_show_of_a_source_the_daemon_holds_is_its_code(tmp_path: Path, hold: str) -> None:
    """Round 123 (``show-ignores-source-hold``): a committed PLAN.md the daemon holds (the
    committed ``.gitattributes`` hide it from a review; a symbolic link) was rendered by
    ``show`` with a hash "not frozen" that nothing would ever freeze, while ``hash`` said the
    code. ``show`` asks the same hold rules: the code, exit 1, no plan and no hash."""
    examples = Path(__file__).resolve().parents[2] / "examples" / "formats"
    source = (examples / "toon-plan-core.md").read_bytes()
    folder = tmp_path / "plans" / "x"
    folder.mkdir(parents=True)
    if hold == "attributes":
        (folder / "PLAN.md").write_bytes(source)
        (tmp_path / ".gitattributes").write_text("plans/x/PLAN.md linguist-generated\n")
        code = "E_ATTRIBUTE_UNSUPPORTED"
    else:
        (tmp_path / "notes").mkdir()
        (tmp_path / "notes" / "real.md").write_bytes(source)
        (folder / "PLAN.md").symlink_to("../../notes/real.md")
        code = "E_UNSAFE_PATH"
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-qm", "a")
    assert code in run_cli("hash", "plans/x", cwd=tmp_path).stderr
    for target in ("plans/x", "plans/x/PLAN.md"):
        for fmt in ("text", "json", "markdown", "toon"):
            shown = run_cli("show", target, "--format", fmt, cwd=tmp_path)
            said = shown.stdout + shown.stderr
            assert shown.returncode == 1 and code in said, (target, fmt, said)
            assert "sha256:" not in said and "not frozen" not in said, (target, fmt, said)


@pytest.mark.parametrize("target", ["plan", "dangling"])
def test_the_readers_refuse_a_linked_plan_file_as_the_controller_holds_it(
    tmp_path: Path, target: str
) -> None:
    """A PLAN.yml that is a symbolic link is held ``E_UNSAFE_PATH`` by the controller and
    never runs; the readers said what the link points at (``show``: that plan, ``validate``:
    valid, with a warning naming the target's folder) or, for a dangling link, that the
    folder holds no plan file (``approve``: ``E_USAGE``). Each now says ``E_UNSAFE_PATH``,
    the target never read."""
    git(tmp_path, "init", "-q", "-b", "main")
    real = write_plan(tmp_path, name="real")
    folder = tmp_path / "plans" / "x"
    folder.mkdir()
    (folder / "PLAN.yml").symlink_to("../real/PLAN.yml" if target == "plan" else "../nowhere")
    for command in (("show",), ("validate",), ("hash",), ("approve",)):
        for named in ("plans/x", "plans/x/PLAN.yml"):
            result = run_cli(*command, named, cwd=tmp_path)
            said = result.stdout + result.stderr
            assert result.returncode == 1, (command, named, said)
            assert "E_UNSAFE_PATH" in said, (command, named, said)
            assert "rotate" not in said and "plans/real" not in said, (command, named, said)
    assert real.read_text(encoding="utf-8") == BASE_TEXT


@pytest.mark.parametrize(
    "args",
    [
        ["validate", "plans/LONG", "--config", "CFG"],
        ["hash", "plans/LONG", "--config", "CFG"],
        ["show", "plans/LONG", "--config", "CFG"],
        ["validate", "/tmp/LONG.yml", "--config", "CFG"],
        ["status", "--config", "/tmp/LONG.yml"],
        ["status", "--json", "--config", "/tmp/LONG.yml"],
        ["schema", "--config", "/tmp/LONG.yml"],
    ],
)
def test_a_name_the_system_refuses_is_a_coded_error(tmp_path: Path, args: list[str]) -> None:
    """Round 108: a path part over 255 bytes was "internal error: OSError: [Errno 36]" on
    every command that takes a path; an operating system's refusal of a named file is the
    asker's to fix: a code, the file, a remedy."""
    repo = tmp_path / "repo"
    (repo / "plans").mkdir(parents=True)
    git(repo, "init", "-q")
    config = tmp_path / "plangate.yml"
    config.write_text(f"repo: {repo}\napproval: {{approvers: [alice@example.com]}}\n")
    args = [a.replace("LONG", "a" * 300).replace("CFG", str(config)) for a in args]
    result = run_cli(*args, cwd=repo)  # where a user types ``plans/<name>``
    assert result.returncode != 0, (result.stdout, result.stderr)
    assert "internal error" not in result.stderr + result.stdout
    assert "Traceback" not in result.stderr
    assert "E_USAGE" in result.stderr or "E_UNSAFE_PATH" in result.stderr, result.stderr
    assert "remedy" in result.stderr or "rename" in result.stderr, result.stderr
    if "--json" in args:
        assert json.loads(result.stdout)["code"] == "E_USAGE", result.stdout
