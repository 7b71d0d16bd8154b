/**
 * Paths built from values that came from elsewhere (a server's dates, a state file's keys) must
 * stay inside the directory they were meant for. Each name is checked to be one plain path
 * segment (no separator of any platform, no `.` or `..`, no NUL, no percent-encoding), and the
 * joined path is resolved and compared with the directory's resolved prefix.
 */
import { isAbsolute, resolve, sep } from "node:path";
import { MdqClientError, type MdqClientErrorCode } from "./errors.js";

/** A name that is not one plain segment: separators, NUL, `%` escapes, or `.`/`..`. */
const UNSAFE_SEGMENT = /[/\\\0%]|^\.{1,2}$|^$/;

/**
 * `root/segment/…`, resolved, after checking that it stays inside `root`; otherwise throws `code`
 * (SERVER_ANSWER_INVALID for a server's value, MIRROR_REFUSED for a state file's).
 * @example pathInside("acme", ["date=2026-01-01", "records.csv"]) // "/abs/acme/date=2026-01-01/records.csv"
 */
export function pathInside(
  root: string,
  segments: readonly string[],
  code: MdqClientErrorCode = "SERVER_ANSWER_INVALID",
): string {
  const base = resolve(root);
  for (const segment of segments) {
    if (UNSAFE_SEGMENT.test(segment) || isAbsolute(segment)) {
      throw new MdqClientError(code, `${JSON.stringify(segment)} is not a plain name inside ${base}`);
    }
  }
  const path = resolve(base, ...segments);
  if (!path.startsWith(`${base}${sep}`)) {
    throw new MdqClientError(code, `${JSON.stringify(segments.join("/"))} leads outside ${base}`);
  }
  return path;
}
