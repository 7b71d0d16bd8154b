/**
 * The operator commands' HTTP client of the admin API (docs/admin-api.md): finds the listener and
 * the admin token from the data directory, sends JSON, and turns every failure into an
 * `AdminError` whose exit code says whose fault it was. The token never leaves this module: it is
 * not in argv, not in any message, and not visible when the client is inspected.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
// Type-only: erased at compile time, so operator commands still load no server code.
import type { AppView, BrandStatus, KeyInfo } from "@mdq/server";
import { type CommonFlags, demoDataDirectory } from "./operator-options.js";
import { UsageError } from "./usage-error.js";

/** Why a command failed, as its exit code says (docs/cli.md, "Exit codes"). */
export type AdminFailure = "failed" | "refused" | "unreachable" | "unauthorized";

const EXIT_CODES: Record<AdminFailure, number> = { failed: 1, refused: 3, unreachable: 4, unauthorized: 5 };

/** One problem of a rejected load or FX file, as the service lists it (422 `details`). */
export interface FileProblem {
  line: number;
  /** What `line` counts: lines of a text file, or rows of a Parquet file. */
  position?: "line" | "row";
  column?: string;
  message: string;
}

/** A failed admin call; `mdq` prints the message (and the file problems) and exits `exitCode`. */
export class AdminError extends Error {
  readonly exitCode: number;

  constructor(
    readonly failure: AdminFailure,
    message: string,
    /** The first problems of a rejected file, one line each: `line 7: market: …`. */
    readonly problems: string[] = [],
  ) {
    super(message);
    this.name = "AdminError";
    this.exitCode = EXIT_CODES[failure];
  }
}

const STATUS_FAILURES: Record<number, AdminFailure> = {
  400: "refused",
  401: "unauthorized",
  404: "refused",
  409: "refused",
  422: "refused",
};

const NOT_RUNNING = "is `mdq serve` running for this data directory?";

/** The media type of an answer that reports progress as it goes (docs/admin-api.md). */
const PROGRESS_TYPE = "application/x-ndjson";

/** A connection to one region's admin API. */
export class AdminClient {
  readonly #token: string;
  readonly #tokenSource: string;

  constructor(
    readonly url: string,
    token: string,
    tokenSource: string,
    readonly dataDir: string,
  ) {
    this.#token = token;
    this.#tokenSource = tokenSource;
  }

  /** `GET path`; resolves with the parsed JSON answer. */
  get<T>(path: string): Promise<T> {
    return this.#request<T>("GET", path);
  }

  /** `POST path` with a JSON body; resolves with the parsed JSON answer. */
  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.#request<T>("POST", path, body);
  }

  /**
   * `POST path` with a JSON body, answered as it goes (`Accept: application/x-ndjson`, a load):
   * `onProgress` gets each `{"progress": …}` line; resolves with the `{"result": …}` line, or
   * fails as the plain answer would have.
   */
  async postWithProgress<T, Progress>(
    path: string,
    body: unknown,
    onProgress: (progress: Progress) => void,
  ): Promise<T> {
    const response = await this.#send("POST", path, body, { accept: PROGRESS_TYPE });
    if (!response.ok || !(response.headers.get("content-type") ?? "").startsWith(PROGRESS_TYPE)) {
      return this.#answer<T>("POST", path, response);
    }
    const decoder = new TextDecoder();
    let pending = "";
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      pending += decoder.decode(chunk, { stream: true });
      for (let end = pending.indexOf("\n"); end !== -1; end = pending.indexOf("\n")) {
        const line = JSON.parse(pending.slice(0, end)) as {
          progress?: Progress;
          result?: T;
          status?: number;
        };
        pending = pending.slice(end + 1);
        if (line.progress !== undefined) onProgress(line.progress);
        else if (line.result !== undefined) return line.result;
        else throw this.#failure(line.status ?? 500, line);
      }
    }
    throw new AdminError("failed", `POST ${path}: the answer ended before the result`);
  }

  async #send(
    method: string,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#token}`, ...extra };
    if (body !== undefined) headers["content-type"] = "application/json";
    try {
      return await fetch(`${this.url}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new AdminError(
        "unreachable",
        `cannot reach the admin API at ${this.url} (${why}): ${NOT_RUNNING}`,
      );
    }
  }

  async #request<T>(method: string, path: string, body?: unknown): Promise<T> {
    return this.#answer<T>(method, path, await this.#send(method, path, body));
  }

  async #answer<T>(method: string, path: string, response: Response): Promise<T> {
    const text = await response.text();
    let answer: unknown;
    try {
      answer = text === "" ? undefined : JSON.parse(text);
    } catch {
      answer = undefined;
    }
    if (response.ok) {
      if (answer === undefined) {
        throw new AdminError(
          "failed",
          `${method} ${path}: the service answered ${response.status} without JSON`,
        );
      }
      return answer as T;
    }
    throw this.#failure(response.status, answer);
  }

  #failure(status: number, answer: unknown): AdminError {
    const error = (answer as { error?: { code?: unknown; message?: unknown; details?: unknown } } | undefined)
      ?.error;
    const code = typeof error?.code === "string" ? error.code : `HTTP ${status}`;
    const message = typeof error?.message === "string" ? error.message : "the service gave no message";
    const failure = STATUS_FAILURES[status] ?? "failed";
    if (failure === "unauthorized") {
      return new AdminError(
        "unauthorized",
        `the admin token from ${this.#tokenSource} was refused (${status} ${code}): ` +
          `use the admin-token of this service's data directory`,
      );
    }
    const problems = Array.isArray(error?.details)
      ? (error.details as FileProblem[]).map(describeProblem)
      : [];
    return new AdminError(failure, `${message} (${status} ${code})`, problems);
  }
}

/** `line 7: market: "UK" is not …`; `file: …` for a problem with the whole file (line 0). */
export function describeProblem(problem: FileProblem): string {
  const where = problem.line === 0 ? "file" : `${problem.position ?? "line"} ${problem.line}`;
  return problem.column === undefined
    ? `${where}: ${problem.message}`
    : `${where}: ${problem.column}: ${problem.message}`;
}

/**
 * The data directory of the flags: `--data`, else `$MDQ_DATA_DIR`, else `./data/<region>` (as
 * `mdq serve`), else, when only the demo's exists, `./data/demo-<region>` (as `mdq demo`), so that
 * `mdq status` right after `npm run demo` finds the demo.
 */
export function dataDirectory(flags: CommonFlags, env: NodeJS.ProcessEnv = process.env): string {
  const region = flags.region ?? (env["MDQ_REGION"] || "uk");
  const chosen = flags.data ?? (env["MDQ_DATA_DIR"] || undefined);
  if (chosen !== undefined) return resolve(chosen);
  const served = resolve("data", region);
  const demo = resolve(demoDataDirectory(region));
  return !existsSync(served) && existsSync(demo) ? demo : served;
}

/**
 * Finds the admin API of the flags' region: URL from `--admin-url`, `$MDQ_ADMIN_URL` or
 * `<data>/admin.json`; token from `$MDQ_ADMIN_TOKEN` or `<data>/admin-token`.
 * @example const admin = await connectAdmin({ data: "/var/lib/mdq/uk" }); await admin.get("/admin/brands");
 */
export async function connectAdmin(
  flags: CommonFlags,
  env: NodeJS.ProcessEnv = process.env,
): Promise<AdminClient> {
  const dataDir = dataDirectory(flags, env);
  const url =
    flags.adminUrl ?? (env["MDQ_ADMIN_URL"] ? checkedUrl(env["MDQ_ADMIN_URL"]) : await listenerUrl(dataDir));
  const { token, source } = await adminToken(dataDir, env);
  return new AdminClient(url, token, source, dataDir);
}

function checkedUrl(text: string): string {
  try {
    const url = new URL(text);
    if (url.protocol === "http:" || url.protocol === "https:") return text.replace(/\/+$/, "");
  } catch {}
  throw new UsageError("MDQ_ADMIN_URL is not an absolute http(s) URL");
}

async function listenerUrl(dataDir: string): Promise<string> {
  const file = join(dataDir, "admin.json");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new AdminError("unreachable", `no ${file}: ${NOT_RUNNING}`);
    }
    throw new AdminError("failed", `cannot read ${file}: ${(error as Error).message}`);
  }
  let url: unknown;
  try {
    url = (JSON.parse(text) as { url?: unknown }).url;
  } catch {
    url = undefined;
  }
  if (typeof url !== "string" || !/^https?:\/\//.test(url)) {
    throw new AdminError("failed", `${file} has no "url" of the admin API`);
  }
  return url.replace(/\/+$/, "");
}

async function adminToken(
  dataDir: string,
  env: NodeJS.ProcessEnv,
): Promise<{ token: string; source: string }> {
  const fromEnv = env["MDQ_ADMIN_TOKEN"];
  if (fromEnv) return { token: checkedToken(fromEnv.trim(), "MDQ_ADMIN_TOKEN"), source: "MDQ_ADMIN_TOKEN" };
  const file = join(dataDir, "admin-token");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new AdminError("unreachable", `no ${file}: ${NOT_RUNNING}`);
    throw new AdminError(
      "unauthorized",
      `cannot read the admin token ${file} (${code}): run as the service's user or set MDQ_ADMIN_TOKEN`,
    );
  }
  return { token: checkedToken(text.trim(), file), source: file };
}

/** A token usable in a header; fetch's own error would quote the value, so it is checked here. */
function checkedToken(token: string, source: string): string {
  if (!/^[\x21-\x7e]+$/.test(token)) {
    throw new AdminError(
      "unauthorized",
      `the admin token in ${source} is empty or has characters a header cannot carry`,
    );
  }
  return token;
}

/** A brand as the admin API returns it. */
export interface BrandInfo {
  brandId: string;
  name: string;
  createdAt: string;
}

/** An app as the admin API returns it (`markets`/`dataSources` null: all its brand's grants). */
export type AppInfo = AppView;

/** An app with its secret: the answer of create and rotate-secret, the only time it is shown. */
export interface AppWithSecret {
  app: AppInfo;
  appClientSecret: string;
}

/** A brand's grants. */
export interface GrantsInfo {
  brandId: string;
  markets: string[];
  dataSources: string[];
}

export type { BrandStatus, KeyInfo };

/** The answer of `GET /admin/status`. */
export interface RegionStatus {
  region: string;
  today: string;
  brands: BrandStatus[];
}
