"""Unpack the carried wheels of every group whose module the running Python cannot import
(benchmarks/gpu/wheels.txt) into a folder for PYTHONPATH; write what was done as JSON.

    python benchmarks/gpu/wheels.py WHEELS_DIR TARGET_DIR REPORT.json

A wheel is a zip archive laid out for site-packages, so unpacking it is installing it
without pip (the GPU machine has no network and may lack pip's index). Stdlib only.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import zipfile
from pathlib import Path

LIST = Path(__file__).resolve().parent / "wheels.txt"


def groups(listing: Path = LIST) -> dict[str, list[tuple[str, str]]]:
    """Import name -> [(distribution, version)] from ``listing`` (wheels.txt)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for line in listing.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        group, requirement = (part.strip() for part in line.split(":", 1))
        name, version = requirement.split("==")
        out.setdefault(group, []).append((name, version))
    return out


def main(wheels: Path, target: Path, report: Path, listing: Path = LIST) -> int:
    done: dict[str, object] = {}
    target.mkdir(parents=True, exist_ok=True)
    for module, members in groups(listing).items():
        if importlib.util.find_spec(module) is not None:
            done[module] = "present"
            continue
        unpacked, absent = [], []
        for name, version in members:
            found = sorted(wheels.glob(f"{name}-{version}-*.whl")) if wheels.is_dir() else []
            if not found:
                absent.append(f"{name}=={version}")
                continue
            with zipfile.ZipFile(found[0]) as archive:
                archive.extractall(target)
            unpacked.append(found[0].name)
        done[module] = {"unpacked": unpacked, "missing_wheels": absent}
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text(json.dumps(done, indent=1) + "\n", encoding="utf-8")
    print("wheels: " + ", ".join(f"{m} {'present' if v == 'present' else 'unpacked' if not v['missing_wheels'] else 'MISSING'}"  # type: ignore[index]
                                  for m, v in done.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])))
