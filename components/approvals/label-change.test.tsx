import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { presentedLabelChange } from "@/server/domain/approvals/schemas";
import { LabelChangeSummary, LabelChangeView } from "./label-change";

// The approval screen of a label flip shows exactly what is approved: the PR and the labels added
// and removed, from the frozen request, as text.

const presented = (labels: unknown, prNumber: unknown = 7) => ({ action: "set_labels", target: { repository: "acme/calc", branch: "agent/fix", prNumber }, labels });

describe("a set_labels approval's presentation", () => {
  it("reads the PR and the labels added and removed from the frozen request", () => {
    expect(presentedLabelChange(presented({ add: ["ready-for-human"], remove: ["ready-for-agent"] }))).toEqual({ prNumber: 7, add: ["ready-for-human"], remove: ["ready-for-agent"] });
    const html = renderToStaticMarkup(<LabelChangeView presented={presented({ add: ["ready-for-human"], remove: ["ready-for-agent"] })} fallbackPrNumber={null} />);
    expect(html).toContain(">#7<");
    expect(html).toMatch(/data-testid="labels-added">ready-for-human</);
    expect(html).toMatch(/data-testid="labels-removed">ready-for-agent</);
  });

  it("falls back to the request's PR column and says 'none' for an empty side", () => {
    const html = renderToStaticMarkup(<LabelChangeView presented={presented({ add: [], remove: ["ready-for-agent"] }, null)} fallbackPrNumber={12} />);
    expect(html).toContain(">#12<");
    expect(html).toMatch(/data-testid="labels-added">none</);
  });

  it("shows nothing to approve when the request carries no valid label change, never a guess", () => {
    for (const labels of [undefined, null, "ready-for-human", { add: [], remove: [] }, { add: ["x"], remove: ["x"] }, { add: [1], remove: [] }]) {
      expect(presentedLabelChange(presented(labels)), JSON.stringify(labels)).toBeNull();
      const html = renderToStaticMarkup(<LabelChangeView presented={presented(labels)} fallbackPrNumber={7} />);
      expect(html).toContain('role="alert"');
      expect(html).not.toContain("label-change");
    }
    expect(presentedLabelChange(null)).toBeNull();
  });

  it("summarises the change in one line for the run view's approvals", () => {
    expect(renderToStaticMarkup(<LabelChangeSummary presented={presented({ add: ["ready-for-human"], remove: ["ready-for-agent"] })} />)).toContain(">adds ready-for-human; removes ready-for-agent<");
    expect(renderToStaticMarkup(<LabelChangeSummary presented={presented("bogus")} />)).toContain(">no valid label change<");
  });

  it("renders hostile label names as text: no markup reaches the page", () => {
    const hostile = ['<img src=x onerror="alert(1)">', "<script>alert(1)</script>"];
    for (const el of [
      <LabelChangeView key="view" presented={presented({ add: [hostile[0]], remove: [hostile[1]] })} fallbackPrNumber={null} />,
      <LabelChangeSummary key="summary" presented={presented({ add: [hostile[0]], remove: [hostile[1]] })} />,
    ]) {
      const html = renderToStaticMarkup(el);
      expect(html).not.toMatch(/<img|<script|onerror="/i);
      expect(html).toContain("&lt;img src=x onerror=&quot;alert(1)&quot;&gt;");
      expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    }
  });
});
