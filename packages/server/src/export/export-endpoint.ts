/**
 * `GET {baseUrl}/export/marketing-records` (CONTRACT §7 "Bulk export"): a brand's records of a
 * range in one response, streamed from one snapshot. Order of checks: 401 (bearer token) → 400/403
 * (parameters, grants) → 429 (the export lane, limits/request-lanes.ts: waits its brand's turn;
 * dropped unanswered when its client leaves first) → 400
 * `UNSUPPORTED_CURRENCY` / 409 `DATA_VERSION_GONE` (read in the snapshot) → 200 with
 * `MDQ-Data-Version`, `MDQ-Row-Count` and `MDQ-Resume` (the whole query, which a resume must
 * repeat: export-resume.ts), then the body. The
 * rate limit counts the request once (the scope's hook), however long it streams.
 *
 * Errors before the first byte are the GraphQL endpoint's JSON shape; a query-level code that
 * GraphQL answers with 200 is answered 400 here (there is no `data` to carry it beside). After the
 * first byte, a failure destroys the connection without the chunked body's last chunk, so no
 * client can take a truncated body for a whole one.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  type CurrencyCode,
  DATA_VERSION_HEADER,
  EXPORT_MEDIA_TYPES,
  EXPORT_PATH,
  type ExportFormat,
  RESUME_HEADER,
  ROW_COUNT_HEADER,
  TEXT_EXPORT_FORMATS,
} from "@mdq/contract";
import type { FastifyInstance } from "fastify";
import { MdqError } from "../errors.js";
import { authenticateBearer } from "../graphql/bearer-auth.js";
import { dataVersionText } from "../graphql/data-version-text.js";
import { withRates } from "../graphql/resolvers.js";
import type { RequestLanes } from "../limits/request-lanes.js";
import type { AppDirectory } from "../oauth/app-directory.js";
import type { KeyRing } from "../oauth/signing-keys.js";
import { VerifiedTokens } from "../oauth/verified-tokens.js";
import { clientGoneSignal } from "../plugins/client-gone.js";
import {
  CONTENT_CODINGS,
  type CodingLevels,
  type ContentCoding,
  compressor,
  negotiateContentCoding,
} from "../plugins/content-codings.js";
import { methodNotAllowed, refuseMethod, sendGraphQLError } from "../plugins/error-responses.js";
import type { RecordExport, RecordExports } from "../store/reads/export/record-export.js";
import { arrowWriter } from "./arrow-writer.js";
import { csvWriter } from "./csv-writer.js";
import { exportRequestOf } from "./export-request.js";
import { type ResumableQuery, resumeToken } from "./export-resume.js";
import type { ExportTurns } from "./export-turns.js";
import { ndjsonWriter } from "./ndjson-writer.js";
import { parquetWriter } from "./parquet-writer.js";
import type { BodyChunk, RecordsWriter, RecordsWriterFactory } from "./records-writer.js";

export interface ExportEndpointOptions {
  store: RecordExports;
  keys: KeyRing;
  apps: AppDirectory;
  settings: { authUrl: string; baseUrl: string; region: string };
  /** The instance's lanes: an export takes a place in the export lane for its whole stream. */
  lanes: RequestLanes;
  turns: ExportTurns;
}

/** A format's result processor: the media type of its body, and the writer of its bytes. */
interface ExportWriter {
  mediaType: string;
  writer: RecordsWriterFactory;
}

/**
 * The result processors this endpoint answers with, one per format (registered here, where they
 * are used, as graphql-yoga's result processors are per media type; records-writer.ts is what
 * each implements).
 */
const EXPORT_WRITERS: Readonly<Record<ExportFormat, ExportWriter>> = Object.freeze({
  ndjson: { mediaType: EXPORT_MEDIA_TYPES.ndjson, writer: ndjsonWriter },
  csv: { mediaType: EXPORT_MEDIA_TYPES.csv, writer: csvWriter },
  parquet: { mediaType: EXPORT_MEDIA_TYPES.parquet, writer: parquetWriter },
  arrow: { mediaType: EXPORT_MEDIA_TYPES.arrow, writer: arrowWriter },
});

/**
 * The content codings the text formats may be sent in (docs/api.md "Bulk export"), preferred
 * first: zstd where Node has it (22.15 and later; Node 20 has not, and then only gzip is offered),
 * then gzip.
 */
const EXPORT_CODINGS: readonly ContentCoding[] = CONTENT_CODINGS.filter((coding) => coding !== "br");
/** An export streams flat out: gzip's fastest level, zstd's default (brotli is not offered). */
const EXPORT_LEVELS: CodingLevels = Object.freeze({ zstd: 3, br: 1, gzip: 1 });

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

/**
 * A page-sized export's chunks (in the heavy lane: `RequestLanes.admitExport`), read whole before
 * the first is sent, and its place given back then, as a records page's is once answered: a client
 * that reads slowly, or not at all, holds a page's memory, never a place of the heavy lane.
 */
async function* readWhole(chunks: AsyncIterable<BodyChunk>, release: () => void): AsyncGenerator<BodyChunk> {
  const whole: BodyChunk[] = [];
  try {
    for await (const chunk of chunks) whole.push(chunk);
  } finally {
    release();
  }
  yield* whole;
}

/** Registers the export route on `app` (inside the scope whose rate limit it shares). */
export async function exportEndpoint(app: FastifyInstance, options: ExportEndpointOptions): Promise<void> {
  const auth = { ...options, verifiedTokens: new VerifiedTokens() };
  const region = options.settings.region;

  app.get(EXPORT_PATH, { exposeHeadRoute: false }, async (request, reply) => {
    let release: (() => void) | null = null;
    let opened: RecordExport;
    let paced: boolean;
    let format: ExportFormat;
    let currency: CurrencyCode;
    let resumable: ResumableQuery;
    try {
      const caller = await authenticateBearer(request, auth);
      const exportRequest = exportRequestOf(request.query, caller, region);
      const admitted = await options.lanes.admitExport(caller.brandId, clientGoneSignal(reply), () =>
        withRates(exportRequest.query.currency, () => options.store.openRecordExport(exportRequest.query)),
      );
      // The client left while the export waited for its turn: nothing opened, nobody to answer.
      if (admitted === null) return reply.hijack();
      ({ release, opened } = admitted);
      // A page-sized export is answered as a page is (`readWhole`); the others stream, taking
      // turns at the engine (export-turns.ts).
      paced = admitted.lane === "export";
      if (exportRequest.dataVersion !== null && exportRequest.dataVersion !== opened.dataVersion) {
        await opened.close();
        throw new MdqError(
          "DATA_VERSION_GONE",
          `the range's data changed since ${dataVersionText(region, exportRequest.dataVersion)} (now ${dataVersionText(region, opened.dataVersion)}): start the export again without after, resume and dataVersion`,
        );
      }
      format = exportRequest.format;
      currency = exportRequest.query.currency;
      resumable = exportRequest.resumable;
    } catch (error) {
      release?.();
      if (error instanceof MdqError && error.status === 200) {
        for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
        return sendGraphQLError(reply, 400, error.code, error.message);
      }
      throw error;
    }

    const encoding = TEXT_EXPORT_FORMATS.has(format)
      ? negotiateContentCoding(request.headers["accept-encoding"], EXPORT_CODINGS)
      : null;
    reply.hijack();
    const headers: Record<string, string | number | string[]> = {};
    for (const [name, value] of Object.entries(reply.getHeaders()))
      if (value !== undefined) headers[name] = value;
    Object.assign(headers, {
      "content-type": EXPORT_WRITERS[format].mediaType,
      [DATA_VERSION_HEADER.toLowerCase()]: dataVersionText(region, opened.dataVersion),
      [ROW_COUNT_HEADER.toLowerCase()]: String(opened.rowCount),
      [RESUME_HEADER.toLowerCase()]: resumeToken({
        query: resumable,
        dataVersion: dataVersionText(region, opened.dataVersion),
      }),
      "cache-control": "no-store",
      vary: "accept-encoding",
      ...(encoding !== null ? { "content-encoding": encoding } : {}),
    });
    reply.raw.writeHead(200, headers);
    const chunks = bodyChunks(opened, format, EXPORT_WRITERS[format].writer(currency));
    const body = Readable.from(paced ? options.turns.paced(chunks) : readWhole(chunks, release), {
      objectMode: false,
    });
    const streams: (NodeJS.ReadableStream | NodeJS.WritableStream)[] = encoding
      ? [body, compressor(encoding, EXPORT_LEVELS), reply.raw]
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
