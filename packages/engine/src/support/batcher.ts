/**
 * Collects calls made at about the same time into batches. A batch starts as soon as fewer than
 * `maxInFlight` are running, so a lone call waits for nothing; under load, calls queue up while batches
 * run and go together in the next one. One failing item does not fail the others: when a batch fails,
 * each of its items is tried alone.
 */
export class Batcher<I, O> {
  private queue: { item: I; resolve: (o: O) => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly process: (items: I[]) => Promise<O[]>,
    private readonly options: { readonly maxBatch: number; readonly maxInFlight: number },
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight || this.queue.length === 0) return;
    this.scheduled = true;
    // Let the calls of this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.run();
    });
  }

  private async run(): Promise<void> {
    if (this.inFlight >= this.options.maxInFlight || this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.options.maxBatch);
    this.inFlight++;
    try {
      const out = await this.process(batch.map((b) => b.item));
      for (const [i, b] of batch.entries()) b.resolve(out[i]!);
    } catch (error) {
      if (batch.length === 1) batch[0]!.reject(error);
      else
        await Promise.all(
          batch.map(async (b) => {
            try {
              b.resolve((await this.process([b.item]))[0]!);
            } catch (e) {
              b.reject(e);
            }
          }),
        );
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }
}
