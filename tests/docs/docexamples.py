#!/usr/bin/env python3
"""The code examples of README.md, docs/*.md and python/README.md, taken out of their pages so that tests compile or
run them (the convention is in docs/examples.md).

    docexamples.py --cpp OUTDIR SOURCE_DIR   writes one .cpp file per C++ example into OUTDIR and
                                             prints their names, one a line
    docexamples.py --python SOURCE_DIR       prints the Python examples as JSON [{where, code}]

A ```cpp or ```python block with a word after the language other than the known ones is an error
(exit status 1, the page and line on stderr): an example nobody compiles must not pass unnoticed.
"""

import json
import re
import sys
from pathlib import Path

CPP_KINDS = {"": "program", "fragment": "fragment"}
# A notebook cell awaits at its top level (Jupyter runs an event loop): the test runs it as the body
# of a coroutine.
PYTHON_KINDS = {"": "script", "notebook": "notebook"}

# A fragment is compiled as the body of main(), with these in scope: the application `app`, a
# Client named both `client` and `dialog`, and every public header.
FRAGMENT_HEAD = """\
#include <QCoreApplication>
#include <QDebug>
{includes}
#include <dialog/client.h>
#include <dialog/report.h>
#include <dialog/is/dictionary.h>
#include <dialog/is/receiver.h>
#include <dialog/rc/protocol.h>
#include <dialog/rc/staterecord.h>

int main(int argc, char *argv[])
{{
    QCoreApplication app(argc, argv);
    dialog::Client client(dialog::ClientOptions::fromArguments(app.arguments(), QStringLiteral("Example")));
    dialog::Client &dialog = client;
    Q_UNUSED(dialog);
    {{
#line {line} "{page}"
"""
FRAGMENT_TAIL = """
    }
    return 0;
}
"""


def pages(source: Path):
    yield source / "README.md"
    yield from sorted((source / "docs").glob("*.md"))
    yield source / "python" / "README.md"


def blocks(page: Path, source: Path):
    """(language, marker, first line of code, code) of every fenced block of the page."""
    fence = None
    for number, line in enumerate(page.read_text(encoding="utf-8").split("\n"), 1):
        if fence is None:
            m = re.match(r"^```(\w*)\s*(.*)$", line)
            if m:
                fence = (m.group(1), m.group(2).strip(), number + 1, [])
        elif line.startswith("```"):
            yield fence[0], fence[1], fence[2], "\n".join(fence[3]) + "\n"
            fence = None
        else:
            fence[3].append(line)


def examples(source: Path, language: str, kinds: dict):
    errors = []
    found = []
    for page in pages(source):
        where = page.relative_to(source).as_posix()
        for lang, marker, line, code in blocks(page, source):
            if lang != language:
                continue
            if marker not in kinds:
                errors.append("%s:%d: ```%s %s: unknown marker (known: %s)"
                              % (where, line - 1, lang, marker, ", ".join(repr(k) for k in kinds)))
                continue
            found.append({"where": "%s:%d" % (where, line), "page": where, "line": line,
                          "kind": kinds[marker], "code": code})
    for e in errors:
        print("docexamples: " + e, file=sys.stderr)
    return found, not errors


def write_cpp(out: Path, source: Path) -> bool:
    found, ok = examples(source, "cpp", CPP_KINDS)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.cpp"):
        old.unlink()
    for e in found:
        stem = re.sub(r"\W", "_", Path(e["page"]).stem) + "_%d" % e["line"]
        page = (source / e["page"]).as_posix()
        if e["kind"] == "program":
            text = '#line %d "%s"\n%s' % (e["line"], page, e["code"])
        else:
            lines = e["code"].split("\n")
            includes = "\n".join(l for l in lines if l.startswith("#include"))
            body = "\n".join("" if l.startswith("#include") else l for l in lines)
            text = FRAGMENT_HEAD.format(includes=includes, line=e["line"], page=page) + body + FRAGMENT_TAIL
        path = out / (stem + ".cpp")
        path.write_text(text, encoding="utf-8")
        print(path.name)
    return ok


def main(argv):
    if len(argv) == 4 and argv[1] == "--cpp":
        return 0 if write_cpp(Path(argv[2]), Path(argv[3])) else 1
    if len(argv) == 3 and argv[1] == "--python":
        found, ok = examples(Path(argv[2]), "python", PYTHON_KINDS)
        print(json.dumps(found))
        return 0 if ok else 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
