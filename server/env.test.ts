import { afterEach, describe, expect, it, vi } from "vitest";

// GITHUB_LOG_HOSTS is parsed with the rest of the environment: a bad entry stops the start.
describe("GITHUB_LOG_HOSTS", () => {
  const saved = process.env.GITHUB_LOG_HOSTS;
  const load = async (value: string | undefined) => {
    if (value === undefined) delete process.env.GITHUB_LOG_HOSTS;
    else process.env.GITHUB_LOG_HOSTS = value;
    vi.resetModules();
    return import("./env");
  };
  afterEach(() => {
    if (saved === undefined) delete process.env.GITHUB_LOG_HOSTS;
    else process.env.GITHUB_LOG_HOSTS = saved;
    vi.resetModules();
  });

  it("defaults to GitHub.com's log hosts", async () => {
    const { env } = await load(undefined);
    expect(env.GITHUB_LOG_HOSTS.map((h) => h.entry)).toEqual(["*.actions.githubusercontent.com", "productionresultssa*.blob.core.windows.net"]);
  });

  it("takes a GitHub Enterprise Server's own host", async () => {
    const { env } = await load("ghe-storage.example.com, http://127.0.0.1:9000");
    expect(env.GITHUB_LOG_HOSTS.map((h) => [h.entry, h.protocol])).toEqual([["ghe-storage.example.com", "https:"], ["http://127.0.0.1:9000", "http:"]]);
  });

  it("refuses to start on a list that would allow most of the internet, naming the variable", async () => {
    await expect(load("*.com")).rejects.toThrow(/GITHUB_LOG_HOSTS: "\*\.com" is too wide/);
  });
});
