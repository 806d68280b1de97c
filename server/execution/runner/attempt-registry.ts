// The attempts this worker process is running, by run id, so a cancel NOTIFY or a shutdown can
// reach the session that is running them.

export type StopKind = "cancel" | "shutdown";
export type StopRequest = { kind: StopKind; reason: string; at: number };

type Entry = { attemptId: string; stop: (request: StopRequest) => void };

export class AttemptRegistry {
  private readonly running = new Map<string, Entry>();

  register(runId: string, attemptId: string, stop: (request: StopRequest) => void): () => void {
    this.running.set(runId, { attemptId, stop });
    return () => {
      if (this.running.get(runId)?.attemptId === attemptId) this.running.delete(runId);
    };
  }

  /** Stops the run's attempt if this process runs it; true when it did. */
  stop(runId: string, kind: StopKind, reason: string): boolean {
    const entry = this.running.get(runId);
    entry?.stop({ kind, reason, at: Date.now() });
    return entry !== undefined;
  }

  stopAll(kind: StopKind, reason: string): number {
    for (const runId of [...this.running.keys()]) this.stop(runId, kind, reason);
    return this.running.size;
  }

  get size(): number {
    return this.running.size;
  }
}
