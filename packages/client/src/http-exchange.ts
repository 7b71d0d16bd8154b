/**
 * One HTTP POST and its whole answer: sent through undici's `request()`, which hands the body over
 * as it came (still encoded), read up to `maxBodyBytes`, then decoded in one shot by its
 * `Content-Encoding` (RFC 9110 §8.4) on zlib's thread pool. fetch decodes as it reads, a stream of
 * small chunks through WHATWG streams: a 1.5 MB page of 5000 rows cost the client ~7.5 ms more CPU
 * in brotli than as identity, and in gzip nearly twice identity's; decoded in one shot, either
 * costs about what identity does.
 */
import { promisify } from "node:util";
import * as zlib from "node:zlib";
import { Agent, request } from "undici";
import { MdqClientError } from "./errors.js";

/** One POST: where, with which headers and body, cancelled by `signal`. */
export interface ExchangeRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  signal: AbortSignal;
  /** Largest body read, both as sent and once decoded. */
  maxBodyBytes: number;
}

/** A complete answer: status, headers and the whole body, decoded, as text. */
export interface ExchangeAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * Decodes one content coding's whole body in output chunks of `chunkSize` bytes, refusing an output
 * longer than `maxOutputLength`.
 */
type Decoder = (encoded: Buffer, options: { chunkSize: number; maxOutputLength: number }) => Promise<Buffer>;

/**
 * A decode's output chunk, in bytes: the body's size at 8:1 (a page compresses about 7:1), at least
 * 64 KiB and at most `maxBodyBytes`. zlib's default of 16 KiB hands a 1.5 MB page back in 90-odd
 * chunks, each a trip between the thread pool and the main thread: ~5 ms more client CPU a page
 * than one chunk or two.
 */
function chunkSizeFor(encoded: Buffer, maxBodyBytes: number): number {
  return Math.max(64 * 1024, Math.min(encoded.length * 8, maxBodyBytes));
}

/** `zlib.zstdDecompress`, in the Node versions that have it (≥ 22.15, 23.8). */
const zstdDecompress = (zlib as { zstdDecompress?: typeof zlib.gunzip }).zstdDecompress;

/** The content codings decoded, by name (RFC 9110 §8.4.1; `x-gzip` is gzip's alias). */
const DECODERS: ReadonlyMap<string, Decoder> = new Map<string, Decoder>([
  ["br", promisify(zlib.brotliDecompress)],
  ["gzip", promisify(zlib.gunzip)],
  ["x-gzip", promisify(zlib.gunzip)],
  ["deflate", promisify(zlib.inflate)],
  ...(zstdDecompress ? [["zstd", promisify(zstdDecompress)] as [string, Decoder]] : []),
]);

/**
 * The connections of every exchange: kept alive and reused between requests, as fetch's are. The
 * SDK's own rather than undici's global dispatcher, which Node's bundled undici (another version,
 * with another handler interface from Node 26 on) may have installed. Redirects are followed, as
 * fetch follows them: at most 20, `authorization` dropped when the origin changes; a 301 or 302
 * stays a POST (fetch turns it into a GET), a 303 becomes a GET.
 */
const connections = new Agent({ maxRedirections: 20 });

/**
 * POSTs `request` and reads the whole answer. An answer longer than `maxBodyBytes` (as its
 * `content-length` says, as it arrives, or once decoded), in a coding the client does not know, or
 * that does not decode fails with SERVER_ANSWER_INVALID; a network failure rejects with undici's
 * error, an abort with the signal's reason.
 * @example const { status, headers, text } = await exchange({ url, headers, body, signal, maxBodyBytes });
 */
export async function exchange(exchangeRequest: ExchangeRequest): Promise<ExchangeAnswer> {
  const { url, maxBodyBytes } = exchangeRequest;
  const answer = await request(url, {
    method: "POST",
    headers: exchangeRequest.headers,
    body: exchangeRequest.body,
    signal: exchangeRequest.signal,
    dispatcher: connections,
  });
  const status = answer.statusCode;
  const headers = headersOf(answer.headers);
  const declared = Number(headers.get("content-length") ?? Number.NaN);
  if (declared > maxBodyBytes) {
    answer.body.destroy();
    throw answerTooLarge(url, maxBodyBytes, status);
  }
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of answer.body as AsyncIterable<Buffer>) {
    length += chunk.byteLength;
    if (length > maxBodyBytes) {
      answer.body.destroy();
      throw answerTooLarge(url, maxBodyBytes, status);
    }
    chunks.push(chunk);
  }
  const encoded = Buffer.concat(chunks, length);
  const decoded = await decode(encoded, headers.get("content-encoding"), url, maxBodyBytes, status);
  return { status, headers, text: decoded.toString("utf8") };
}

/**
 * The error of an answer longer than `maxBodyBytes`: SERVER_ANSWER_INVALID, so that a server
 * sending without end (or a small body that decodes to gigabytes) cannot fill the memory.
 */
export function answerTooLarge(url: string, maxBodyBytes: number, status: number): MdqClientError {
  return new MdqClientError(
    "SERVER_ANSWER_INVALID",
    `the answer from ${url} is larger than maxBodyBytes (${maxBodyBytes} bytes)`,
    { status },
  );
}

/**
 * `body` decoded from the codings `contentEncoding` lists, last applied first (RFC 9110 §8.4),
 * none of the steps longer than `maxBodyBytes`.
 */
async function decode(
  body: Buffer,
  contentEncoding: string | null,
  url: string,
  maxBodyBytes: number,
  status: number,
): Promise<Buffer> {
  const codings = (contentEncoding ?? "")
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "" && coding !== "identity");
  let decoded = body;
  for (const coding of codings.reverse()) {
    const decoder = DECODERS.get(coding);
    if (decoder === undefined) {
      throw new MdqClientError(
        "SERVER_ANSWER_INVALID",
        `the answer from ${url} is in the content coding "${coding}", which the client cannot decode`,
        { status },
      );
    }
    try {
      decoded = await decoder(decoded, {
        chunkSize: chunkSizeFor(decoded, maxBodyBytes),
        maxOutputLength: maxBodyBytes,
      });
    } catch (error) {
      if ((error as { code?: unknown }).code === "ERR_BUFFER_TOO_LARGE")
        throw answerTooLarge(url, maxBodyBytes, status);
      throw new MdqClientError(
        "SERVER_ANSWER_INVALID",
        `the answer from ${url} is not valid ${coding}: ${(error as Error).message}`,
        { status, cause: error },
      );
    }
  }
  return decoded;
}

/** undici's header object as WHATWG `Headers`, a repeated header's values appended in order. */
function headersOf(raw: Record<string, string | string[] | undefined>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const each of Array.isArray(value) ? value : [value]) headers.append(name, each);
  }
  return headers;
}
