/**
 * Exports take turns at the engine (`MDQ_EXPORT_LANES`): at most `lanes` exports read their rows
 * at once, each for a time slice while others wait, so that exports streaming flat out leave the
 * rest of the machine's cores to GraphQL (issue 18: GraphQL's p99 under 4 exports).
 *
 * An export that waits for its turn reads nothing: its engine's writer fills the pipe or socket
 * between them (a few tens of KB) and blocks there, off the CPU. A turn ends when its slice is
 * over and another export waits; an export whose client does not ask for the next chunk gives
 * its turn away as soon as the slice is over too, so a slow client never holds back the others.
 * One export alone never waits and never gives its turn away.
 */

/** How long an export reads before it gives its turn to a waiting one. */
export const EXPORT_TURN_MS = 20;

/** One export's hold on a lane. */
interface Turn {
  /** Whether the holder is waiting on its consumer (between chunks), not on the engine. */
  parked: boolean;
  /** Whether the slice is over (the lane goes to the next export that waits). */
  expired: boolean;
  /** Whether the lane went to another export. */
  given: boolean;
  timer: NodeJS.Timeout;
}

/** The instance's export lanes and the exports waiting for one, first come first served. */
export class ExportTurns {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  private readonly holders = new Set<Turn>();

  constructor(
    readonly lanes: number,
    private readonly sliceMs = EXPORT_TURN_MS,
  ) {
    this.free = lanes;
  }

  /** `chunks`, read only while this export holds a lane. Ending early ends `chunks` too. */
  async *paced<Chunk>(chunks: AsyncIterable<Chunk>): AsyncGenerator<Chunk> {
    const iterator = chunks[Symbol.asyncIterator]();
    let turn: Turn | null = null;
    try {
      for (;;) {
        if (turn === null || turn.given) turn = await this.take();
        const step = await iterator.next();
        if (step.done) return;
        if (turn.expired && this.waiting.length > 0) this.give(turn);
        turn.parked = true;
        yield step.value;
        turn.parked = false;
      }
    } finally {
      if (turn !== null && !turn.given) this.give(turn);
      await iterator.return?.();
    }
  }

  /** Waits for a free lane; its slice starts now. */
  private async take(): Promise<Turn> {
    if (this.free > 0) this.free -= 1;
    else {
      // A lane given by `give` passes straight to the first waiter: `free` never counts it.
      const lane = new Promise<void>((resolve) => this.waiting.push(resolve));
      // A holder over its slice that waits on its client gives its lane now.
      for (const holder of this.holders)
        if (holder.parked && holder.expired) {
          this.give(holder);
          break;
        }
      await lane;
    }
    const turn: Turn = {
      parked: false,
      expired: false,
      given: false,
      timer: setTimeout(() => {
        // Over the slice: a parked holder gives the lane away now, one reading gives it after
        // its chunk (`paced`); with nobody waiting it keeps it until somebody does.
        turn.expired = true;
        if (turn.parked && this.waiting.length > 0) this.give(turn);
      }, this.sliceMs).unref(),
    };
    this.holders.add(turn);
    return turn;
  }

  private give(turn: Turn): void {
    if (turn.given) return;
    turn.given = true;
    clearTimeout(turn.timer);
    this.holders.delete(turn);
    const next = this.waiting.shift();
    if (next === undefined) this.free += 1;
    else next();
  }
}
