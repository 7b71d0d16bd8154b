/**
 * Compresses the public listener's answers (CONTRACT §8): GraphQL answers, records pages streamed
 * from their buffers included, error bodies and the explorer's page, in the coding the request's
 * `Accept-Encoding` prefers (content-codings.ts), when the body is at least `minBytes` long.
 *
 * Streamed through node:zlib (libuv's thread pool), so a 1.5 MB records page never holds the event
 * loop. Left as they are: HEAD answers, answers without a body (1xx, 204, 304), partial content,
 * answers already in a coding (the explorer's precompressed assets; the bulk export writes its
 * own), and media types that do not shrink. Every answer of a compressible type carries
 * `Vary: Accept-Encoding` (RFC 9110 §12.5.5), compressed or not, so that no cache between serves
 * one client's coding to another.
 */
import { pipeline, Readable, Transform, type TransformCallback } from "node:stream";
import type { FastifyInstance, FastifyReply } from "fastify";
import type { ServiceMetrics } from "../observability/metrics.js";
import { ANSWER_LEVELS, CONTENT_CODINGS, compressor, negotiateContentCoding } from "./content-codings.js";

export interface ResponseCompressionOptions {
  /** Bodies shorter than this many bytes are sent as they are (`MDQ_COMPRESSION_MIN_BYTES`). */
  minBytes: number;
  metrics: ServiceMetrics;
}

/** Media types worth compressing: JSON, text (not event streams), JavaScript. */
const COMPRESSIBLE =
  /^(?:application\/(?:[a-z0-9.+-]*\+)?json|text\/(?!event-stream)[a-z0-9.+-]+|application\/javascript)\s*(?:;|$)/i;

/** Statuses whose answers have no body (RFC 9110 §6.4.1, §15.3.5, §15.4.5). */
function hasNoBody(status: number): boolean {
  return status < 200 || status === 204 || status === 304;
}

/** Adds `accept-encoding` to the answer's `Vary`, keeping what is there. */
function varyOnAcceptEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader("vary");
  const listed = Array.isArray(vary) ? vary.join(",") : String(vary ?? "");
  const names = listed
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
  if (names.some((name) => name === "*" || name.toLowerCase() === "accept-encoding")) return;
  reply.header("vary", [...names, "accept-encoding"].join(", "));
}

/** The body's length in bytes when it is known before it is sent, else undefined (a stream without `content-length`). */
function bodyBytes(payload: unknown, reply: FastifyReply): number | undefined {
  if (typeof payload === "string") return Buffer.byteLength(payload);
  if (payload instanceof Uint8Array) return payload.byteLength;
  const declared = Number(reply.getHeader("content-length"));
  return Number.isSafeInteger(declared) ? declared : undefined;
}

/** Passes its bytes on, counting them: the compressed length of an answer, for the metrics. */
class CountedBytes extends Transform {
  bytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    callback(null, chunk);
  }
}

/**
 * Installs the compression hook on `app`: at the root, after every other `onSend` hook (metrics
 * read the token endpoint's body as text), so it sees each answer as it will be sent.
 */
export function useResponseCompression(app: FastifyInstance, options: ResponseCompressionOptions): void {
  const { minBytes, metrics } = options;
  app.addHook("onSend", async (request, reply, payload) => {
    if (payload === null || payload === undefined || request.method === "HEAD") return payload;
    if (hasNoBody(reply.statusCode) || reply.statusCode === 206 || reply.hasHeader("content-range"))
      return payload;
    if (reply.hasHeader("content-encoding")) return payload;
    if (!COMPRESSIBLE.test(String(reply.getHeader("content-type") ?? ""))) return payload;
    varyOnAcceptEncoding(reply);
    const bytes = bodyBytes(payload, reply);
    if (bytes !== undefined && bytes < minBytes) return payload;
    const coding = negotiateContentCoding(request.headers["accept-encoding"], CONTENT_CODINGS);
    if (coding === null) return payload;

    const source =
      typeof payload === "string" || payload instanceof Uint8Array
        ? Readable.from([typeof payload === "string" ? Buffer.from(payload) : payload], { objectMode: false })
        : (payload as NodeJS.ReadableStream);
    const encoder = compressor(coding, ANSWER_LEVELS);
    const counted = new CountedBytes();
    pipeline(source, encoder, counted, (error) => {
      if (error) {
        // The client left (Fastify destroyed the body), or the body's own stream failed, which
        // Fastify logs as it cuts the connection.
        return;
      }
      metrics.compressionBytes.inc({ encoding: coding, stage: "before" }, encoder.bytesWritten);
      metrics.compressionBytes.inc({ encoding: coding, stage: "after" }, counted.bytes);
    });
    reply.header("content-encoding", coding);
    reply.removeHeader("content-length");
    return counted;
  });
}
