"""The guide's page for users of vegas, Cuba, torchquad and GSL (docs/guide.md, section 8) names only
what exists: in mcubes's column of its tables and after each "->" of its text, every keyword `name=`
is an option or keyword of mcubes's Python functions, every `mcubes.X`, `integ.X` and `r.X` an
attribute of the module, of Integrator or of Result, every bare name one of those or an option, and
every `--option` one of the command's (cli/*.cpp)."""

import pathlib
import re

import mcubes

ROOT = pathlib.Path(__file__).resolve().parents[2]
KEYWORDS = {"callback", "checkpoint", "resume", "checkpoint_every", "tag", "comm", "components", "array_module"}


def section_8():
    text = (ROOT / "docs" / "guide.md").read_text()
    start = text.index("\n## 8. ")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def mcubes_spans(section):
    """The code spans that name mcubes's side: the second column of the tables, and the first span
    after each '->' in the text."""
    spans = []
    for line in section.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) >= 2 and not set(cells[1]) <= set("-: "):
                spans += re.findall(r"`([^`]+)`", cells[1])
    text = " ".join(line for line in section.splitlines() if not line.startswith("|"))
    spans += re.findall(r"->\s*`([^`]+)`", text)
    return spans


def known_names():
    options = set(mcubes.VEGAS_OPTIONS) | set(mcubes.PLAIN_MC_OPTIONS) | set(mcubes.MIDPOINT_OPTIONS)
    r = mcubes.vegas(lambda x: x[:, 0], [(0, 1)], calls_per_iteration=2000, max_iterations=2, skip=0,
                     min_iterations=1, backend="cpu")
    integ = mcubes.Integrator([(0, 1)], calls_per_iteration=2000, backend="cpu")
    attributes = set(dir(mcubes)) | set(dir(integ)) | set(dir(r))  # instances: their attributes too
    return options, attributes


def test_the_page_names_only_real_options_and_attributes():
    options, attributes = known_names()
    cli = "".join(p.read_text() for p in (ROOT / "cli").glob("*.cpp"))
    spans = mcubes_spans(section_8())
    assert len(spans) > 30, spans  # the page is there and parsed
    wrong = []
    for span in spans:
        if "::" in span or span.startswith("#"):  # C++ names: the header tests and Docs.ApiReference
            continue
        for k in re.findall(r"\b(\w+)=", span):
            if k not in options | KEYWORDS:
                wrong.append(f"{span}: keyword {k}")
        for obj, name in re.findall(r"\b(mcubes|integ|r)\.(\w+)", span):
            if name not in attributes:
                wrong.append(f"{span}: {obj}.{name}")
        for opt in re.findall(r"(--[a-z][a-z0-9-]*)", span):
            if f'"{opt}"' not in cli:
                wrong.append(f"{span}: command option {opt}")
        if re.fullmatch(r"[A-Za-z_]\w*", span) and span not in options | attributes | {"mcubes"}:
            wrong.append(f"{span}: no such option or attribute")
    assert not wrong, wrong
