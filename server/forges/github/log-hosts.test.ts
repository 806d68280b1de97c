import { describe, expect, it } from "vitest";
import { DEFAULT_GITHUB_LOG_HOSTS, logHostAllows, parseLogHosts } from "./log-hosts";

const hosts = (text: string) => {
  const parsed = parseLogHosts(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.hosts;
};
const allows = (text: string, url: string) => logHostAllows(hosts(text), new URL(url));

describe("GitHub's log hosts", () => {
  it("allows GitHub.com's log storage by default, over https only", () => {
    expect(allows(DEFAULT_GITHUB_LOG_HOSTS, "https://productionresultssa7.blob.core.windows.net/actions-results/x/logs/job-logs.txt?sig=1")).toBe(true);
    expect(allows(DEFAULT_GITHUB_LOG_HOSTS, "https://pipelines.actions.githubusercontent.com/serviceHosts/x/_apis/pipelines/1/runs/2/signedlogcontent/3")).toBe(true);
    expect(allows(DEFAULT_GITHUB_LOG_HOSTS, "https://results-receiver.actions.githubusercontent.com/x")).toBe(true);
    expect(allows(DEFAULT_GITHUB_LOG_HOSTS, "http://productionresultssa7.blob.core.windows.net/x")).toBe(false);
  });

  it("refuses hosts that only look alike, other storage accounts, and addresses", () => {
    for (const url of [
      "https://evil.blob.core.windows.net/x",
      "https://productionresultssa7.blob.core.windows.net.evil.example/x",
      "https://a.b.actions.githubusercontent.com/x",
      "https://actions.githubusercontent.com/x",
      "https://127.0.0.1/x",
      "https://[::1]/x",
      "https://2130706433/x",
      "https://productionresultssa7.blob.core.windows.net:8443/x",
    ])
      expect(allows(DEFAULT_GITHUB_LOG_HOSTS, url), url).toBe(false);
  });

  it("takes http:// and a port only where an entry names them", () => {
    expect(allows("http://127.0.0.1:4000", "http://127.0.0.1:4000/x")).toBe(true);
    expect(allows("http://127.0.0.1:4000", "http://127.0.0.1:4001/x")).toBe(false);
    expect(allows("http://127.0.0.1:4000", "https://127.0.0.1:4000/x")).toBe(false);
    expect(allows("ghe.example.com", "https://ghe.example.com/x")).toBe(true);
    expect(allows("https://ghe.example.com:443", "https://ghe.example.com/x")).toBe(true);
    expect(allows("GHE.Example.com, logs.example.com", "https://logs.example.com/x")).toBe(true);
  });

  it("names the entry that is wrong", () => {
    expect(parseLogHosts("")).toEqual({ ok: false, error: "lists no host" });
    expect(parseLogHosts("*")).toMatchObject({ ok: false, error: expect.stringContaining("too wide") });
    expect(parseLogHosts("*.com")).toMatchObject({ ok: false, error: expect.stringContaining('"*.com" is too wide') });
    expect(parseLogHosts("*.*.example.com")).toMatchObject({ ok: false, error: expect.stringContaining("more than one label") });
    expect(parseLogHosts("ok.example.com, https://x.example.com/path")).toMatchObject({ ok: false, error: expect.stringContaining('"https://x.example.com/path" is not a host name') });
    expect(parseLogHosts("ftp://x.example.com")).toMatchObject({ ok: false });
    expect(parseLogHosts("x.example.com:99999")).toMatchObject({ ok: false, error: expect.stringContaining("no valid port") });
  });
});
