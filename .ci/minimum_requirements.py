"""Print the declared minimum version of every dependency focal's users meet, as exact pins.

The run-time dependencies, every optional extra (plot, dask, progress, fast, hdf5) and the test
extra, each at exactly its ``>=`` floor (a package named twice is pinned once, with the union of
its extras). `.ci/run` installs these in a second virtual environment and runs the fast tests
there, so the floors in pyproject.toml (the one place they are declared) are proven, not hoped
for. The ``dev`` and ``docs`` extras are tools of the developers and CI, not floors.
"""

import pathlib
import re
import sys

import tomllib

NOT_FLOORS = {"dev", "docs"}

project = tomllib.loads(pathlib.Path(sys.argv[1]).read_text())["project"]
specs = list(project["dependencies"])
for extra, requirements in project["optional-dependencies"].items():
    if extra not in NOT_FLOORS:
        specs += requirements
pins = {}  # name -> (extras, version)
for spec in specs:
    spec = spec.split(";")[0].strip()
    match = re.fullmatch(r"([A-Za-z0-9_.\-]+)(?:\[([^\]]*)\])?\s*>=\s*([0-9][0-9.]*)", spec)
    if match is None:
        sys.exit(f"{spec!r}: every dependency needs a '>=' floor to be tested at")
    name, extras, version = match[1].lower(), match[2], match[3]
    known_extras, known_version = pins.get(name, (set(), version))
    if known_version != version:
        sys.exit(f"{name}: two floors, {known_version} and {version}: declare one")
    pins[name] = (known_extras | set(filter(None, (extras or "").split(","))), version)
for name, (extras, version) in pins.items():
    print(f"{name}[{','.join(sorted(extras))}]=={version}" if extras else f"{name}=={version}")
