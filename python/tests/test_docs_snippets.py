"""Docs that run: every Python snippet of README.md and docs/ runs, and prints what the doc
says it prints (TESTING.md, "Docs that run", states the same convention).

- **Snippets.** Every ```python (or ```py, ```python3) block of README.md and docs/**/*.md is
  run on its own: a fresh interpreter (``sys.executable``), the repository root as the
  working directory, ``TIMEOUT`` seconds at most, from a script file padded with blank
  lines so that a traceback's line numbers are the doc's. A snippet defines everything it
  uses and reads only data shipped in the repository. ```pycon blocks (``>>>`` prompts) are
  refused: write a ```python block and its output block.
- **Its output.** A ```text block that follows the snippet (nothing but blank lines
  between) and whose first line is ``Output:`` holds what the snippet prints on stdout (the
  lines after ``Output:``). A snippet without such a block must print nothing. stderr
  (progress lines, warnings) is not compared. An ``Output:`` block after anything else
  fails the test.
- **Example scripts.** A shell line ``python SCRIPT.py ARGS`` (an indented block or a ```sh,
  ```console or ```bash block) followed by an ``Output:`` block is run the same way
  (``sys.executable SCRIPT.py ARGS``): ``examples/python/compare_svc.py`` in docs/python.md.
  Other shell lines are not run (installs, the test suite itself, peers' own venvs).
- **Comparison.** Trailing spaces and leading or trailing blank lines are dropped; a run of
  spaces in the doc matches any run of spaces; ``...`` in the doc matches any text, across
  lines too (doctest's ELLIPSIS); every number is compared as a number: one written with
  decimals matches within one unit of its last written decimal (``0.9517`` matches 0.9516
  to 0.9518, and ``0.95173``: the last digits can move with the thread count and the order
  of float sums), one without decimals must be equal, and one followed by `` s`` (seconds of
  wall-clock time) matches any number.
- **Not run.** A snippet that cannot run here (a cluster, a file only the user has) is
  marked by the line ``<!-- docs-test: no-run: REASON -->`` right before its fence.
  ``NO_RUN`` below lists every such mark with its reason, and the test fails when the docs
  and the list differ, so that a mark is a decision made here, not in passing.
- **Failures** name the doc file and the snippet's first line (``docs/python.md:28``), show
  the expected and the printed output side by side (a diff) and the end of stderr.

Each run is a separate test (``README.md:92``), marked slow (a fresh interpreter, a
second or more); the checks of the docs' marks, of the markdown reading (on a sample doc)
and of the comparison are quick.
"""

import difflib
import functools
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300  # seconds per snippet; they take seconds (TESTING.md)

# (doc, reason) of every snippet marked `<!-- docs-test: no-run: REASON -->`: none so far.
NO_RUN = set()

PYTHON_FENCES = {"python", "py", "python3"}
SHELL_FENCES = {"sh", "shell", "bash", "console"}
NO_RUN_MARK = re.compile(r"^<!--\s*docs-test:\s*no-run:\s*(.*?)\s*-->\s*$")
SCRIPT_LINE = re.compile(r"^\s*(?:\$\s+)?python3?\s+(\S+\.py)((?:\s+\S+)*)\s*$")


@dataclass
class Snippet:
    doc: str  # path relative to the repository root
    line: int  # 1-based line of the snippet's first line (the command line for scripts)
    code: str  # the Python source, or None for a script
    argv: list  # the script and its arguments, or None for a code block
    expected: str  # what it prints (None: nothing)
    no_run: str  # the no-run mark's reason, or None

    @property
    def where(self):
        return f"{self.doc}:{self.line}"


def docs():
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(lines):
    """The fenced and indented code blocks of a markdown file's lines, in order:
    (kind, info, first line index of the content, content lines, end index)."""
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^(\s{0,3})(`{3,}|~{3,})\s*(.*)$", lines[i])
        if m:
            fence, info = m.group(2), m.group(3).strip()
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence):
                j += 1
            out.append(("fenced", info, i + 1, lines[i + 1 : j], j))
            i = j + 1
            continue
        if lines[i].startswith("    ") and lines[i].strip() and (i == 0 or not lines[i - 1].strip()):
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            while j > i and not lines[j - 1].strip():
                j -= 1
            out.append(("indented", "", i, [l[4:] for l in lines[i:j]], j - 1))
            i = j
            continue
        i += 1
    return out


def next_block_is_output(lines, end, following):
    """The expected output when the block after line ``end`` is an ``Output:`` text block
    with nothing but blank lines between; else None."""
    if following is None:
        return None
    kind, info, start, content, _ = following
    between = lines[end + 1 : start - (1 if kind == "fenced" else 0)]
    if any(l.strip() for l in between):
        return None
    if is_output_block(following):
        return "\n".join(content[1:])
    return None


def is_output_block(block):
    kind, info, _, content, _ = block
    return (kind == "fenced" and info.split()[:1] == ["text"] and bool(content)
            and content[0].strip() == "Output:")


def collect_doc(rel, text):
    """The snippets and example-script lines of one doc (``rel``: its path from the
    repository root), and the problems of its marks (an Output: block after nothing
    runnable, a ```pycon block)."""
    snippets, problems = [], []
    lines = text.splitlines()
    found = blocks(lines)
    used_outputs = set()
    for k, block in enumerate(found):
        kind, info, start, content, end = block
        following = found[k + 1] if k + 1 < len(found) else None
        lang = info.split()[0].lower() if info.split() else ""
        if kind == "fenced" and lang in ("pycon", "python-repl", ">>>"):
            problems.append(f"{rel}:{start}: a ```{lang} block; write a ```python block "
                            "and an Output: block after it (python/tests/test_docs_snippets.py)")
            continue
        expected = next_block_is_output(lines, end, following)
        if kind == "fenced" and lang in PYTHON_FENCES:
            prev = start - 2  # the line before the fence
            while prev >= 0 and not lines[prev].strip():
                prev -= 1
            mark = NO_RUN_MARK.match(lines[prev]) if prev >= 0 else None
            snippets.append(Snippet(rel, start + 1, "\n".join(content), None, expected,
                                    mark.group(1) if mark else None))
        elif (kind == "indented" or lang in SHELL_FENCES) and expected is not None:
            commands = [(n, l) for n, l in enumerate(content) if l.strip()]
            n, last = commands[-1] if commands else (0, "")
            m = SCRIPT_LINE.match(last)
            if not m:
                continue  # reported below as an Output: block after nothing runnable
            snippets.append(Snippet(rel, start + n + 1, None, [m.group(1), *m.group(2).split()],
                                    expected, None))
        else:
            continue
        if expected is not None:
            used_outputs.add(k + 1)
    for k, block in enumerate(found):
        if is_output_block(block) and k not in used_outputs:
            problems.append(f"{rel}:{block[2]}: an Output: block that follows no ```python "
                            "block and no `python SCRIPT.py` line")
    return snippets, problems


def collect():
    snippets, problems = [], []
    for path in docs():
        rel = path.relative_to(ROOT).as_posix()
        found, wrong = collect_doc(rel, path.read_text(encoding="utf-8"))
        snippets += found
        problems += wrong
    return snippets, problems


SNIPPETS, PROBLEMS = collect()
TO_RUN = [s for s in SNIPPETS if s.no_run is None]

# The comparison. -----------------------------------------------------------------------

NUMBER = re.compile(r"[-+]?\d+(?:\.(\d+))?(?:[eE]([-+]?\d+))?")
SECONDS = re.compile(r" s\b")
SPACES = re.compile(r"[ \t]+")


def tokens(expected):
    """The doc's output as ("lit", text), ("space",), ("num", value, unit), ("secs",),
    ("any",) tokens, and the offset in ``expected`` where each starts."""
    out, starts, i, lit = [], [], 0, []

    def flush():
        if lit:
            out.append(("lit", "".join(lit)))
            starts.append(i - len(lit))
            lit.clear()

    while i < len(expected):
        if expected.startswith("...", i):
            flush()
            out.append(("any",))
            starts.append(i)
            i += 3
            continue
        m = SPACES.match(expected, i)
        if m:
            flush()
            out.append(("space",))
            starts.append(i)
            i = m.end()
            continue
        m = NUMBER.match(expected, i)
        if m:
            flush()
            starts.append(i)
            if SECONDS.match(expected, m.end()):
                out.append(("secs",))
            else:
                decimals = len(m.group(1) or "")
                exponent = int(m.group(2) or 0)
                unit = 10.0 ** (exponent - decimals) if decimals else 0.0
                out.append(("num", float(m.group(0)), unit))
            i = m.end()
            continue
        lit.append(expected[i])
        i += 1
    flush()
    return out, starts


def first_difference(expected, actual):
    """None when the printed text ``actual`` is the doc's ``expected`` under the rules
    above; else where they part: the doc's line and the printed line, as text."""
    toks, starts = tokens(expected)
    furthest = [0, 0]

    @functools.lru_cache(maxsize=None)
    def at(k, pos):
        furthest[:] = max(furthest, [k, pos])
        if k == len(toks):
            return pos == len(actual)
        tok = toks[k]
        if tok[0] == "any":
            return any(at(k + 1, p) for p in range(pos, len(actual) + 1))
        if tok[0] == "lit":
            return actual.startswith(tok[1], pos) and at(k + 1, pos + len(tok[1]))
        if tok[0] == "space":
            m = SPACES.match(actual, pos)
            return bool(m) and at(k + 1, m.end())
        m = NUMBER.match(actual, pos)
        if not m:
            return False
        if tok[0] == "num":
            value, unit = tok[1], tok[2]
            if abs(float(m.group(0)) - value) > unit * (1 + 1e-9) + 1e-12 * abs(value):
                return False
        return at(k + 1, m.end())

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(toks) + 1000))
    if at(0, 0):
        return None
    k, pos = furthest
    doc_at = starts[k] if k < len(starts) else len(expected)
    doc_n = expected.count("\n", 0, doc_at)
    printed_n = actual.count("\n", 0, pos)
    doc_line = (expected.split("\n") + [""])[doc_n]
    printed_line = (actual.split("\n") + [""])[printed_n]
    return (f"at line {doc_n + 1} of the Output: block ({doc_line!r}) and line "
            f"{printed_n + 1} of what was printed ({printed_line!r})")


def matches(expected, actual):
    return first_difference(expected, actual) is None


def normalize(text):
    return "\n".join(l.rstrip() for l in text.strip("\n").splitlines()).strip("\n")


# The tests. -----------------------------------------------------------------------------


def test_the_docs_have_snippets():
    """The collection finds the snippets (a parse gone wrong would make the suite empty)."""
    docs_with = {s.doc for s in SNIPPETS}
    assert {"README.md", "docs/python.md"} <= docs_with, docs_with
    assert any(s.argv for s in SNIPPETS), "examples/python/compare_svc.py's line is not found"


def test_every_output_block_belongs_to_a_snippet():
    assert not PROBLEMS, "\n".join(PROBLEMS)


def test_the_no_run_marks_are_the_listed_ones():
    marked = {(s.doc, s.no_run) for s in SNIPPETS if s.no_run is not None}
    assert marked == NO_RUN, (
        f"marked in the docs but not in NO_RUN: {sorted(marked - NO_RUN)}; "
        f"in NO_RUN but not marked: {sorted(NO_RUN - marked)}"
    )


SAMPLE = """# A doc

```python
print(1)
```

```text
Output:
1
```

<!-- docs-test: no-run: needs a cluster -->
```python
client = connect()
```

Run it:

    python examples/python/some.py data/uci/sonar.csv

```text
Output:
done
```

```text
Output:
an orphan
```

    python -m pytest python/tests -q

```pycon
>>> 1
```
"""


def test_the_collection():
    """The markdown reading of the module docstring, on a sample doc."""
    found, problems = collect_doc("docs/sample.md", SAMPLE)
    assert [(s.where, s.code, s.argv, s.expected, s.no_run) for s in found] == [
        ("docs/sample.md:4", "print(1)", None, "1", None),
        ("docs/sample.md:14", "client = connect()", None, None, "needs a cluster"),
        ("docs/sample.md:19", None, ["examples/python/some.py", "data/uci/sonar.csv"],
         "done", None),
    ]
    assert [p.split(": ")[0] for p in problems] == ["docs/sample.md:33", "docs/sample.md:26"]


def test_the_comparison():
    """The rules of the module docstring, on their own (so that a loose matcher cannot
    make the snippet tests pass by accident)."""
    assert matches("accuracy 0.9517", "accuracy 0.9517")
    assert matches("accuracy 0.9517", "accuracy 0.95173")
    assert matches("accuracy 0.9517", "accuracy 0.9518")
    assert not matches("accuracy 0.9517", "accuracy 0.9519")
    assert not matches("accuracy 0.9517", "accuracy 0.9515")
    assert not matches("tokens 2882", "tokens 2883")
    assert not matches("C=1 by", "C=10 by")
    assert matches("(1.6 s for 5 folds)", "(16.3 s for 5 folds)")
    assert not matches("(1.6 s for 5 folds)", "(16.3 s for 4 folds)")
    assert matches("a  b", "a b")
    assert not matches("ab", "a b")
    assert matches("{'uas': 86.398..., 'las': 82.37...}", "{'uas': 86.39833, 'las': 82.3733}")
    assert matches("first\n...\nlast", "first\nx\ny\nlast")
    assert not matches("first\n...\nlast", "first\nx\nlast!")
    assert matches("w 8.6e-17", "w 8.61e-17") and not matches("w 8.6e-17", "w 8.8e-17")
    assert not matches("NOUN", "VERB")
    assert not matches("", "something")
    assert matches("sigma2=7.601", "sigma2=7.6012")


@pytest.mark.slow
@pytest.mark.parametrize("snippet", TO_RUN, ids=[s.where for s in TO_RUN])
def test_snippet_runs_and_prints_what_the_doc_says(snippet, tmp_path):
    if snippet.argv:
        argv = [sys.executable, *snippet.argv]
        what = f"`python {' '.join(snippet.argv)}`"
    else:
        script = tmp_path / (snippet.doc.replace("/", "_") + ".py")
        script.write_text("\n" * (snippet.line - 1) + snippet.code + "\n", encoding="utf-8")
        argv = [sys.executable, str(script)]
        what = "the snippet"
    try:
        run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{snippet.where}: {what} did not finish in {TIMEOUT} s", pytrace=False)
    stderr = "\n".join(run.stderr.splitlines()[-30:])
    if run.returncode != 0:
        pytest.fail(
            f"{snippet.where}: {what} failed (exit {run.returncode}); its traceback's "
            f"line numbers are {snippet.doc}'s:\n{stderr}",
            pytrace=False,
        )
    printed = normalize(run.stdout)
    expected = normalize(snippet.expected or "")
    where = first_difference(expected, printed)
    if where is not None:
        diff = "\n".join(difflib.unified_diff(
            expected.splitlines(), printed.splitlines(), "the doc's Output: block", "printed",
            lineterm="",
        ))
        told = ("its Output: block" if snippet.expected is not None
                else "no Output: block after it, so it must print nothing")
        pytest.fail(
            f"{snippet.where}: {what} does not print what the doc says ({told}; numbers "
            f"within one unit of their last written decimal, `...` any text).\nThey part "
            f"{where}.\nThe text diff (lines with `...` or shorter numbers differ in it "
            f"and still match):\n{diff}"
            + (f"\nstderr:\n{stderr}" if stderr else ""),
            pytrace=False,
        )
