#!/usr/bin/env python3
"""tst_debs: builds the Debian packages of the build tree with CPack and checks them, one per role
of a host (cmake/DialogPackaging.cmake):

- each package holds its role's files: the daemons' package no GUI program, the GUI package no
  daemon, the library package the library only; together they hold exactly what `cmake --install`
  installs (a file outside every component would be missing from every package);
- what installing it pulls in, simulated by apt on a minimal system (the packages of Priority
  required, Essential ones and apt, with their dependencies, taken from this machine's dpkg
  status: a debootstrap minbase root as far as this machine has it): the daemons' package must
  pull no GUI stack (no libqt6widgets6, libqt6gui6, libgl1, libgtk-3-0), the GUI package must
  (so that the check can fail);
- no installed path is one a Debian package of this machine's apt lists could own (/usr/bin/dialog).

Only apt's simulation runs (apt-get -s): nothing is downloaded or installed. Prints a table of what
each package pulls in (packages and MB), for the release notes.

    debs_test.py BUILD_DIR WORK_DIR
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

GUI_STACK = {"libqt6widgets6", "libqt6gui6", "libgl1", "libgtk-3-0", "libqt6charts6", "libqt6opengl6"}
PACKAGES = {
    "runtime": "libdialog0.1",
    "dev": "dialog-toolkit-dev",
    "daemons": "dialog-toolkit",
    "gui": "dialog-toolkit-gui",
    "python": "python3-dialog-toolkit",
}
failures: list[str] = []


def check(what: str, ok: bool) -> None:
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


def run(*cmd: str, timeout: float = 300, cwd: Path | None = None) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    if p.returncode != 0:
        sys.exit("%s failed (%d):\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-4000:], p.stderr[-4000:]))
    return p.stdout


def files_of(deb: Path) -> set[str]:
    """The files and links of @p deb (dpkg-deb -c: mode, owner, size, date, time, ./path[ -> target])."""
    out = set()
    for line in run("dpkg-deb", "-c", str(deb)).splitlines():
        if line.startswith("d"):
            continue
        path = line.split(None, 5)[5].split(" -> ")[0]
        out.add(path[1:] if path.startswith("./") else path)
    return out


def minimal_status(out: Path) -> int:
    """A dpkg status file of the required packages of this machine and their dependencies."""
    found: dict[str, tuple[str, dict[str, str]]] = {}
    provides: dict[str, str] = {}
    for stanza in Path("/var/lib/dpkg/status").read_text(errors="replace").split("\n\n"):
        fields = dict(re.findall(r"^([A-Za-z-]+): (.*)$", stanza, re.M))
        if "install ok installed" not in fields.get("Status", ""):
            continue
        found[fields["Package"]] = (stanza, fields)
        for p in filter(None, re.split(r",\s*", fields.get("Provides", ""))):
            provides.setdefault(p.split()[0], fields["Package"])
    todo = [n for n, (_, f) in found.items() if f.get("Priority") == "required" or f.get("Essential") == "yes"]
    todo.append("apt")
    keep: set[str] = set()
    while todo:
        name = todo.pop().split(":")[0]
        name = name if name in found else provides.get(name, name)
        if name in keep or name not in found:
            continue
        keep.add(name)
        for field in ("Depends", "Pre-Depends"):
            for alternatives in filter(None, re.split(r",\s*", found[name][1].get(field, ""))):
                for choice in (a.strip().split()[0].split(":")[0] for a in alternatives.split("|")):
                    if choice in found or choice in provides:
                        todo.append(choice)
                        break
    out.write_text("\n\n".join(found[n][0] for n in sorted(keep)) + "\n\n")
    return len(keep)


def pulled_in(status: Path, debs: list[Path]) -> list[str]:
    """The packages apt would install on the minimal system for @p debs (simulated)."""
    out = run("apt-get", "-s", "-o", "Dir::State::status=%s" % status, "-o", "Debug::NoLocking=1", "install",
              *[str(d) for d in debs])
    return sorted(line.split()[1] for line in out.splitlines() if line.startswith("Inst "))


def installed_size_mb(names: list[str], debs: dict[str, Path]) -> float:
    """Installed-Size of @p names in MB: ours from the .deb files, Debian's from one apt-cache call."""
    local = {run("dpkg-deb", "-f", str(d), "Package").strip(): d for d in debs.values()}
    total = sum(int(run("dpkg-deb", "-f", str(local[n]), "Installed-Size").strip() or 0) for n in names if n in local)
    others = [n for n in names if n not in local]
    if others:
        sizes = {}
        for stanza in run("apt-cache", "show", "--no-all-versions", *others).split("\n\n"):
            m = re.search(r"^Package: (\S+)$.*?^Installed-Size: (\d+)$", stanza, re.M | re.S)
            if m:
                sizes[m.group(1)] = int(m.group(2))
        total += sum(sizes.values())
    return total / 1024


def main(build: Path, work: Path) -> int:
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        sys.exit("tst_debs needs Debian's apt-get and dpkg-deb")
    if not any(Path("/var/lib/apt/lists").glob("*_Packages*")):
        sys.exit("apt has no package lists: run apt-get update (./run.sh does)")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    run("cpack", "--config", str(build / "CPackConfig.cmake"), "-B", str(work), timeout=600, cwd=work)
    debs: dict[str, Path] = {}
    for component, name in PACKAGES.items():
        found = sorted(work.glob("%s_*.deb" % name))
        check("package %s built" % name, len(found) == 1)
        if found:
            debs[component] = found[0]
    if len(debs) != len(PACKAGES):
        return 1

    contents = {c: files_of(d) for c, d in debs.items()}
    bins = {c: {Path(f).name for f in files if f.startswith("/usr/bin/")} for c, files in contents.items()}
    check("dialog-toolkit holds the daemons and dialogctl (%s)" % sorted(bins["daemons"]),
          {"dialogctl", "dialog-controlserver", "dialog-isserver", "dialog-master", "dialog-slave"} <= bins["daemons"])
    check("dialog-toolkit holds no GUI program", not any(b in bins["daemons"] for b in bins["gui"]))
    check("dialog-toolkit-gui holds the GUIs (%s)" % sorted(bins["gui"]),
          {"dialog-runcontrol", "dialog-ismonitor", "dialog-omd", "dialog-inspector", "dialog-msgbrowser",
           "dialog-alarms", "dialog-presenter", "dialog-render"} <= bins["gui"])
    check("libdialog0.1 holds the library only (%s)" % sorted(contents["runtime"]),
          all(re.search(r"/libdialog\.so\.\d", f) or "/share/doc/" in f for f in contents["runtime"]))
    check("dialog-toolkit-dev holds headers, libdialog.so, CMake and pkg-config files",
          any(f.endswith("/include/dialog/client.h") for f in contents["dev"])
          and any(f.endswith("/libdialog.so") for f in contents["dev"])
          and any(f.endswith("/DialogConfig.cmake") for f in contents["dev"])
          and any(f.endswith("/pkgconfig/dialog.pc") for f in contents["dev"]))
    check("python3-dialog-toolkit holds the package in dist-packages, architecture all",
          "/usr/lib/python3/dist-packages/dialog/client.py" in contents["python"]
          and run("dpkg-deb", "-f", str(debs["python"]), "Architecture").strip() == "all")
    check("no /usr/bin/dialog (Debian's dialog package owns it)", not any("/usr/bin/dialog" == f for f in
                                                                          set().union(*contents.values())))
    everything = [f for files in contents.values() for f in files]
    check("no file in two packages", len(everything) == len(set(everything)))
    prefix = work / "install"
    run("cmake", "--install", str(build), "--prefix", str(prefix / "usr"), timeout=300)
    installed = {"/" + str(p.relative_to(prefix)) for p in prefix.rglob("*") if not p.is_dir()}
    missing = sorted(installed - set(everything))
    check("every installed file is in a package (missing: %s)" % missing[:10], not missing)

    status = work / "minimal-status"
    base = minimal_status(status)
    print("\nminimal system: %d packages; what each package pulls in onto it (apt-get -s, with Recommends):"
          % base)
    order = [("runtime", ["runtime"]), ("daemons", ["runtime", "daemons"]), ("dev", ["runtime", "dev"]),
             ("gui", ["runtime", "daemons", "gui"]), ("python", ["python"])]
    pulled: dict[str, list[str]] = {}
    for component, needs in order:
        pulled[component] = pulled_in(status, [debs[c] for c in needs])
        print("  %-24s %4d packages, %7.1f MB installed" % (PACKAGES[component], len(pulled[component]),
                                                           installed_size_mb(pulled[component], debs)))
    gui_in_daemons = sorted(GUI_STACK & set(pulled["daemons"]))
    check("dialog-toolkit pulls in no GUI stack (%s)" % gui_in_daemons, not gui_in_daemons)
    check("dialog-toolkit-gui pulls in Qt Widgets", "libqt6widgets6" in pulled["gui"])
    check("python3-dialog-toolkit pulls in no Qt", not any(p.startswith("libqt6") for p in pulled["python"]))
    # Plug-ins are loaded at run time, invisible to dpkg-shlibdeps: the SQL driver of the daemons'
    # SQLite files and the GUIs' platform plug-ins must be named by the packages.
    check("dialog-toolkit pulls in Qt's SQLite driver", "libqt6sql6-sqlite" in pulled["daemons"])
    check("dialog-toolkit-gui pulls in Qt's platform plug-ins", "qt6-qpa-plugins" in pulled["gui"])
    # Suggested, not pulled in: the web IS's pictures need dialog-render from the GUI package.
    suggests = run("dpkg-deb", "-f", str(debs["daemons"]), "Suggests")
    check("dialog-toolkit suggests dialog-toolkit-gui for the web pictures (%s)" % suggests.strip(),
          "dialog-toolkit-gui" in suggests and "dialog-toolkit-gui" not in pulled["daemons"])
    print("\n%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()))
