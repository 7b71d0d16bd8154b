/**
 * nginx (Debian's package) as the load balancer in front of N instances, run as a child process
 * with its own prefix directory, so tests see exactly what an operator's proxy does to
 * `X-Forwarded-For` and to a dead upstream.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Where Debian installs nginx. */
export const NGINX = "/usr/sbin/nginx";

/** A running nginx child process. */
export interface Nginx {
  url: string;
  process: ChildProcess;
  log(): string;
  stop(): Promise<void>;
}

/**
 * How nginx spreads requests: `round-robin` (nginx's default: each request to the next instance)
 * or `token`, docs/deployment.md's choice (`hash $http_authorization consistent`: a client's
 * requests under one token to one instance, so that the pages of its walk find what the first
 * taught that instance, and its brand's fair share is one instance's queue).
 */
export interface NginxOptions {
  balance?: "round-robin" | "token";
}

/**
 * The configuration from docs/deployment.md: the instances in turn, or by a hash of the
 * `Authorization` header as the docs advise (`options.balance` "token"), the client's address
 * appended to `X-Forwarded-For`, and a request retried on the next instance when one
 * dies (GraphQL and the token endpoint are safe to retry, hence `non_idempotent`). nginx passes
 * `Accept-Encoding` and the instances' compressed answers through; its own gzip stays off.
 */
export function nginxConfig(
  prefix: string,
  port: number,
  upstreams: number[],
  options: NginxOptions = {},
): string {
  const affinity = options.balance === "token" ? "    hash $http_authorization consistent;\n" : "";
  return `worker_processes 1;
pid ${join(prefix, "nginx.pid")};
error_log ${join(prefix, "error.log")} warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${join(prefix, "client_body")};
  proxy_temp_path ${join(prefix, "proxy")};
  fastcgi_temp_path ${join(prefix, "fastcgi")};
  uwsgi_temp_path ${join(prefix, "uwsgi")};
  scgi_temp_path ${join(prefix, "scgi")};
  upstream mdq {
${affinity}${upstreams.map((upstream) => `    server 127.0.0.1:${upstream} max_fails=1 fail_timeout=5s;`).join("\n")}
    keepalive 16;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://mdq;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      gzip off;
      proxy_next_upstream error timeout http_502 http_503 non_idempotent;
      proxy_next_upstream_tries 3;
    }
  }
}
`;
}

/** Starts nginx in the foreground on 127.0.0.1:`port` in front of `upstreams`, balanced as `options` say. */
export async function startNginx(
  prefix: string,
  port: number,
  upstreams: number[],
  options: NginxOptions = {},
): Promise<Nginx> {
  if (!existsSync(NGINX)) {
    throw new Error(
      `${NGINX} is missing: the load-balancer tests need Debian's nginx (apt-get install nginx-light)`,
    );
  }
  await mkdir(prefix, { recursive: true });
  const config = join(prefix, "nginx.conf");
  await writeFile(config, nginxConfig(prefix, port, upstreams, options));
  let output = "";
  const child = spawn(
    NGINX,
    ["-p", prefix, "-e", join(prefix, "error.log"), "-c", config, "-g", "daemon off;"],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${output}`);
    const up = await fetch(`${url}/livez`).then(
      (response) => response.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() - started > 10_000) throw new Error(`nginx did not answer in 10 s: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url,
    process: child,
    log: () => output,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    },
  };
}
