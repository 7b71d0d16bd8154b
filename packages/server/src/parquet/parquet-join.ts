/**
 * Parquet files of an export's windows, one after another, joined into one Parquet file as they
 * come. A Parquet file is its magic, its row groups, then a footer that says where each column
 * chunk starts; a second `COPY` cannot continue a file, so the DuckDB store wrote the whole range
 * in one statement, which sorts every row before the first byte (scale 150's 90 days: 685–955 ms
 * to the first chunk). Joined, the first bytes come once the first window is written, and no
 * statement sorts more than a window.
 *
 * Each window's row groups are sent as DuckDB wrote them; its footer's offsets are moved by where
 * its row groups land in the joined file, and the joined footer lists every window's row groups
 * (parquet.thrift: FileMetaData, RowGroup, ColumnChunk, ColumnMetaData). The footers are rewritten
 * field by field in Thrift's compact protocol (thrift-compact.ts), everything but the offsets
 * copied as its bytes (statistics, encodings, a newer writer's fields). A window whose file holds
 * what offsets cannot be moved for (page indexes, encryption), or whose schema differs from the
 * first's, fails the export: the joined file would be wrong.
 */
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { CompactReader, CompactType, CompactWriter } from "./thrift-compact.js";

const MAGIC = Buffer.from("PAR1");
/** The end of a Parquet file: the footer's length (4 bytes, little-endian), then the magic. */
const TAIL_BYTES = 8;

/**
 * Bytes read from a window's file at a time (here and by duckdb-export.ts). Through a named pipe,
 * as exports went before, the writer and Node took turns on each 64 KB the pipe holds: scale
 * 150's 90 days as NDJSON (85 MB) took 1.47–1.56 s through a pipe, 0.91–1.01 s through files,
 * 0.95–1.07 s written to `/dev/null` (one thread, in-process). Reads of 1 MB grew the server's
 * RSS during a year's export by 73 MB, reads of 256 KB by 56–62 MB, no slower.
 */
export const WINDOW_READ_BYTES = 1 << 18;

/** How a footer field is rewritten for its file's place in the joined file. */
type FieldRule = "offset" | "ordinal" | "refused" | { struct: FieldRules } | { list: FieldRules };
type FieldRules = ReadonlyMap<number, FieldRule>;

/** ColumnMetaData: data_page_offset, index_page_offset, dictionary_page_offset, bloom_filter_offset. */
const COLUMN_META_DATA: FieldRules = new Map([
  [9, "offset"],
  [10, "offset"],
  [11, "offset"],
  [14, "offset"],
]);

/**
 * ColumnChunk: file_offset, meta_data; refused: offset_index_offset and column_index_offset (page
 * indexes hold offsets of their own), crypto_metadata and encrypted_column_metadata.
 */
const COLUMN_CHUNK: FieldRules = new Map<number, FieldRule>([
  [2, "offset"],
  [3, { struct: COLUMN_META_DATA }],
  [4, "refused"],
  [6, "refused"],
  [8, "refused"],
  [9, "refused"],
]);

/** RowGroup: columns, file_offset, ordinal. */
const ROW_GROUP: FieldRules = new Map<number, FieldRule>([
  [1, { list: COLUMN_CHUNK }],
  [5, "offset"],
  [7, "ordinal"],
]);

/** FileMetaData's fields that the join reads or writes anew. */
const SCHEMA = 2;
const NUM_ROWS = 3;
const ROW_GROUPS = 4;

/** A window's file: where its row groups end and its footer's parts. */
interface WindowFile {
  /** One past the last byte of its row groups (where its footer starts). */
  dataEnd: number;
  footer: Buffer;
  /** Its FileMetaData's schema field, as bytes. */
  schema: Buffer;
  rows: bigint;
  /** Where its row_groups list starts in `footer`. */
  rowGroupsAt: number;
}

/** Numbers the joined file's row groups (RowGroup.ordinal, when a writer sets it). */
interface Ordinals {
  next: number;
}

/** Reads the footer of the Parquet file at `path`. */
async function readWindowFile(path: string): Promise<WindowFile> {
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    if (size < MAGIC.length + TAIL_BYTES) throw new Error(`${path} is not a Parquet file`);
    const tail = Buffer.alloc(TAIL_BYTES);
    await handle.read(tail, 0, TAIL_BYTES, size - TAIL_BYTES);
    const footerLength = tail.readUInt32LE(0);
    const dataEnd = size - TAIL_BYTES - footerLength;
    if (!tail.subarray(4).equals(MAGIC) || dataEnd < MAGIC.length)
      throw new Error(`${path} is not a Parquet file`);
    const footer = Buffer.alloc(footerLength);
    await handle.read(footer, 0, footerLength, dataEnd);
    let schema: Buffer | null = null;
    let rows: bigint | null = null;
    let rowGroupsAt = -1;
    const reader = new CompactReader(footer);
    for (const field of reader.fields()) {
      const start = reader.position;
      if (field.id === NUM_ROWS) rows = reader.integer();
      else {
        if (field.id === ROW_GROUPS) rowGroupsAt = start;
        reader.skip(field.type);
        if (field.id === SCHEMA) schema = footer.subarray(start, reader.position);
      }
    }
    if (schema === null || rows === null || rowGroupsAt < 0)
      throw new Error(`${path}: a footer without its schema, rows or row groups`);
    return { dataEnd, footer, schema, rows, rowGroupsAt };
  } finally {
    await handle.close();
  }
}

/** Copies the struct at `reader`'s position to `writer`, rewritten by `rules`. */
function rewriteStruct(
  reader: CompactReader,
  writer: CompactWriter,
  rules: FieldRules,
  shift: bigint,
  ordinals: Ordinals,
): void {
  for (const field of reader.fields()) {
    const rule = rules.get(field.id);
    if (rule === "refused")
      throw new Error(`a Parquet window holds field ${field.id}, whose offsets the join cannot move`);
    // A field keeps its id and type: its header is copied as it is, then its value.
    writer.raw(reader.bytes.subarray(field.header, reader.position));
    if (rule === undefined) {
      const value = reader.position;
      reader.skip(field.type);
      writer.raw(reader.bytes.subarray(value, reader.position));
    } else if (rule === "offset" || rule === "ordinal") {
      if (field.type !== (rule === "offset" ? CompactType.I64 : CompactType.I16))
        throw new Error(`a Parquet footer's field ${field.id} is not of its type`);
      const value = reader.integer();
      // An offset of 0 is one no writer means (the file starts with its magic): left as it is.
      if (rule === "ordinal") writer.integer(BigInt(ordinals.next++));
      else writer.integer(value > 0n ? value + shift : value);
    } else if ("struct" in rule) {
      rewriteStruct(reader, writer, rule.struct, shift, ordinals);
    } else {
      const { elementType, size } = reader.listHeader();
      writer.listHeader(elementType, size);
      for (let index = 0; index < size; index += 1) rewriteStruct(reader, writer, rule.list, shift, ordinals);
    }
  }
  writer.stop();
}

/** The row groups of `file`, each as its RowGroup's bytes, moved by `shift` bytes. */
function movedRowGroups(file: WindowFile, shift: bigint, ordinals: Ordinals): Uint8Array[] {
  const reader = new CompactReader(file.footer, file.rowGroupsAt);
  const { size } = reader.listHeader();
  return Array.from({ length: size }, () => {
    const writer = new CompactWriter();
    rewriteStruct(reader, writer, ROW_GROUP, shift, ordinals);
    return writer.bytes();
  });
}

/** The joined file's footer: the first window's, with every window's rows and row groups. */
function joinedFooter(first: WindowFile, rows: bigint, rowGroups: readonly Uint8Array[]): Uint8Array {
  const reader = new CompactReader(first.footer);
  const writer = new CompactWriter();
  for (const field of reader.fields()) {
    writer.raw(first.footer.subarray(field.header, reader.position));
    const value = reader.position;
    reader.skip(field.type);
    if (field.id === NUM_ROWS) writer.integer(rows);
    else if (field.id === ROW_GROUPS) {
      writer.listHeader(CompactType.Struct, rowGroups.length);
      for (const rowGroup of rowGroups) writer.raw(rowGroup);
    } else writer.raw(first.footer.subarray(value, reader.position));
  }
  writer.stop();
  return writer.bytes();
}

/**
 * The Parquet files at `paths` (each a window of the same columns, in order) as one Parquet file,
 * each window's row groups sent as soon as its file is there. A path's file is read before the
 * next path is asked for, so the caller may remove it then.
 */
export async function* joinedParquet(paths: AsyncIterable<string>): AsyncIterable<Uint8Array> {
  let first: WindowFile | null = null;
  const rowGroups: Uint8Array[] = [];
  const ordinals: Ordinals = { next: 0 };
  let rows = 0n;
  let written = 0;
  for await (const path of paths) {
    const file = await readWindowFile(path);
    if (first === null) first = file;
    else if (!file.schema.equals(first.schema))
      throw new Error("the Parquet windows of an export differ in their schema");
    if (written === 0) {
      yield MAGIC;
      written = MAGIC.length;
    }
    rowGroups.push(...movedRowGroups(file, BigInt(written - MAGIC.length), ordinals));
    rows += file.rows;
    if (file.dataEnd > MAGIC.length)
      yield* createReadStream(path, {
        start: MAGIC.length,
        end: file.dataEnd - 1,
        highWaterMark: WINDOW_READ_BYTES,
      });
    written += file.dataEnd - MAGIC.length;
  }
  if (first === null) throw new Error("a joined Parquet file needs one window at least");
  const footer = joinedFooter(first, rows, rowGroups);
  const length = Buffer.alloc(4);
  length.writeUInt32LE(footer.length);
  yield Buffer.concat([footer, length, MAGIC]);
}
