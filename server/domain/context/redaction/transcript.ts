// Redaction of an agent's transcript as it streams, one event at a time. Each event is redacted
// on its own (redactDeep: token shapes, granted values, keys included), and one thing needs the
// events around it: a private key printed line by line (`cat id_rsa`) arrives as one log event per
// line, so its body lines carry no BEGIN marker of their own. A BEGIN line left open keeps its
// stream "inside a key" and every following body line is masked whole, up to the END line.
import type { RunEventInput } from "../../events/catalogue";
import { continuesPrivateKey, opensPrivateKey } from "./private-keys";
import { marker } from "./patterns";
import { mergeReports, redactDeep, type KnownSecret, type RedactionReport } from "./redact";
import { markdownView, visibleView } from "./visible";

/** The line as a person sees it: terminal sequences and markdown emphasis gone. */
const visible = (text: string) => {
  const view = visibleView(text) ?? { text, map: null };
  return markdownView(view)?.text ?? view.text;
};

export class TranscriptRedactor {
  private readonly insideKey = new Set<string>();
  /** Everything masked so far, by kind and name: what the run reports. */
  masked: RedactionReport | null = null;

  constructor(private readonly secrets: readonly KnownSecret[]) {}

  redact<E extends RunEventInput>(event: E): E {
    const line = event.type === "log" ? { stream: event.payload.stream, text: event.payload.text } : null;
    if (line && this.insideKey.has(line.stream)) {
      const part = continuesPrivateKey(visible(line.text));
      if (part !== null) {
        if (part === "end") this.insideKey.delete(line.stream);
        this.tally({ status: "redacted", entries: [{ kind: "private_key", name: null, count: 1, reason: "" }], warnings: [] });
        return { type: "log", payload: { ...event.payload, text: marker("private_key") } } as E;
      }
      this.insideKey.delete(line.stream);
    }
    const { value, report } = redactDeep(event, { secrets: this.secrets });
    if (report.status === "redacted") this.tally(report);
    if (line && opensPrivateKey(visible(line.text))) this.insideKey.add(line.stream);
    return value;
  }

  private tally(report: RedactionReport) {
    this.masked = mergeReports(this.masked ? [this.masked, report] : [report]);
  }
}
