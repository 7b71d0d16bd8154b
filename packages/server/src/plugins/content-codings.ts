/**
 * Content codings (RFC 9110 §8.4.1): those this Node can write, the choice of one from a request's
 * `Accept-Encoding` (RFC 9110 §12.5.3), and a compressing stream for each. One module for every
 * answer that is compressed: GraphQL and OAuth answers (response-compression.ts), the explorer's
 * assets (graphql-explorer.ts) and the bulk export (export/export-endpoint.ts).
 *
 * Every compressor is a node:zlib stream: its work runs on libuv's thread pool, never on the event
 * loop (the `*Sync` functions would block it for a 5000-row page's ~10 ms).
 */
import * as zlib from "node:zlib";

/** A content coding MDQ may answer in. */
export type ContentCoding = "zstd" | "br" | "gzip";

/** zstd's compressor, in node:zlib from Node 22.15 and 23.8 (absent on Node 20). */
const createZstdCompress = (
  zlib as { createZstdCompress?: (options?: { params?: Record<number, number> }) => zlib.Gzip }
).createZstdCompress;

/**
 * The codings this process can write, preferred first when a request weighs several alike: zstd
 * where Node has it, then brotli, which at the levels below packs JSON a little tighter than gzip
 * for less CPU (a 5000-row page: 7.2× in 6.4 ms against 7.0× in 7.8 ms).
 */
export const CONTENT_CODINGS: readonly ContentCoding[] = Object.freeze(
  createZstdCompress === undefined ? ["br", "gzip"] : ["zstd", "br", "gzip"],
);

/** How hard each coding works: a level per coding (zlib's, brotli's quality, zstd's level). */
export type CodingLevels = Readonly<Record<ContentCoding, number>>;

/**
 * Levels for answers compressed as they are sent: each coding's fastest. A 5000-row page
 * (1.48 MB of JSON) costs a thread 6–8 ms at these and is 7× smaller; brotli 4 and gzip 6 make it
 * 11× smaller for 19–20 ms, which on a 2-core loopback cut a walk's pages per second to ~0.6× of
 * uncompressed, where these kept it about level (docs/api.md "Compression"). Brotli's default
 * quality, 11, takes seconds. The wire needs no more: over 50 Mbit/s the page's 210 KB take
 * 34 ms against its 236 ms uncompressed.
 */
export const ANSWER_LEVELS: CodingLevels = Object.freeze({ zstd: 1, br: 1, gzip: 1 });

/** A compressing stream (node:zlib, on the thread pool) for `coding` at `levels`. */
export function compressor(coding: ContentCoding, levels: CodingLevels): zlib.Gzip | zlib.BrotliCompress {
  if (coding === "gzip") return zlib.createGzip({ level: levels.gzip });
  if (coding === "br") {
    return zlib.createBrotliCompress({
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: levels.br,
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
      },
    });
  }
  if (createZstdCompress === undefined) throw new Error("this Node has no zstd compressor");
  // ZSTD_c_compressionLevel is parameter 100 (zstd.h); node:zlib names it ZSTD_c_compressionLevel.
  return createZstdCompress({ params: { 100: levels.zstd } });
}

/** One `coding;q=weight` element of an `Accept-Encoding` field, lower-cased. */
const ELEMENT = /^([!#$%&'*+.^_`|~0-9a-z-]+)\s*(?:;\s*q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*)?$/;

/**
 * The weight a request gives each coding it names, `*` included (RFC 9110 §12.5.3, §12.4.2):
 * `x-gzip` is `gzip` (§8.4.1.3); an element that is not `coding` or `coding;q=weight` is ignored;
 * a coding named twice keeps its first weight.
 */
function weightsOf(field: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const element of field.toLowerCase().split(",")) {
    const match = ELEMENT.exec(element.trim());
    if (match === null) continue;
    const coding = match[1] === "x-gzip" ? "gzip" : match[1]!;
    if (!weights.has(coding)) weights.set(coding, match[2] === undefined ? 1 : Number(match[2]));
  }
  return weights;
}

/**
 * The coding to answer in, from the request's `Accept-Encoding` and the codings `offered` (preferred
 * first), or null for none (identity). RFC 9110 §12.5.3: a coding the field names, or matches with
 * `*`, is acceptable unless its weight is 0; the highest weight wins, ties go to the earlier offer.
 * No field, an empty one, `identity` alone or a field weighing identity above every offered coding
 * asks for no coding. A field that excludes identity (`identity;q=0`, `*;q=0`) and accepts none of
 * the offered codings is disregarded (RFC 9110 §12.1 lets the server choose that over a 406): the
 * answer is sent without a coding, which every client can read.
 * @example negotiateContentCoding("gzip;q=0.5, br", ["br", "gzip"]) // "br"
 */
export function negotiateContentCoding(
  field: string | string[] | undefined,
  offered: readonly ContentCoding[],
): ContentCoding | null {
  if (field === undefined) return null;
  const weights = weightsOf(Array.isArray(field) ? field.join(",") : field);
  const anyWeight = weights.get("*");
  let best: ContentCoding | null = null;
  let bestWeight = 0;
  for (const coding of offered) {
    const weight = weights.get(coding) ?? anyWeight ?? 0;
    if (weight > bestWeight) {
      best = coding;
      bestWeight = weight;
    }
  }
  // Identity not named stays acceptable below every named coding (§12.5.3); named above, it wins.
  const identityWeight = weights.get("identity");
  if (best !== null && identityWeight !== undefined && identityWeight > bestWeight) return null;
  return best;
}
