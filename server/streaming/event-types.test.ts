import { describe, expect, it } from "vitest";
import { transcriptEventTypes } from "@/components/transcript/event-types";
import { runEventTypes } from "@/server/domain/events/catalogue";

describe("the page's SSE listeners", () => {
  it("cover every type in the event catalogue", () => {
    expect([...transcriptEventTypes].sort()).toEqual([...runEventTypes].sort());
  });
});
