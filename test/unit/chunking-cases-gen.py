#!/usr/bin/env python3
"""Converts the 84 server-validated LOAD DATA cases (the boundary research in
/tmp/ldresearch: harness.py has the case definitions, harness_results.json
what MariaDB 10.11.19 loaded) into test/unit/chunking-cases.json, the fixture
of chunking-cases.test.ts. Only needed again if the research cases change:

    python3 test/unit/chunking-cases-gen.py [/tmp/ldresearch]

Cases flatload never scans for boundaries are skipped, with the reason in the
output file: LINES STARTING BY and fixed-width rows (FT='' and ENC=''). Cases
with LT='' or FT == LT are kept: flatload loads those as one unchunked chunk,
but RecordScanner still reads them like the server (locateRecords uses it).

Every kept case's record ends are re-derived with the vendored emulator
(chunking_emu.py) and must equal the server-checked harness results.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESEARCH = sys.argv[1] if len(sys.argv) > 1 else '/tmp/ldresearch'
sys.path.insert(0, HERE)
sys.path.insert(1, RESEARCH)

import chunking_emu as emu  # noqa: E402
import harness  # noqa: E402  (only its CASES list; it needs no server to import)


def skip_reason(c):
    if c['lstart']:
        return 'LINES STARTING BY'
    if not c['fterm'] and not c['enc']:
        return 'fixed-width rows'
    return None


def main():
    results = json.load(open(os.path.join(RESEARCH, 'harness_results.json')))
    out, skipped = [], []
    for n, c in enumerate(harness.CASES, 1):
        res = results[c['name']]
        assert res['ok'], c['name']
        assert res['data'] == c['data'].hex(), c['name']
        why = skip_reason(c)
        if why:
            skipped.append({'case': n, 'name': c['name'], 'reason': why})
            continue
        ncols = c['ncols']
        binary = [c['coltype'] == 'bin'] * ncols
        cs = c['cs'] or 'latin1'
        _, ends, _ = emu.load(c['data'], ncols, fterm=c['fterm'], lterm=c['lterm'], enc=c['enc'],
                              esc=c['esc'], cs=cs, ignore=c['ignore'], binary=binary)
        assert ends == res['ends'], (c['name'], ends, res['ends'])
        out.append({
            'case': n,
            'name': c['name'],
            'hex': c['data'].hex(),
            'fieldTerm': c['fterm'].hex(),
            'lineTerm': c['lterm'].hex(),
            'enclosure': c['enc'][0] if c['enc'] else -1,
            'escape': c['esc'][0] if c['esc'] else -1,
            'charset': cs,
            'ncols': ncols,
            'text': [not b for b in binary],
            'ignore': c['ignore'],
            'ends': res['ends'],
            'openQuote': emu.load.open_quote,
        })
    doc = {
        'source': 'MariaDB 10.11.19, /tmp/ldresearch/harness.py (spec.md section 14); '
                  'regenerate with python3 test/unit/chunking-cases-gen.py',
        'cases': out,
        'skipped': skipped,
    }
    path = os.path.join(HERE, 'chunking-cases.json')
    with open(path, 'w') as f:
        json.dump(doc, f, indent=1)
        f.write('\n')
    print(f'{len(out)} cases written to {path}, {len(skipped)} skipped')


if __name__ == '__main__':
    main()
