/**
 * A fault-injecting HTTP proxy for SDK tests: forwards every request to the service, except that
 * it follows a script of faults per path (an invented status, a dropped connection, a slow
 * answer) and can run a hook between the service's answer and its delivery (to change data
 * mid-walk, deterministically). It counts what it sees, so tests can assert "exactly one token
 * request".
 */
import { once } from "node:events";
import { Agent, createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";

/** What to do with one request. */
export type Fault =
  /** Forward it untouched. */
  | "pass"
  /** Destroy the connection without an answer. */
  | "drop"
  /** Answer this instead of forwarding. */
  | { status: number; headers?: Record<string, string>; body?: string }
  /** Forward it, but hold the answer back this long. */
  | { delayMs: number }
  /** Forward its status, headers and first `cutAfterBytes` body bytes, then cut the connection (a break mid-body). */
  | { cutAfterBytes: number };

/** The paths a script names: the token endpoint, GraphQL and the bulk export. */
export type ProxiedPath = "/graphql" | "/oauth2/token" | "/export/marketing-records";

/** One request as the proxy saw it. */
export interface SeenRequest {
  path: string;
  /** The parsed JSON body of a GraphQL request. */
  body: { query?: string; variables?: Record<string, unknown> } | undefined;
  authorization: string | undefined;
  /** The request's `Accept-Encoding`, as the client sent it. */
  acceptEncoding: string | undefined;
  /** The request's `User-Agent`, as the client sent it. */
  userAgent: string | undefined;
  /** The fault applied ("pass" when none was scripted). */
  fault: Fault;
  /** The status delivered (undefined for a drop). */
  status?: number;
  /** The `Content-Encoding` of the service's answer as forwarded (undefined: none, or no answer). */
  contentEncoding?: string;
}

/** Runs after the service answered and before the answer is delivered. */
export type ResponseHook = (seen: SeenRequest, status: number, body: string) => Promise<void> | void;

/** A running proxy: its URL, what it saw, and the script of faults still to apply. */
export interface FaultProxy {
  url: string;
  /** Every request seen, in arrival order. */
  seen: SeenRequest[];
  /** Appends faults for the next requests to `path` (one per request, in order). */
  script(path: ProxiedPath, faults: Fault[]): void;
  /** Faults scripted but not yet used. */
  pending(path: ProxiedPath): number;
  /** How many requests reached `path`. */
  count(path: ProxiedPath): number;
  onResponse: ResponseHook | undefined;
  close(): Promise<void>;
}

/** The GraphQL body of a 401, as the service sends it. */
export function unauthenticated(message = "the access token has expired"): Fault {
  return {
    status: 401,
    headers: {
      "content-type": "application/json; charset=utf-8",
      "www-authenticate": `Bearer error="invalid_token", error_description="${message}"`,
    },
    body: JSON.stringify({ errors: [{ message, extensions: { code: "UNAUTHENTICATED" } }] }),
  };
}

/** A GraphQL-shaped error answer with `code`. */
export function graphqlError(status: number, code: string, headers: Record<string, string> = {}): Fault {
  return {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
    body: JSON.stringify({ errors: [{ message: `injected ${code}`, extensions: { code } }] }),
  };
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Starts a proxy on a free port of 127.0.0.1 in front of `target`. */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const scripts = new Map<string, Fault[]>();
  const seen: SeenRequest[] = [];
  const proxy: FaultProxy = {
    url: "",
    seen,
    script(path, faults) {
      scripts.set(path, [...(scripts.get(path) ?? []), ...faults]);
    },
    pending: (path) => scripts.get(path)?.length ?? 0,
    count: (path) => seen.filter((entry) => entry.path === path).length,
    onResponse: undefined,
    async close() {
      server.closeAllConnections();
      server.close();
      agent.destroy();
    },
  };
  const server: Server = createServer(async (request, response) => {
    const raw = await readBody(request);
    const path = (request.url ?? "/").split("?")[0]!;
    let body: SeenRequest["body"];
    if (path === "/graphql") {
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        body = undefined;
      }
    }
    const fault = scripts.get(path)?.shift() ?? "pass";
    const entry: SeenRequest = {
      path,
      body,
      authorization: request.headers.authorization,
      acceptEncoding: request.headers["accept-encoding"],
      userAgent: request.headers["user-agent"],
      fault,
    };
    seen.push(entry);
    if (fault === "drop") {
      request.socket.destroy();
      return;
    }
    if (typeof fault === "object" && "status" in fault) {
      entry.status = fault.status;
      response.writeHead(fault.status, fault.headers ?? {});
      response.end(fault.body ?? "");
      return;
    }
    const headers = { ...request.headers, host: upstream.host };
    const forwarded = httpRequest(upstream, { method: request.method, path: request.url, headers, agent });
    forwarded.end(raw);
    try {
      const [answer] = (await once(forwarded, "response")) as [IncomingMessage];
      const answerBody = await readBody(answer);
      const status = answer.statusCode ?? 502;
      entry.contentEncoding = answer.headers["content-encoding"];
      await proxy.onResponse?.(entry, status, answerBody.toString("utf8"));
      if (typeof fault === "object" && "delayMs" in fault) {
        await new Promise((resolve) => setTimeout(resolve, fault.delayMs));
      }
      entry.status = status;
      if (response.destroyed) return;
      const { "transfer-encoding": _chunked, connection: _connection, ...answerHeaders } = answer.headers;
      if (typeof fault === "object" && "cutAfterBytes" in fault) {
        response.writeHead(status, answerHeaders);
        const part = answerBody.subarray(0, fault.cutAfterBytes);
        response.write(part, () => response.socket?.destroy());
        return;
      }
      response.writeHead(status, { ...answerHeaders, "content-length": String(answerBody.length) });
      response.end(answerBody);
    } catch {
      request.socket.destroy();
    }
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no proxy port");
  proxy.url = `http://127.0.0.1:${address.port}`;
  return proxy;
}
