/**
 * Client authentication at the token endpoint: HTTP Basic only (RFC 6749 §2.3.1), where the
 * client id and secret are each form-urlencoded before being joined with ":" and base64-encoded.
 */
import { OAuthError } from "../errors.js";

/** Credentials as presented by a client, decoded. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

const BASIC_HEADER = /^Basic ([A-Za-z0-9+/]+={0,2})$/i;
const STRAY_WHITESPACE = /\s/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Decodes an `Authorization: Basic …` header. Anything but one exact, well-formed Basic header
 * is `invalid_client`: stray spaces or newlines, bad base64, no ":", empty parts, bad %-escapes.
 */
export function parseBasicCredentials(header: string | undefined): ClientCredentials {
  if (header === undefined) throw invalidClient("client authentication with HTTP Basic is required");
  const match = BASIC_HEADER.exec(header);
  if (!match || match[1]!.length % 4 !== 0)
    throw invalidClient("the Authorization header is not valid HTTP Basic");
  let decoded: string;
  try {
    decoded = utf8.decode(Buffer.from(match[1]!, "base64"));
  } catch {
    throw invalidClient("the Basic credentials are not valid UTF-8");
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) throw invalidClient("the Basic credentials have no ':' between id and secret");
  const clientId = formDecode(decoded.slice(0, colon));
  const clientSecret = formDecode(decoded.slice(colon + 1));
  if (clientId === "" || clientSecret === "")
    throw invalidClient("the client id and secret must not be empty");
  if (STRAY_WHITESPACE.test(clientId) || STRAY_WHITESPACE.test(clientSecret)) {
    throw invalidClient("the client id or secret contains whitespace");
  }
  return { clientId, clientSecret };
}

/** RFC 6749 Appendix B: application/x-www-form-urlencoded decoding of one value. */
function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replaceAll("+", " "));
  } catch {
    throw invalidClient("the client id or secret has a malformed %-escape");
  }
}

function invalidClient(description: string): OAuthError {
  return new OAuthError("invalid_client", description);
}
