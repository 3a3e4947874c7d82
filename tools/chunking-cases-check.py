#!/usr/bin/env python3
"""Re-derives every case of test/unit/chunking-cases.json with the emulator
(chunking_emu.py) and checks that it finds the record ends and the open
quote the file records, which are what MariaDB 10.11.19 read.

    python3 tools/chunking-cases-check.py

How the file was made, and why it can no longer be regenerated here, is in
tools/README.md: its cases and the server's results came from a research
harness that is not part of this repository, so the JSON file itself is now
the source, and this script is how to re-check the oracle against it.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import chunking_emu as emu  # noqa: E402

CASES = os.path.join(HERE, '..', 'test', 'unit', 'chunking-cases.json')


def byte_or_empty(n):
    return b'' if n < 0 else bytes([n])


def main():
    doc = json.load(open(CASES))
    bad = []
    for c in doc['cases']:
        _, ends, _ = emu.load(bytes.fromhex(c['hex']), c['ncols'], fterm=bytes.fromhex(c['fieldTerm']),
                              lterm=bytes.fromhex(c['lineTerm']), enc=byte_or_empty(c['enclosure']),
                              esc=byte_or_empty(c['escape']), cs=c['charset'], ignore=c['ignore'],
                              binary=[not t for t in c['text']])
        if ends != c['ends'] or emu.load.open_quote != c['openQuote']:
            bad.append(f"{c['name']}: server {c['ends']} open {c['openQuote']}, emulator {ends} open {emu.load.open_quote}")
    for line in bad:
        print(line)
    print(f"{len(doc['cases']) - len(bad)} of {len(doc['cases'])} cases agree with the server ({len(doc['skipped'])} skipped in the file)")
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
