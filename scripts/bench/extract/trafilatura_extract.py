"""The reference of `npm run bench -- --extract`: trafilatura's main text of each page.

Reads a JSON list of HTML file paths on stdin, prints one JSON object: {"version", "texts":
{path: text}, "cpuSeconds"} (CPU time of the extraction calls only, after one warm-up pass).
Run by scripts/bench/extract/reference.ts with the venv of trafilatura-venv.sh.
"""
import json
import sys
import time

import trafilatura


def main() -> None:
    paths = json.load(sys.stdin)
    pages = {p: open(p, "rb").read() for p in paths}
    texts = {}
    for path, html in pages.items():  # warm-up, and the texts scored
        texts[path] = trafilatura.extract(html, include_comments=False, include_tables=True) or ""
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    start = time.process_time()
    for _ in range(rounds):
        for html in pages.values():
            trafilatura.extract(html, include_comments=False, include_tables=True)
    cpu = time.process_time() - start
    json.dump({"version": trafilatura.__version__, "texts": texts, "cpuSeconds": cpu, "pages": rounds * len(pages)}, sys.stdout)


if __name__ == "__main__":
    main()
