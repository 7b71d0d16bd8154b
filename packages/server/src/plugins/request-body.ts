/**
 * How the public routes read a request body: every body arrives as a raw buffer, and each route
 * checks its own media type (RFC 9110 §8.3, parsed by fast-content-type-parse) and decodes it as
 * strict UTF-8 itself, so that a wrong Content-Type or bad bytes get that route's error shape.
 */
import { safeParse } from "fast-content-type-parse";
import type { FastifyInstance } from "fastify";

/** Accepts any (or no) Content-Type as a raw buffer: each route checks its own media type. */
export function acceptRawBodies(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer", bodyLimit }, (_request, body, done) => done(null, body));
}

/**
 * The media type of a Content-Type header, lower-cased, and its charset (lower-cased) if given.
 * A header that is not a valid media type (RFC 9110 §8.3.1) has the type "".
 */
export function mediaTypeOf(header: string | undefined): { type: string; charset: string | undefined } {
  const { type, parameters } = safeParse(header ?? "");
  return { type, charset: parameters["charset"]?.toLowerCase() };
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes a body as UTF-8, or undefined when it is not valid UTF-8. */
export function decodeUtf8(body: unknown): string | undefined {
  if (!Buffer.isBuffer(body)) return "";
  try {
    return strictUtf8.decode(body);
  } catch {
    return undefined;
  }
}
