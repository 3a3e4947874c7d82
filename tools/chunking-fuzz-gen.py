#!/usr/bin/env python3
"""Differential-fuzzing corpus for flatload's RecordScanner.

Generates random small inputs over an alphabet rich in specials (quotes,
escapes, field/line terminators, CR/LF, multi-byte lead and trail bytes of
utf8mb4/gbk/big5/sjis/..., invalid sequences) with random LOAD DATA options,
and records where the server's reader ends each record, using the
server-validated emulator chunking_emu.py (a port of MariaDB 10.11
sql_load.cc READ_INFO; see its docstring) as the oracle. Each case also
holds the field values the server reads for each record and which records
draw warning 1262 (extra data), for the check of parseRecord against it.

The checked-in corpus test/unit/chunking-fuzz.json is read by
chunking-fuzz.test.ts and fields-fuzz.test.ts, so the unit tests never need
python. Regenerate it (deterministic for a given seed and count) with

    python3 tools/chunking-fuzz-gen.py                       # 600 cases, seed 1
    python3 tools/chunking-fuzz-gen.py --seed 7 --count 50000 --out /tmp/fuzz.json
    python3 tools/chunking-fuzz-gen.py --seed 8 --count 5000 --max-len 2000 --out /tmp/fuzz-long.json
    FLATLOAD_FUZZ_CORPUS=/tmp/fuzz.json node --import tsx --test test/unit/chunking-fuzz.test.ts test/unit/fields-fuzz.test.ts

The second form is how to hunt for new discrepancies: a big corpus with a
fresh seed, checked by the same test. Add any failing case's seed to the
regular run by raising --count or pasting it into chunking-hard.test.ts.
"""
import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import chunking_emu as emu  # noqa: E402

CHARSETS = ['latin1', 'latin1', 'utf8mb4', 'utf8mb4', 'utf8mb4', 'utf8mb3', 'gbk', 'gbk', 'big5',
            'sjis', 'cp932', 'gb2312', 'ujis', 'eucjpms']
FTERMS = [b',', b',', b'\t', b'\t', b'|', b'||', b',\n', b'|"']
LTERMS = [b'\n', b'\n', b'\r\n', b'\r\n', b'||\n', b'\r']
# Rarer: non-ASCII terminators (the server only warns), FT == LT (the server
# drops LT), no line terminator, FT that hides LT bytes, no FT.
WEIRD_FTERMS = [b'\xa7', b'\xc2\xa7', b'\n', b'', b'\\,', b'||']
WEIRD_LTERMS = [b'', b'\xa1\n', b'|\n', b',']

# Bytes that matter somewhere: ASCII specials, gbk/big5/sjis trail bytes in
# 0x40-0x7E (0x5C is the escape, 0x7C the pipe), lead bytes of every
# multi-byte set, utf8 lead/continuation bytes, never-valid bytes.
SPECIAL = [b'"', b'"', b'\\', b'\\', b',', b'\t', b'|', b'\r', b'\n', b'\n', b' ', b'N', b"'", b'^']
PLAIN = [b'a', b'b', b'x', b'0', b'@', b'~']
HIGH = [b'\x81', b'\xa7', b'\xa1', b'\xa4', b'\x8e', b'\x8f', b'\xe4', b'\xc3', b'\xf0', b'\xb8', b'\xad',
        b'\x80', b'\xff', b'\xdf', b'\xfe', b'\xed']
WHOLE = ['\u4e2d'.encode(), '\u00e9'.encode(), '\U0001F600'.encode(), b'\x81\x5c', b'\xa4\x5c', b'\x81\x7c',
         b'\xb0\xa1', b'\x8f\xa1\xa1', b'\x8e\xa1', b'\xe4\xb8']


MAX_LEN = 40


def gen_data(r, fterm, lterm, enc):
    n = r.choice([0, 1, 2, 4, 8, 12, 16, 24, 32, 40]) * MAX_LEN // 40
    out = bytearray()
    while len(out) < n:
        k = r.random()
        if k < 0.12:
            out += fterm
        elif k < 0.22:
            out += lterm
        elif k < 0.50:
            out += r.choice(SPECIAL)
        elif k < 0.65:
            out += r.choice(PLAIN)
        elif k < 0.85:
            out += r.choice(HIGH)
        elif k < 0.95:
            out += r.choice(WHOLE)
        else:
            # a quoted field, the shape quotes usually come in
            q = enc or b'"'
            out += q + r.choice(PLAIN) + r.choice(SPECIAL + HIGH) + q
    return bytes(out)


def gen_case(r, i):
    cs = r.choice(CHARSETS)
    weird = r.random() < 0.15   # non-ASCII separators, FT == LT, no line terminator, other bytes
    fterm = r.choice(FTERMS + (WEIRD_FTERMS if weird else []))
    lterm = r.choice(LTERMS + (WEIRD_LTERMS if weird else []))
    if fterm == lterm and not weird:
        lterm = b'\r\n' if fterm == b'\n' else b'\n'
    enc = r.choice([b'"', b'"', b''] + ([b"'", b'\xa1'] if weird else []))
    if not fterm and not enc:
        enc = b'"'    # FT='' and ENC='' is fixed-width, which flatload never scans
    esc_choices = [b'\\', b'\\', b'']
    if enc:
        esc_choices.append(enc)
    if weird:
        esc_choices += [b'^', b'\x81']
    esc = r.choice(esc_choices)
    ncols = r.randint(1, 4)
    text = [r.random() < 0.6 for _ in range(ncols)]
    ignore = r.choice([0, 0, 0, 1, 2])
    data = gen_data(r, fterm, lterm, enc)
    rows, ends, warns = emu.load(data, ncols, fterm=fterm, lterm=lterm, enc=enc, esc=esc, cs=cs,
                                 ignore=ignore, binary=[not t for t in text])
    return {
        'name': f'fuzz-{i}',
        'hex': data.hex(),
        'fieldTerm': fterm.hex(),
        'lineTerm': lterm.hex(),
        'enclosure': enc[0] if enc else -1,
        'escape': esc[0] if esc else -1,
        'charset': cs,
        'ncols': ncols,
        'text': text,
        'ignore': ignore,
        'ends': ends,
        'openQuote': emu.load.open_quote,
        # The fields each record has (hex, or None for SQL NULL); a row shorter than ncols ran out of fields (1261).
        'rows': [[None if v is None else v.hex() for v in row if v != 'NODATA'] for row in rows],
        # 0-based records the server warns 1262 about (more fields than targets, skipped).
        'extraData': [n - 1 for code, n in warns if code == 1262],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--count', type=int, default=600)
    ap.add_argument('--out', default=os.path.join(HERE, '..', 'test', 'unit', 'chunking-fuzz.json'))
    ap.add_argument('--max-len', type=int, default=40, help='longest input, bytes (about)')
    a = ap.parse_args()
    global MAX_LEN
    MAX_LEN = a.max_len
    r = random.Random(a.seed)
    cases = [gen_case(r, i) for i in range(a.count)]
    doc = {
        'source': f'tools/chunking-fuzz-gen.py --seed {a.seed} --count {a.count} --max-len {a.max_len} (oracle: chunking_emu.py)',
        'cases': cases,
    }
    with open(a.out, 'w') as f:  # one case a line: readable diffs
        f.write('{"source": %s, "cases": [\n' % json.dumps(doc['source']))
        f.write(',\n'.join(json.dumps(c, separators=(',', ':')) for c in cases))
        f.write('\n]}\n')
    quoted = sum(1 for c in cases if c['openQuote'] is not None)
    print(f'{len(cases)} cases written to {a.out} ({quoted} end inside a quoted field)')


if __name__ == '__main__':
    main()
