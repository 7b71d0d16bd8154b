/**
 * Thrift's compact protocol (the encoding of a Parquet file's footer), read and written as far as
 * parquet-join.ts needs: a struct's fields walked in order, each copied as its bytes or its value
 * rewritten (a field keeps its id and type, so its header is copied as it is).
 * Nothing is decoded that is not changed, so fields this module does not know (a newer writer's)
 * are copied as they are. The encoding: https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md
 */

/** The compact protocol's type ids. */
export enum CompactType {
  Stop = 0,
  True = 1,
  False = 2,
  Byte = 3,
  I16 = 4,
  I32 = 5,
  I64 = 6,
  Double = 7,
  Binary = 8,
  List = 9,
  Set = 10,
  Map = 11,
  Struct = 12,
}

/** A struct's field as read: its id, its type, and where its header starts (its value follows it). */
export interface CompactField {
  id: number;
  type: CompactType;
  header: number;
}

/** Reads compact-protocol bytes from `position` on. */
export class CompactReader {
  position: number;

  constructor(
    readonly bytes: Uint8Array,
    position = 0,
  ) {
    this.position = position;
  }

  private byte(): number {
    if (this.position >= this.bytes.length) throw new Error("thrift: the bytes end inside a value");
    return this.bytes[this.position++]!;
  }

  /** An unsigned varint (ULEB128), as a bigint: i64 values use all 64 bits. */
  varint(): bigint {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = this.byte();
      value |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return value;
      if (shift > 63n) throw new Error("thrift: a varint longer than 10 bytes");
    }
  }

  /** A zigzag-encoded integer (i16, i32, i64). */
  integer(): bigint {
    const raw = this.varint();
    return (raw >> 1n) ^ -(raw & 1n);
  }

  /**
   * The fields of the struct at the reader's position, each once its header is read: the caller
   * reads or skips its value before it asks for the next field.
   */
  *fields(): Generator<CompactField> {
    for (let previous = 0; ; ) {
      const header = this.position;
      const byte = this.byte();
      const type = byte & 0x0f;
      if (type === CompactType.Stop) return;
      const delta = byte >> 4;
      const id = delta === 0 ? Number(this.integer()) : previous + delta;
      yield { id, type, header };
      previous = id;
    }
  }

  /** A list's (or set's) header: its element type and size. */
  listHeader(): { elementType: CompactType; size: number } {
    const header = this.byte();
    const short = header >> 4;
    return { elementType: header & 0x0f, size: short === 15 ? Number(this.varint()) : short };
  }

  /** Moves past one value of `type` (a boolean field's value is in its header: nothing to skip). */
  skip(type: CompactType, inCollection = false): void {
    switch (type) {
      case CompactType.True:
      case CompactType.False:
        // In a list or set a boolean is a byte of its own.
        if (inCollection) this.byte();
        break;
      case CompactType.Byte:
        this.byte();
        break;
      case CompactType.I16:
      case CompactType.I32:
      case CompactType.I64:
        this.varint();
        break;
      case CompactType.Double:
        this.position += 8;
        break;
      case CompactType.Binary: {
        // The length first: `position += …` would read the position before the varint moved it.
        const length = Number(this.varint());
        this.position += length;
        break;
      }
      case CompactType.List:
      case CompactType.Set: {
        const { elementType, size } = this.listHeader();
        for (let index = 0; index < size; index += 1) this.skip(elementType, true);
        break;
      }
      case CompactType.Map: {
        const size = Number(this.varint());
        if (size === 0) break;
        const types = this.byte();
        for (let index = 0; index < size; index += 1) {
          this.skip(types >> 4, true);
          this.skip(types & 0x0f, true);
        }
        break;
      }
      case CompactType.Struct:
        for (const field of this.fields()) this.skip(field.type);
        break;
      default:
        throw new Error(`thrift: unknown compact type ${type}`);
    }
    if (this.position > this.bytes.length) throw new Error("thrift: the bytes end inside a value");
  }
}

/** Collects compact-protocol bytes. */
export class CompactWriter {
  private readonly parts: number[] = [];

  /** The bytes written. */
  bytes(): Uint8Array {
    return Uint8Array.from(this.parts);
  }

  /** Bytes written as they are (a field or value copied from a reader). */
  raw(bytes: Uint8Array): void {
    for (const byte of bytes) this.parts.push(byte);
  }

  varint(value: bigint): void {
    let rest = BigInt.asUintN(64, value);
    while (rest >= 0x80n) {
      this.parts.push(Number(rest & 0x7fn) | 0x80);
      rest >>= 7n;
    }
    this.parts.push(Number(rest));
  }

  /** A zigzag-encoded integer (i16, i32, i64). */
  integer(value: bigint): void {
    this.varint((value << 1n) ^ (value >> 63n));
  }

  listHeader(elementType: CompactType, size: number): void {
    if (size < 15) this.parts.push((size << 4) | elementType);
    else {
      this.parts.push(0xf0 | elementType);
      this.varint(BigInt(size));
    }
  }

  /** The end of a struct. */
  stop(): void {
    this.parts.push(CompactType.Stop);
  }
}
