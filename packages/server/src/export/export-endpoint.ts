/**
 * `GET {baseUrl}/export/marketing-records` (CONTRACT §7 "Bulk export"): a brand's records of a
 * range in one response, streamed from one snapshot. Order of checks: 401 (bearer token) → 400/403
 * (parameters, grants) → 429 (export slots) → 400 `UNSUPPORTED_CURRENCY` / 409 `DATA_VERSION_GONE`
 * (read in the snapshot) → 200 with `MDQ-Data-Version` and `MDQ-Row-Count`, then the body. The
 * rate limit counts the request once (the scope's hook), however long it streams.
 *
 * Errors before the first byte are the GraphQL endpoint's JSON shape; a query-level code that
 * GraphQL answers with 200 is answered 400 here (there is no `data` to carry it beside). After the
 * first byte, a failure destroys the connection without the chunked body's last chunk, so no
 * client can take a truncated body for a whole one.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import * as zlib from "node:zlib";
import { constants, createGzip } from "node:zlib";
import negotiate from "@fastify/accept-negotiator";
import {
  DATA_VERSION_HEADER,
  EXPORT_MEDIA_TYPES,
  EXPORT_PATH,
  type ExportFormat,
  ROW_COUNT_HEADER,
  TEXT_EXPORT_FORMATS,
} from "@mdq/contract";
import type { FastifyInstance } from "fastify";
import { MdqError } from "../errors.js";
import { authenticateBearer } from "../graphql/bearer-auth.js";
import { dataVersionText } from "../graphql/data-version-text.js";
import { withRates } from "../graphql/resolvers.js";
import type { AppDirectory } from "../oauth/app-directory.js";
import type { KeyRing } from "../oauth/signing-keys.js";
import { VerifiedTokens } from "../oauth/verified-tokens.js";
import { methodNotAllowed, refuseMethod, sendGraphQLError } from "../plugins/error-responses.js";
import type { RecordExport, RecordExports } from "../store/export/record-export.js";
import { exportRequestOf } from "./export-request.js";
import { EXPORT_RETRY_AFTER_SECONDS, type ExportSlots } from "./export-slots.js";
import type { ExportTurns } from "./export-turns.js";
import { type BodyChunk, RECORDS_WRITERS, type RecordsWriter } from "./records-writer.js";

export interface ExportEndpointOptions {
  store: RecordExports;
  keys: KeyRing;
  apps: AppDirectory;
  settings: { authUrl: string; baseUrl: string; region: string };
  slots: ExportSlots;
  turns: ExportTurns;
}

/** A compressing stream for a content coding, by name. */
type Encoder = () => NodeJS.ReadWriteStream;

/**
 * The content codings the text formats may be sent in, preferred first: zstd where Node has it
 * (22.15 and later; Node 20 has not, and then only gzip is offered), then gzip.
 */
const ENCODERS: ReadonlyMap<string, Encoder> = new Map<string, Encoder>([
  ...(typeof (zlib as { createZstdCompress?: unknown }).createZstdCompress === "function"
    ? [
        [
          "zstd",
          () => (zlib as unknown as { createZstdCompress(): NodeJS.ReadWriteStream }).createZstdCompress(),
        ] as const,
      ]
    : []),
  ["gzip", () => createGzip({ level: constants.Z_BEST_SPEED })],
]);
const ENCODINGS = [...ENCODERS.keys()];

/**
 * The body's chunks: the rows as the engine writes them (the text formats between the writer's
 * start and end, its CSV header, their first window's batch written by the writer; a Parquet
 * file whole), else the writer's start, a chunk per batch, its end. The export closes however
 * the body ends.
 */
async function* bodyChunks(
  opened: RecordExport,
  format: ExportFormat,
  writer: RecordsWriter,
): AsyncGenerator<BodyChunk> {
  try {
    const engine = opened.engineBody(format);
    const framed = engine === null || TEXT_EXPORT_FORMATS.has(format);
    const start = framed ? writer.start() : "";
    if (start.length > 0) yield start;
    for await (const part of engine ?? opened.batches()) {
      if (part instanceof Uint8Array) yield part;
      else {
        const chunk = writer.write(part);
        if (chunk.length > 0) yield chunk;
      }
    }
    const end = framed ? writer.end() : "";
    if (end.length > 0) yield end;
  } finally {
    await opened.close();
  }
}

/** Registers the export route on `app` (inside the scope whose rate limit it shares). */
export async function exportEndpoint(app: FastifyInstance, options: ExportEndpointOptions): Promise<void> {
  const auth = { ...options, verifiedTokens: new VerifiedTokens() };
  const region = options.settings.region;

  app.get(EXPORT_PATH, { exposeHeadRoute: false }, async (request, reply) => {
    let release: (() => void) | null = null;
    let opened: RecordExport;
    let format: keyof typeof RECORDS_WRITERS;
    let currency: Parameters<(typeof RECORDS_WRITERS)["ndjson"]>[0];
    try {
      const caller = await authenticateBearer(request, auth);
      const exportRequest = exportRequestOf(request.query, caller, region);
      release = options.slots.tryAcquire();
      if (release === null) {
        throw new MdqError(
          "RATE_LIMITED",
          `this instance already runs ${options.slots.max} exports; retry in ${EXPORT_RETRY_AFTER_SECONDS} s`,
          { "retry-after": String(EXPORT_RETRY_AFTER_SECONDS) },
        );
      }
      opened = await withRates(exportRequest.query.currency, () =>
        options.store.openRecordExport(exportRequest.query),
      );
      if (exportRequest.dataVersion !== null && exportRequest.dataVersion !== opened.dataVersion) {
        await opened.close();
        throw new MdqError(
          "DATA_VERSION_GONE",
          `the range's data changed since ${dataVersionText(region, exportRequest.dataVersion)} (now ${dataVersionText(region, opened.dataVersion)}): start the export again without after and dataVersion`,
        );
      }
      format = exportRequest.format;
      currency = exportRequest.query.currency;
    } catch (error) {
      release?.();
      if (error instanceof MdqError && error.status === 200) {
        for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
        return sendGraphQLError(reply, 400, error.code, error.message);
      }
      throw error;
    }

    const encoding = TEXT_EXPORT_FORMATS.has(format)
      ? negotiate(request.headers["accept-encoding"] ?? "", ENCODINGS)
      : null;
    const encoder = encoding === null ? undefined : ENCODERS.get(encoding);
    reply.hijack();
    const headers: Record<string, string | number | string[]> = {};
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) headers[name] = value;
    Object.assign(headers, {
      "content-type": EXPORT_MEDIA_TYPES[format],
      [DATA_VERSION_HEADER.toLowerCase()]: dataVersionText(region, opened.dataVersion),
      [ROW_COUNT_HEADER.toLowerCase()]: String(opened.rowCount),
      "cache-control": "no-store",
      vary: "accept-encoding",
      ...(encoding !== null ? { "content-encoding": encoding } : {}),
    });
    reply.raw.writeHead(200, headers);
    const chunks = bodyChunks(opened, format, RECORDS_WRITERS[format](currency));
    const body = Readable.from(options.turns.paced(chunks), { objectMode: false });
    const streams: (NodeJS.ReadableStream | NodeJS.WritableStream)[] = encoder
      ? [body, encoder(), reply.raw]
      : [body, reply.raw];
    try {
      await pipeline(streams);
    } catch (error) {
      // The client left, or the store failed mid-stream: either way the connection is cut
      // without the final chunk (pipeline destroyed the response, and with it the socket).
      if (!reply.raw.destroyed) reply.raw.destroy();
      const code = (error as { code?: string }).code;
      if (code !== "ERR_STREAM_PREMATURE_CLOSE" && code !== "ECONNRESET")
        request.log.error({ err: error }, "an export failed after its first byte; its connection was cut");
    } finally {
      release();
    }
  });
  methodNotAllowed(app, EXPORT_PATH, ["GET"]);
  app.post(EXPORT_PATH, async (request, reply) => refuseMethod(request, reply, ["GET"]));
}
