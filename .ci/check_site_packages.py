"""Fail if site-packages holds start-up hooks we did not expect (.pth files, sitecustomize).

litellm 1.82.8 shipped `litellm_init.pth` and 1.107.0 `cook.pth` + `sitecustomize.py`, both run
on every interpreter start. Only the hooks of setuptools, editable installs and known tools pass.
"""

import sys
import sysconfig
from pathlib import Path

ALLOWED_PTH = ("distutils-precedence.pth", "__editable__.", "_remelink", "remelink")


def main() -> int:
    site = Path(sysconfig.get_paths()["purelib"])
    bad = []
    for path in site.iterdir():
        if path.suffix == ".pth" and not path.name.startswith(ALLOWED_PTH):
            bad.append(path.name)
        if path.name in ("sitecustomize.py", "usercustomize.py", "cook.py"):
            bad.append(path.name)
    if bad:
        print(f"unexpected start-up hooks in {site}: {', '.join(sorted(bad))}", file=sys.stderr)
        return 1
    print(f"site-packages clean ({site})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
