import { describe, expect, it } from "vitest";
import { describeRunnerRef, formatAbsolute, formatClock, formatRelative } from "./format";

const now = Date.UTC(2026, 9, 8, 12, 0, 0);
const ago = (seconds: number) => now - seconds * 1000;

describe("formatRelative", () => {
  it("says just now within 45 seconds either way", () => {
    expect(formatRelative(ago(0), now)).toBe("just now");
    expect(formatRelative(ago(44), now)).toBe("just now");
    expect(formatRelative(ago(-44), now)).toBe("just now");
  });

  it("moves to the next unit where a value would round up to it", () => {
    expect(formatRelative(ago(45), now)).toBe("1 min ago");
    expect(formatRelative(ago(59 * 60 + 29), now)).toBe("59 min ago");
    // 59.5 minutes: never "60 min ago".
    expect(formatRelative(ago(59 * 60 + 30), now)).toBe("1 h ago");
    expect(formatRelative(ago(23 * 3600 + 29 * 60), now)).toBe("23 h ago");
    expect(formatRelative(ago(23 * 3600 + 30 * 60), now)).toBe("1 d ago");
    expect(formatRelative(ago(44 * 86_400), now)).toBe("44 d ago");
    expect(formatRelative(ago(45 * 86_400), now)).toBe("1 mo ago");
    expect(formatRelative(ago(350 * 86_400), now)).toBe("11 mo ago");
    expect(formatRelative(ago(351 * 86_400), now)).toBe("1 y ago");
    expect(formatRelative(ago(3 * 365 * 86_400), now)).toBe("3 y ago");
  });

  it("says how far ahead a future time is", () => {
    expect(formatRelative(ago(-90), now)).toBe("in 2 min");
    expect(formatRelative(ago(-7 * 86_400), now)).toBe("in 7 d");
  });

  it("takes dates, epoch milliseconds and ISO strings alike", () => {
    const d = new Date(ago(3 * 3600));
    expect(formatRelative(d, new Date(now))).toBe("3 h ago");
    expect(formatRelative(d.toISOString(), now)).toBe("3 h ago");
  });
});

describe("absolute and clock times", () => {
  it("shows the date, the time and the zone of the viewer", () => {
    expect(formatAbsolute(now, { locale: "en-US", timeZone: "Europe/Berlin" })).toBe("Oct 8, 2026, 2:00:00 PM GMT+2");
    expect(formatAbsolute(now, { locale: "en-US", timeZone: "UTC" })).toBe("Oct 8, 2026, 12:00:00 PM UTC");
  });

  it("shows the time of day on a 24-hour clock, midnight as 00", () => {
    expect(formatClock(Date.UTC(2026, 0, 1, 0, 5, 9), { timeZone: "UTC" })).toBe("00:05:09");
    expect(formatClock(Date.UTC(2026, 0, 1, 23, 59, 59), { timeZone: "Asia/Tokyo" })).toBe("08:59:59");
  });
});

describe("describeRunnerRef", () => {
  it("names a worker process and its host, or a Kubernetes Job and its namespace", () => {
    expect(describeRunnerRef("vm/3417/pool-628d21ec", "local")).toBe("worker process 3417 on vm");
    expect(describeRunnerRef("worker-1/pid-41234", "local")).toBe("worker process 41234 on worker-1");
    expect(describeRunnerRef("airlock-agents/job/airlock-run-1a2b3c4d-a1", "kubernetes")).toBe("Job airlock-run-1a2b3c4d-a1 in namespace airlock-agents");
  });

  it("shows an unknown shape as it is, and a missing one as a dash", () => {
    expect(describeRunnerRef("something-else", "local")).toBe("something-else");
    expect(describeRunnerRef(null, "local")).toBe("—");
  });
});
