/**
 * mydumper's `metadata` file: what the exporter recorded per table. Since
 * mydumper 0.12 it is a key file (GLib's INI dialect) with a section per
 * table, keyed by the database and table names as in the file names:
 *
 *   [`shop`.`orders`]
 *   real_table_name=orders
 *   rows = 40000
 *   data_checksum = 3194712081        (with --data-checksums: CHECKSUM TABLE's value)
 *
 * (mydumper's src/mydumper/mydumper_start_dump.c, print_dbt_on_metadata_gstring;
 * the checksum is `CHECKSUM TABLE db.t`, src/checksum.c). Older versions
 * wrote only the dump's start and end times and binary log position: no
 * tables, nothing to check. Pure.
 */

export interface MetadataTable {
  db: string;
  table: string;
  /** The table's name as in the dump's file names (mydumper escapes some characters there). */
  fileTable: string;
  rows: number | undefined;
  checksum: string | undefined;
}

/** The name of the file mydumper writes in the dump directory (`metadata.partial` until the dump finished). */
export const MYDUMPER_METADATA = 'metadata';

const SECTION = /^\[([`"])(.+)\1\.\1(.+)\1\]$/;

export function parseMydumperMetadata(text: string): MetadataTable[] {
  const out: MetadataTable[] = [];
  let cur: (MetadataTable & { view: boolean }) | undefined;
  const flush = (): void => {
    if (cur && !cur.view && (cur.rows !== undefined || cur.checksum !== undefined)) out.push({ db: cur.db, table: cur.table, fileTable: cur.fileTable, rows: cur.rows, checksum: cur.checksum });
  };
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('[')) {
      flush();
      const m = SECTION.exec(line);
      cur = m ? { db: m[2]!, table: m[3]!, fileTable: m[3]!, rows: undefined, checksum: undefined, view: false } : undefined;
      continue;
    }
    const eq = line.indexOf('=');
    if (!cur || eq === -1) continue;
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    if (key === 'real_table_name' && value !== '') cur.table = value;
    else if (key === 'rows' && /^\d+$/.test(value)) cur.rows = Number(value);
    else if (key === 'data_checksum' && /^\d+$/.test(value)) cur.checksum = value.replace(/^0+(?=\d)/, '');
    else if ((key === 'is_view' || key === 'is_sequence') && value === '1') cur.view = true;
  }
  flush();
  return out;
}
