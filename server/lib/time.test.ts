import { describe, expect, it } from "vitest";
import { utcMinute } from "./time";

describe("utcMinute", () => {
  it("writes the minute in UTC and says so, whatever the process's zone", () => {
    expect(utcMinute(new Date("2026-12-02T14:03:59.999Z"))).toBe("2026-12-02 14:03 UTC");
    expect(utcMinute(new Date("2026-12-02T23:30:00+05:00"))).toBe("2026-12-02 18:30 UTC");
  });
});
