/** `myAccess`: what these credentials may read, and the token's scope, region and expiry. */
import { checkMyAccess } from "../answer-validation.js";
import { MY_ACCESS_QUERY } from "../queries.js";
import type { MyAccess } from "../types.js";
import type { WalkService } from "../walk-types.js";

/** The brand's grants with the app's narrowing applied, as the service states them. */
export async function myAccess(
  service: Pick<WalkService, "graphql">,
  brandClientId: string,
  signal: AbortSignal | undefined,
): Promise<MyAccess> {
  const result = await service.graphql(MY_ACCESS_QUERY, { clientId: brandClientId }, signal);
  return checkMyAccess(result.data["myAccess"]);
}
