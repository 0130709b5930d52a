"""Add or change messages in lmscope's catalogs, one entry per language, safely while others
edit them too (a lock, then read, change and write each file whole, keys sorted).

    python scripts/catalog.py add error.my-message "English {value}" "中文 {value}"
    python scripts/catalog.py add-file staged.json   # {"id": {"en": "...", "zh": "..."}, ...}
    python scripts/catalog.py remove error.old-message another.id   # from every language
    python scripts/catalog.py check                  # same ids and placeholders everywhere
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path

CATALOGS = Path(__file__).resolve().parents[1] / "src" / "lmscope" / "i18n" / "catalog"


@contextmanager
def locked():
    with open(CATALOGS / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def read(lang: str) -> dict[str, str]:
    return json.loads((CATALOGS / f"{lang}.json").read_text(encoding="utf-8"))


def write(lang: str, texts: dict[str, str]) -> None:
    path = CATALOGS / f"{lang}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(texts, ensure_ascii=False, indent=1, sort_keys=True) + "\n", "utf-8")
    os.replace(tmp, path)


def add(entries: dict[str, dict[str, str]]) -> None:
    langs = sorted(p.stem for p in CATALOGS.glob("*.json"))
    for key, texts in entries.items():
        if set(texts) != set(langs):
            raise SystemExit(f"{key}: give a text in each of {', '.join(langs)}")
    with locked():
        for lang in langs:
            catalog = read(lang)
            catalog.update({key: texts[lang] for key, texts in entries.items()})
            write(lang, catalog)


def remove(keys: list[str]) -> None:
    with locked():
        for lang in sorted(p.stem for p in CATALOGS.glob("*.json")):
            catalog = read(lang)
            missing = [key for key in keys if key not in catalog]
            if missing:
                raise SystemExit(f"{lang}: no such id: {', '.join(missing)}")
            write(lang, {k: v for k, v in catalog.items() if k not in keys})


def check() -> int:
    sys.path.insert(0, str(CATALOGS.parents[2]))
    from lmscope.i18n.message_format import placeholders

    english = read("en")
    bad = 0
    for path in sorted(CATALOGS.glob("*.json")):
        texts = read(path.stem)
        for key in sorted(set(english) ^ set(texts)):
            print(f"{path.stem}: {key} is only in one of en, {path.stem}")
            bad += 1
        for key in sorted(set(english) & set(texts)):
            if placeholders(texts[key]) != placeholders(english[key]):
                print(f"{path.stem}: {key} fills in other values than English")
                bad += 1
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("add", help="add or change one message")
    one.add_argument("id")
    one.add_argument("en")
    one.add_argument("zh")
    many = sub.add_parser("add-file", help="add or change the messages of a JSON file")
    many.add_argument("file", type=Path)
    gone = sub.add_parser("remove", help="remove messages from every language")
    gone.add_argument("ids", nargs="+")
    sub.add_parser("check", help="every language has every id, with the same placeholders")
    args = parser.parse_args()
    if args.command == "add":
        add({args.id: {"en": args.en, "zh": args.zh}})
    elif args.command == "add-file":
        add(json.loads(args.file.read_text(encoding="utf-8")))
    elif args.command == "remove":
        remove(args.ids)
    else:
        return check()
    return 0


if __name__ == "__main__":
    sys.exit(main())
