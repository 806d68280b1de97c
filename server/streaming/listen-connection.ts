import pg from "pg";

// One PostgreSQL connection that LISTENs on a channel and comes back after it
// is lost (server restart, network cut, a terminated backend). Notifications
// sent while it was down are gone, so every (re)connect calls `onConnected`:
// the owner catches up from the database by seq.

export type ListenConnectionOptions = {
  connectionString: string;
  channel: string;
  onNotification: (payload: string) => void;
  onConnected: () => void;
  /** Shown in pg_stat_activity: how tests and operators find this connection. */
  applicationName?: string;
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  /** A half-open TCP connection delivers nothing and reports nothing: ping to notice. */
  pingIntervalMs?: number;
  log?: (line: string) => void;
};

export class ListenConnection {
  private client: pg.Client | null = null;
  private connected = false;
  private stopped = false;
  private backoffMs: number;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private pingTimer: NodeJS.Timeout | null = null;
  private readyWaiters: (() => void)[] = [];
  /** Successful connects so far (1 + reconnects). */
  connects = 0;

  constructor(private readonly opts: ListenConnectionOptions) {
    this.backoffMs = opts.reconnectMinMs ?? 100;
  }

  get isConnected() {
    return this.connected;
  }

  start() {
    if (this.client || this.reconnectTimer || this.stopped) return;
    void this.connect();
  }

  /** Resolves once LISTEN is active. */
  ready(): Promise<void> {
    if (this.connected) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  private async connect() {
    this.reconnectTimer = null;
    if (this.stopped) return;
    const client = new pg.Client({
      connectionString: this.opts.connectionString,
      application_name: this.opts.applicationName ?? "airlock-listen",
      keepAlive: true,
    });
    this.client = client;
    client.on("notification", (msg) => {
      if (client === this.client && msg.payload) this.opts.onNotification(msg.payload);
    });
    client.on("error", (err) => this.lost(client, err));
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
      // The channel is a constant of ours, never user input; quoted anyway.
      await client.query(`LISTEN "${this.opts.channel.replaceAll('"', "")}"`);
    } catch (err) {
      this.lost(client, err);
      return;
    }
    if (client !== this.client) return;
    this.connected = true;
    this.connects++;
    this.backoffMs = this.opts.reconnectMinMs ?? 100;
    this.startPing(client);
    for (const w of this.readyWaiters.splice(0)) w();
    this.opts.onConnected();
  }

  private startPing(client: pg.Client) {
    const every = this.opts.pingIntervalMs ?? 30_000;
    this.stopPing();
    this.pingTimer = setInterval(() => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("ping timed out")), Math.min(10_000, every));
      });
      Promise.race([client.query("SELECT 1"), timeout])
        .catch((err: unknown) => this.lost(client, err))
        .finally(() => clearTimeout(timer));
    }, every);
    this.pingTimer.unref();
  }

  private stopPing() {
    if (this.pingTimer) clearInterval(this.pingTimer);
    this.pingTimer = null;
  }

  private lost(client: pg.Client, err?: unknown) {
    if (client !== this.client) return;
    this.client = null;
    this.connected = false;
    this.stopPing();
    // A late error from the dead client must not crash the process.
    client.removeAllListeners("notification");
    client.on("error", () => {});
    client.end().catch(() => {});
    if (this.stopped) return;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.opts.reconnectMaxMs ?? 5_000);
    this.opts.log?.(`LISTEN connection lost (${err instanceof Error ? err.message : "closed"}); reconnecting in ${wait} ms`);
    this.reconnectTimer = setTimeout(() => void this.connect(), wait);
    this.reconnectTimer.unref();
  }

  async stop() {
    this.stopped = true;
    this.stopPing();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const client = this.client;
    this.client = null;
    this.connected = false;
    if (client) {
      client.on("error", () => {});
      await client.end().catch(() => {});
    }
  }
}
