/**
 * The buffers records pages' JSON is written into (records-json.ts), taken for one response and
 * given back once the response has been handed to the socket, so that the next page is written
 * into memory already held.
 *
 * Why: a page's JSON is its response's largest part (about 1.4 MB for 5000 rows). A new buffer a
 * page is external memory V8 counts toward its next collection: at a cold walk's pace a full
 * collection every ~20 pages and a scavenge every ~9, whose marking and copying (of the pages the
 * cache holds) cost as much as the page's SQL statement (bench/README.md, issue 17 twelfth pass).
 * Buffers come in power-of-two sizes from `SMALLEST`, and the free ones are kept up to a budget:
 * a buffer past it, or one whose response was cut off, is left to the garbage collector.
 */

/** The smallest buffer handed out (a 200-row page's JSON). */
const SMALLEST = 64 * 1024;

/** Reusable response buffers, by size. */
export class ResponseBuffers {
  /** Free buffers by byte length, each length a power of two ≥ `SMALLEST`. */
  private readonly free = new Map<number, Buffer[]>();
  private freeBytes = 0;
  /** The memory of buffers taken and not given back: only those are ever given back. */
  private readonly lent = new WeakSet<ArrayBufferLike>();

  /** @param maxFreeBytes the free buffers kept at most, in bytes (8 walks' 5000-row pages: 16 MiB) */
  constructor(private readonly maxFreeBytes: number) {}

  /**
   * A buffer of at least `bytes` bytes that nothing else reads: one given back before, or new.
   * @example const out = buffers.take(written); scratch.copy(out, 0, 0, written);
   */
  take(bytes: number): Buffer {
    let size = SMALLEST;
    while (size < bytes) size *= 2;
    let buffer = this.free.get(size)?.pop();
    if (buffer === undefined) buffer = Buffer.allocUnsafeSlow(size);
    else this.freeBytes -= size;
    this.lent.add(buffer.buffer);
    return buffer;
  }

  /**
   * Gives back the buffer behind `view` (a view into a buffer `take` returned) once nothing reads
   * it any more: kept for a later `take` while the free buffers stay within the budget. Any other
   * view, or one given back already, is ignored.
   * @example reply.raw.once("finish", () => buffers.give(json));
   */
  give(view: Uint8Array): void {
    if (!this.lent.delete(view.buffer)) return;
    const size = view.buffer.byteLength;
    if (this.freeBytes + size > this.maxFreeBytes) return;
    const list = this.free.get(size) ?? [];
    list.push(Buffer.from(view.buffer, 0, size));
    this.free.set(size, list);
    this.freeBytes += size;
  }
}
