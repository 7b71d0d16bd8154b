/** The checks of the options the client and its operations are given: INVALID_CONFIG otherwise. */
import { MdqClientError } from "../errors.js";

/** `value`, or `fallback` when it is undefined; a value that is not a positive number is refused. */
export function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!(Number.isFinite(value) && value > 0)) {
    throw new MdqClientError("INVALID_CONFIG", `${name} must be a positive number`);
  }
  return value;
}

/** `values` when each is one of `allowed`. */
export function checkedList<Value extends string>(
  values: readonly Value[],
  allowed: readonly Value[],
  name: string,
): Value[] {
  for (const value of values) {
    if (!allowed.includes(value)) {
      throw new MdqClientError(
        "INVALID_CONFIG",
        `${name}: ${JSON.stringify(value)} is not one of ${allowed.join(", ")}`,
      );
    }
  }
  return [...values];
}
