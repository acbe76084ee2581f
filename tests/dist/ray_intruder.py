"""Another local user trying to join a Ray instance (run by tests/dist/test_private_ray.py).

``python ray_intruder.py UID ADDRESS FILE...``: started as root, it loads Ray, drops to
``UID`` (0: stays root, the control that shows the probe can succeed), reads the first of
the FILEs it may read as a token (a wrong guess if none), and asks the Ray instance at
ADDRESS for its nodes with it. Prints one JSON line: which files it could read and whether
the instance answered.
"""

from __future__ import annotations

import json
import os
import sys


def main(uid: int, address: str, candidates: list[str]) -> dict[str, object]:
    os.environ["RAY_AUTH_MODE"] = "token"  # read by Ray when it is imported
    os.environ.pop("RAY_AUTH_TOKEN_PATH", None)
    from ray._raylet import GcsClient

    if uid:
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    read: list[str] = []
    token = "0" * 64  # a guess
    for path in candidates:
        try:
            with open(path) as handle:
                text = handle.read().strip()
        except OSError:
            continue
        read.append(path)
        if text:
            token = text
            break
    os.environ["RAY_AUTH_TOKEN"] = token
    try:
        nodes = GcsClient(address=address).get_all_node_info(timeout=20)
    except Exception as error:  # noqa: BLE001 - the refusal is the expected answer
        return {"read": read, "joined": False, "error": f"{type(error).__name__}: {str(error)[:200]}"}
    return {"read": read, "joined": True, "nodes": len(nodes)}


if __name__ == "__main__":
    print(json.dumps(main(int(sys.argv[1]), sys.argv[2], sys.argv[3:])), flush=True)
