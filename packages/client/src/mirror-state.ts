/**
 * A mirror's state file, `DIR/_mdq_mirror.json`: what the mirror wrote. It is the only record of
 * which files are the mirror's, so a run removes nothing it does not name; it is read as
 * untrusted input (a hand-edited or foreign file must not name paths outside the directory) and
 * written atomically.
 */
import { isCalendarDate } from "@mdq/contract";
import * as v from "valibot";
import { readTextIfPresent, writeTextAtomically } from "./atomic-files.js";
import { pathInside } from "./contained-paths.js";
import { MdqClientError } from "./errors.js";
import { SYNC_FORMATS } from "./record-formats.js";

/** The state file's name inside the mirror directory. */
export const MIRROR_STATE_FILE = "_mdq_mirror.json";
const STATE_FORMAT = 1;

const heldDay = v.object({
  dataVersion: v.pipe(v.string(), v.maxLength(256)),
  rows: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
});

const stateSchema = v.object({
  format: v.literal(STATE_FORMAT),
  baseUrl: v.string(),
  brandClientId: v.string(),
  currency: v.string(),
  fileFormat: v.picklist(SYNC_FORMATS),
  /** `FILE_SHAPE` of the files (record-formats.ts); absent in states of shape 1. */
  fileShape: v.optional(v.pipe(v.number(), v.safeInteger()), 1),
  /** How the CSV files' cells were written; absent in states of earlier versions (raw). */
  csvCells: v.optional(v.picklist(["neutralised", "raw"]), "raw"),
  from: v.string(),
  to: v.string(),
  /** After the last complete run; null until one completed. */
  dataVersion: v.nullable(v.string()),
  /** Every day whose file the mirror wrote: its version and rows. */
  days: v.record(v.pipe(v.string(), v.check(isCalendarDate)), heldDay),
});

/** What the state file holds. */
export type MirrorState = v.InferOutput<typeof stateSchema>;
/** A day the mirror holds. */
export type HeldDay = v.InferOutput<typeof heldDay>;

/** The state file of `dir`, or undefined when there is none; MIRROR_REFUSED when it is not one this SDK wrote. */
export async function readMirrorState(dir: string): Promise<MirrorState | undefined> {
  const path = pathInside(dir, [MIRROR_STATE_FILE], "MIRROR_REFUSED");
  const text = await readTextIfPresent(path);
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const result = v.safeParse(stateSchema, parsed);
  if (!result.success) {
    throw new MdqClientError(
      "MIRROR_REFUSED",
      `${path} is not a mirror state this version wrote; move it away (and the files it names) or use another --dir`,
    );
  }
  return result.output;
}

/** Writes the state atomically. */
export function writeMirrorState(dir: string, state: MirrorState): Promise<void> {
  return writeTextAtomically(
    pathInside(dir, [MIRROR_STATE_FILE], "MIRROR_REFUSED"),
    `${JSON.stringify(state, null, 2)}\n`,
  );
}
