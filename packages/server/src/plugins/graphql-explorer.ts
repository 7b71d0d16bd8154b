/**
 * GraphiQL at `GET /graphql` for browsers (`Accept: text/html`, `MDQ_EXPLORER=on`): the page of
 * explorer-page.ts, and every asset it loads served by MDQ itself from npm packages (graphiql's
 * UMD bundle, react and react-dom's UMD builds) and from `packages/server/explorer/`, so the
 * explorer works without internet. Any other `GET /graphql` keeps its 405.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { buffer } from "node:stream/consumers";
import { fileURLToPath } from "node:url";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { todayIn } from "../calendar.js";
import {
  CONTENT_CODINGS,
  type CodingLevels,
  type ContentCoding,
  compressor,
  negotiateContentCoding,
} from "./content-codings.js";
import { refuseMethod } from "./error-responses.js";
import { dailyFlowTabs, EXAMPLE_BRAND_PLACEHOLDER, explorerPage } from "./explorer-page.js";

export interface GraphqlExplorerOptions {
  region: string;
  /** The region's reporting time zone: the example tabs ask about its last 28 days. */
  timeZone: string;
  /** Brand the example tabs ask about (the demo's first); a placeholder when unset. */
  exampleClientId?: string | undefined;
  /** Serve the assets compressed when `Accept-Encoding` allows (`MDQ_COMPRESSION`); default true. */
  compression?: boolean;
}

/**
 * Only what GraphiQL needs, all from this origin: scripts and styles from files (none inline),
 * the fonts and icons its stylesheet embeds as `data:`, and `POST /graphql`.
 */
export const EXPLORER_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Assets are addressed by a hash of their contents, so a year of caching is safe. */
const ASSET_CACHE_CONTROL = "public, max-age=31536000, immutable";

interface Asset {
  name: string;
  type: string;
  body: Buffer;
  /** The body in each coding asked for so far, compressed once (on the thread pool) and kept. */
  encoded: Map<ContentCoding, Promise<Buffer>>;
}

/**
 * Levels for the assets, compressed once and kept: harder than answers' (graphiql.min.js, 1.07 MB,
 * is 310 KB in brotli at quality 9, 347 KB at 4, 340 KB in gzip), short of brotli's 11, which
 * takes seconds of a thread for a further 8 %.
 */
const ASSET_LEVELS: CodingLevels = Object.freeze({ zstd: 12, br: 9, gzip: 9 });

/** `asset`'s body in `coding`, compressed on first use. */
function encodedBody(asset: Asset, coding: ContentCoding): Promise<Buffer> {
  let body = asset.encoded.get(coding);
  if (body === undefined) {
    body = buffer(Readable.from([asset.body]).pipe(compressor(coding, ASSET_LEVELS)));
    asset.encoded.set(coding, body);
    body.catch(() => asset.encoded.delete(coding));
  }
  return body;
}

const requireHere = createRequire(import.meta.url);

/** A file of an installed npm package (its `exports` do not list the UMD builds, its root does). */
function packageFile(packageName: string, file: string): string {
  return join(dirname(requireHere.resolve(`${packageName}/package.json`)), file);
}

/** `packages/server/explorer/`, from `dist/src/plugins/`. */
const OWN_FILES = fileURLToPath(new URL("../../../explorer/", import.meta.url));

const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

const ASSET_FILES: { name: string; path: () => string; type: string }[] = [
  {
    name: "react.production.min.js",
    path: () => packageFile("react", "umd/react.production.min.js"),
    type: JS,
  },
  {
    name: "react-dom.production.min.js",
    path: () => packageFile("react-dom", "umd/react-dom.production.min.js"),
    type: JS,
  },
  { name: "graphiql.min.js", path: () => packageFile("graphiql", "graphiql.min.js"), type: JS },
  { name: "graphiql.min.css", path: () => packageFile("graphiql", "graphiql.min.css"), type: CSS },
  { name: "explorer.js", path: () => join(OWN_FILES, "explorer.js"), type: JS },
  { name: "explorer.css", path: () => join(OWN_FILES, "explorer.css"), type: CSS },
];

/** Source map comments point at maps MDQ does not serve; without them DevTools asks for none. */
function withoutSourceMapComment(body: Buffer): Buffer {
  return Buffer.from(body.toString("utf8").replace(/\n\/[/*]# sourceMappingURL=[^\n]*\s*$/, "\n"));
}

async function loadAssets(): Promise<Asset[]> {
  return Promise.all(
    ASSET_FILES.map(async ({ name, path, type }) => ({
      name,
      type,
      body: withoutSourceMapComment(await readFile(path())),
      encoded: new Map(),
    })),
  );
}

/** Whether the client asks for HTML: `text/html` listed in `Accept` with a q-value above 0. */
export function acceptsHtml(accept: string | undefined): boolean {
  return (accept ?? "").split(",").some((range) => {
    const [type = "", ...parameters] = range.split(";").map((part) => part.trim().toLowerCase());
    const q = parameters.find((parameter) => parameter.startsWith("q="))?.slice(2);
    return type === "text/html" && (q === undefined || Number(q) > 0);
  });
}

/**
 * Registers `GET /graphql` (the page for browsers, 405 for anyone else) and the assets under
 * `/graphql/explorer/<hash>/`; pass `["GET"]` as `routedElsewhere` to `methodNotAllowed`.
 */
export async function useGraphqlExplorer(
  app: FastifyInstance,
  options: GraphqlExplorerOptions,
): Promise<void> {
  const assets = await loadAssets();
  const hash = createHash("sha256");
  for (const asset of assets) hash.update(asset.body);
  const version = hash.digest("hex").slice(0, 16);
  const assetPath = `graphql/explorer/${version}`;

  app.get("/graphql", { exposeHeadRoute: false }, async (request: FastifyRequest, reply) => {
    if (!acceptsHtml(request.headers.accept)) return refuseMethod(request, reply, ["POST"]);
    const tabs = dailyFlowTabs(
      options.exampleClientId ?? EXAMPLE_BRAND_PLACEHOLDER,
      todayIn(options.timeZone),
    );
    return reply
      .type("text/html; charset=utf-8")
      .header("content-security-policy", EXPLORER_CONTENT_SECURITY_POLICY)
      .header("x-content-type-options", "nosniff")
      .header("referrer-policy", "no-referrer")
      .header("cache-control", "no-cache")
      .header("vary", "accept")
      .send(
        explorerPage({
          region: options.region,
          // Relative to the page, so a proxy that strips a path prefix still serves them.
          assetUrl: (name) => `${assetPath}/${name}`,
          tabs,
        }),
      );
  });

  const codings = options.compression === false ? [] : CONTENT_CODINGS;
  for (const asset of assets) {
    app.get(`/${assetPath}/${asset.name}`, async (request, reply) => {
      reply
        .type(asset.type)
        .header("cache-control", ASSET_CACHE_CONTROL)
        .header("x-content-type-options", "nosniff");
      if (codings.length === 0) return reply.send(asset.body);
      reply.header("vary", "accept-encoding");
      const coding = negotiateContentCoding(request.headers["accept-encoding"], codings);
      if (coding === null) return reply.send(asset.body);
      return reply.header("content-encoding", coding).send(await encodedBody(asset, coding));
    });
  }
}
