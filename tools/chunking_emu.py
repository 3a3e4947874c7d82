#!/usr/bin/env python3
"""Reference emulation of MariaDB 10.11 sql/sql_load.cc READ_INFO record and
field parsing (read_field, read_fixed_length, next_line,
find_start_of_fields, terminator, read_mbtail, unescape) and of
mysql_load()/read_sep_field() around it. load() returns the records as lists
of field values (bytes, None for SQL NULL, 'NODATA' for a field the record
ended before), the byte offset at which each record ends (= where the server
starts reading the next one) and the 1261/1262 warnings.

It is the oracle of flatload's boundary tests: it agrees with MariaDB
10.11.19 on the server-checked cases in test/unit/chunking-cases.json
(tools/chunking-cases-check.py re-derives them), and
tools/chunking-fuzz-gen.py uses it to make test/unit/chunking-fuzz.json.

Lines marked "flatload:" are not in the server: Reader.open_quote records
the offset of the opening enclosure of a quoted field that ran into end of
file (flatload reports that as an unterminated quote instead of loading it),
except in a record that IGNORE n skips."""

EOF = -1
INT_MAX = 1 << 31
TOOSMALL = lambda n: -100 - n          # MY_CS_TOOSMALLN(n); TOOSMALL == -101
ILSEQ = 0


def is_toosmall(r):
    return -106 <= r <= -101


def rng(c, lo, hi):
    return lo <= c <= hi


# ---- charlen() per character set (strings/ctype-*.c, ctype-mb.inl) ----
def _generic(head8bit, mb2, mb3=None, prefix2=None):
    def charlen(b):
        n = len(b)
        if n == 0:
            return TOOSMALL(1)
        if b[0] < 0x80:
            return 1
        if head8bit and head8bit(b[0]):
            return 1
        if n < 2:
            return TOOSMALL(2)
        if mb2(b[0], b[1]):
            return 2
        if mb3:
            if n < 3:
                if prefix2 and not prefix2(b[0], b[1]):
                    return ILSEQ
                return TOOSMALL(3)
            if mb3(b[0], b[1], b[2]):
                return 3
        return ILSEQ
    return charlen


def _cont(c):
    return 0x80 <= c <= 0xBF


def _utf8(mb4):
    def charlen(b):
        n = len(b)
        if n == 0:
            return TOOSMALL(1)
        c = b[0]
        if c < 0x80:
            return 1
        if c < 0xC2:
            return ILSEQ
        if c < 0xE0:
            if n < 2:
                return TOOSMALL(2)
            return 2 if _cont(b[1]) else ILSEQ
        if c < 0xF0:
            if n < 3:
                return TOOSMALL(3)
            ok = _cont(b[1]) and _cont(b[2]) and (c >= 0xE1 or b[1] >= 0xA0)
            return 3 if ok else ILSEQ
        if not mb4 or c >= 0xF5:
            return ILSEQ
        if n < 4:
            return TOOSMALL(4)
        ok = (_cont(b[1]) and _cont(b[2]) and _cont(b[3]) and
              (c >= 0xF1 or b[1] >= 0x90) and (c <= 0xF3 or b[1] <= 0x8F))
        return 4 if ok else ILSEQ
    return charlen


gbk_head = lambda c: rng(c, 0x81, 0xFE)
gbk_tail = lambda c: rng(c, 0x40, 0x7E) or rng(c, 0x80, 0xFE)
big5_head = lambda c: rng(c, 0xA1, 0xF9)
big5_tail = lambda c: rng(c, 0x40, 0x7E) or rng(c, 0xA1, 0xFE)
sjis_head = lambda c: rng(c, 0x81, 0x9F) or rng(c, 0xE0, 0xFC)
sjis_tail = lambda c: rng(c, 0x40, 0x7E) or rng(c, 0x80, 0xFC)
sjis_kana = lambda c: rng(c, 0xA1, 0xDF)
euc = lambda c: rng(c, 0xA1, 0xFE)
kata = lambda c: rng(c, 0xA1, 0xDF)

CHARLEN = {
    'gbk': _generic(None, lambda x, y: gbk_head(x) and gbk_tail(y)),
    'big5': _generic(None, lambda x, y: big5_head(x) and big5_tail(y)),
    'sjis': _generic(sjis_kana, lambda x, y: sjis_head(x) and sjis_tail(y)),
    'cp932': _generic(sjis_kana, lambda x, y: sjis_head(x) and sjis_tail(y)),
    'gb2312': _generic(None, lambda x, y: rng(x, 0xA1, 0xF7) and rng(y, 0xA1, 0xFE)),
    'ujis': _generic(None, lambda x, y: (x == 0x8E and kata(y)) or (euc(x) and euc(y)),
                     lambda x, y, z: x == 0x8F and euc(y) and euc(z),
                     lambda x, y: x == 0x8F and euc(y)),
    'utf8mb3': _utf8(False),
    'utf8mb4': _utf8(True),
}
CHARLEN['eucjpms'] = CHARLEN['ujis']


class Reader:
    def __init__(self, data, fterm=b'\t', lterm=b'\n', enc=b'', esc=b'\\',
                 lstart=b'', cs='latin1'):
        self.d = data
        self.p = 0
        self.stack = []
        self.fterm = fterm
        self.lterm = lterm
        if fterm == lterm:            # READ_INFO ctor: m_line_term.reset()
            self.lterm = b''
        self.lstart = lstart
        self.enc = enc[0] if enc else INT_MAX
        self.esc = esc[0] if esc else INT_MAX
        self.charlen = CHARLEN.get(cs)          # None => !use_mb()
        self.found_end_of_line = False
        self.start_of_line = len(lstart) != 0
        self.eof = False
        self.found_null = False
        self.enclosed = False
        self.line_cuted = False
        self.open_quote = None      # flatload: see module docstring

    # GET / PUSH
    def get(self):
        if self.stack:
            return self.stack.pop()
        if self.p < len(self.d):
            c = self.d[self.p]
            self.p += 1
            return c
        return EOF

    def push(self, c):
        self.stack.append(c)

    def pos(self):
        return self.p - len(self.stack)

    @staticmethod
    def init(t):
        return t[0] if t else INT_MAX

    def terminator_at(self, t):
        """READ_INFO::terminator(): t[0] already consumed; match the rest."""
        got = []
        for i in range(1, len(t)):
            c = self.get()
            if c != t[i]:
                self.push(c)
                for g in reversed(got):
                    self.push(g)
                return False
            got.append(c)
        return True

    def terminator(self, chr_, t):
        return self.init(t) == chr_ and self.terminator_at(t)

    def unescape(self, c):
        m = {ord('n'): 10, ord('t'): 9, ord('r'): 13, ord('b'): 8,
             ord('0'): 0, ord('Z'): 26}
        if c == ord('N'):
            self.found_null = True
        return m.get(c, c)

    def read_mbtail(self, data):
        chlen = self.charlen(bytes(data[-1:]))
        if chlen == 1:
            return False
        l0 = len(data) - 1
        while is_toosmall(chlen):
            c = self.get()
            if c == EOF:
                return True
            data.append(c)
            chlen = self.charlen(bytes(data[l0:]))
            if chlen == ILSEQ:
                data.pop()
                self.push(c)
                return False
        return False

    def find_start_of_fields(self):
        c = self.get()
        while c != EOF:
            if self.terminator(c, self.lstart):
                return False
            c = self.get()
        self.found_end_of_line = self.eof = True
        return True

    def read_field(self, binary_target=False):
        """returns None (=1, no field) or the field bytes"""
        use_mb = self.charlen is not None and not binary_target
        self.found_null = False
        if self.found_end_of_line:
            return None
        if self.start_of_line:
            self.start_of_line = False
            if self.find_start_of_fields():
                return None
        c = self.get()
        if c == EOF:
            self.found_end_of_line = self.eof = True
            return None
        data = bytearray()
        if c == self.enc:
            fe = self.enc
            quote_at = self.pos() - 1   # flatload
            data.append(c)
        else:
            fe = INT_MAX
            self.push(c)
        while True:
            c = self.get()
            if c == EOF:
                break
            if c == self.esc:
                c = self.get()
                if c == EOF:
                    data.append(self.esc)
                    break
                if self.esc != self.enc or c == self.esc:
                    data.append(self.unescape(c))
                    continue
                self.push(c)
                c = self.esc
            if c == self.init(self.lterm) and fe == INT_MAX:
                if self.terminator_at(self.lterm):
                    self.enclosed = False
                    self.found_end_of_line = True
                    return bytes(data)
            if c == fe:
                c = self.get()
                if c == fe:
                    data.append(c)
                    continue
                if c == EOF or self.terminator(c, self.lterm):
                    self.enclosed = True
                    self.found_end_of_line = True
                    return bytes(data[1:])
                if self.terminator(c, self.fterm):
                    self.enclosed = True
                    return bytes(data[1:])
                self.push(c)
                c = fe
            elif c == self.init(self.fterm) and fe == INT_MAX:
                if self.terminator_at(self.fterm):
                    self.enclosed = False
                    return bytes(data)
            data.append(c)
            if use_mb and self.read_mbtail(data):
                break
        # found_eof
        if fe != INT_MAX:           # flatload: a quoted field ran into EOF
            self.open_quote = quote_at
        self.enclosed = False
        self.found_end_of_line = self.eof = True
        return bytes(data)

    def read_fixed_length(self, total):
        if self.found_end_of_line:
            return None
        if self.start_of_line:
            self.start_of_line = False
            if self.find_start_of_fields():
                return None
        data = bytearray()
        while len(data) < total:
            c = self.get()
            if c == EOF:
                self.found_end_of_line = self.eof = True
                return None if not data else bytes(data)
            if c == self.esc:
                c = self.get()
                if c == EOF:
                    data.append(self.esc)
                    self.found_end_of_line = self.eof = True
                    return bytes(data)
                data.append(self.unescape(c))
                continue
            if self.terminator(c, self.lterm):
                self.found_end_of_line = True
                break
            data.append(c)
        return bytes(data)

    def next_line(self):
        """returns True on EOF"""
        self.line_cuted = False
        self.start_of_line = len(self.lstart) != 0
        if self.found_end_of_line or self.eof:
            self.found_end_of_line = False
            return self.eof
        self.found_end_of_line = False
        if not self.lterm:
            return False
        while True:
            c = self.get()
            if c == EOF:
                self.eof = True
                return True
            buf = bytes([c])
            if self.charlen is not None and self.charlen(buf) != 1:
                chlen = self.charlen(buf)
                while is_toosmall(chlen):
                    c2 = self.get()
                    if c2 == EOF:
                        self.eof = True
                        return True
                    buf += bytes([c2])
                    chlen = self.charlen(buf)
                i = len(buf)
                if buf[0] == self.init(self.lterm) and i <= len(self.lterm) \
                        and buf == self.lterm[:i]:
                    if len(self.lterm) == i:
                        return False
                    if self.terminator_at(self.lterm[i - 1:]):
                        return False
                self.line_cuted = True
                continue
            if c == self.esc:
                self.line_cuted = True
                if self.get() == EOF:
                    self.eof = True
                    return True
                continue
            if self.terminator(c, self.lterm):
                return False
            self.line_cuted = True


def load(data, ncols, fterm=b'\t', lterm=b'\n', enc=b'', esc=b'\\', lstart=b'',
         cs='latin1', ignore=0, binary=None, widths=None):
    """Emulates mysql_load()+read_sep_field()/read_fixed_length().
    Returns (rows, ends, warnings). rows: list of list(bytes|None|'NODATA')."""
    r = Reader(data, fterm, lterm, enc, esc, lstart, cs)
    binary = binary or [False] * ncols
    rows, ends, warns = [], [], []
    load.open_quote = None          # flatload
    skip = ignore
    if lterm:                      # mysql_load(): uses the ORIGINAL line_term
        while skip > 0:
            skip -= 1
            if r.next_line():
                break
    rowno = 1
    fixed = not fterm and not enc
    if fixed:
        total = sum(widths)
        while True:
            rec = r.read_fixed_length(total)
            if rec is None:
                break
            if skip:
                skip -= 1
                continue
            vals, p = [], 0
            for w in widths:
                if p >= len(rec):
                    vals.append(b'')            # fixed format: not NULL
                    warns.append((1261, rowno))
                else:
                    vals.append(rec[p:p + w])
                    p += w
            if p < len(rec):
                warns.append((1262, rowno))
            rows.append(vals)
            eof = r.next_line()
            ends.append(r.pos())
            if eof:
                break
            if r.line_cuted:
                warns.append((1262, rowno))
            rowno += 1
        return rows, ends, warns
    while True:
        vals = []
        complete = True
        for i in range(ncols):
            f = r.read_field(binary[i])
            if f is None:
                complete = False
                break
            if skip:
                continue
            if ((not r.enclosed and enc and f == b'NULL') or
                    (len(f) == 1 and r.found_null)):
                vals.append(None)
            else:
                vals.append(f)
        if skip:
            skip -= 1
            r.open_quote = None     # flatload: a skipped (header) record is never an error
            continue
        if not complete:
            if not vals:
                break
            while len(vals) < ncols:
                vals.append('NODATA')       # NULL for nullable columns
                warns.append((1261, rowno))
        rows.append(vals)
        eof = r.next_line()
        ends.append(r.pos())
        if eof:
            break
        if r.line_cuted:
            warns.append((1262, rowno))
        rowno += 1
    load.open_quote = r.open_quote  # flatload
    return rows, ends, warns


def hexrows(rows):
    out = []
    for row in rows:
        out.append(['NULL' if v is None or v == 'NODATA' else v.hex().upper()
                    for v in row])
    return out
