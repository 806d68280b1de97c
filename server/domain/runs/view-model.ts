import { zAdmissionPayload } from "@/server/domain/events/catalogue";
import { zStackSpec, type StackSpec } from "@/server/domain/stacks/spec";

// What the run page shows from a run's JSON columns (context bundle, stack
// snapshot, admission). These are stored documents whose shape has evolved, so
// every field is read defensively: a missing or odd field shows as absent, it
// never breaks the page. Names of secrets and config maps only, never values.

type Json = unknown;

const obj = (v: Json): Record<string, Json> => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, Json>) : {});
const arr = (v: Json): Json[] => (Array.isArray(v) ? v : []);
const str = (v: Json): string | null => (typeof v === "string" ? v : null);
const num = (v: Json): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null);
const strings = (v: Json): string[] => arr(v).flatMap((x) => (typeof x === "string" ? [x] : []));

export type ContextLabelView = { label: string; provenance: string | null; bytes: number | null };
export type LogExcerptView = { name: string; startLine: number; text: string };
export type CiArtifactView = { name: string; type: string | null; url: string | null; digest: string | null };
export type IdentityView = {
  runnerPool: string | null;
  runtimeServiceAccount: string | null;
  runnerServiceAccount: string | null;
  nativeRoles: string[];
  secretGrants: string[];
  configMapGrants: string[];
};

export type ContextView = {
  sourceUrl: string | null;
  sourceDetail: string | null;
  /** The delivery that caused the run (the deliveries page shows it), when one did. */
  deliveryId: string | null;
  labels: string[];
  changedFiles: string[];
  contextLabels: ContextLabelView[];
  logExcerpts: LogExcerptView[];
  ciArtifacts: CiArtifactView[];
  failure: { signature: string | null; testNames: string[]; errorLines: string[] } | null;
  identity: IdentityView | null;
  redaction: string | null;
};

function provenanceText(v: Json): string | null {
  if (typeof v === "string") return v;
  const p = obj(v);
  const source = str(p.source);
  const ref = str(p.ref);
  return source ? (ref ? `${source}: ${ref}` : source) : null;
}

function grantNames(v: Json, key: string): string[] {
  return arr(v).flatMap((g) => {
    if (typeof g === "string") return [g];
    const name = str(obj(g)[key]);
    return name ? [name] : [];
  });
}

/** The context bundle, as the page's left pane and header need it. */
export function contextView(bundle: Json): ContextView {
  const b = obj(bundle);
  const pr = obj(b.pullRequest);
  const source = obj(b.source);
  const logs = b.logs;
  const logExcerpts: LogExcerptView[] = Array.isArray(logs)
    ? logs.flatMap((l) => {
        const o = obj(l);
        const text = str(o.excerpt);
        return text === null ? [] : [{ name: str(o.name) ?? "log", startLine: num(o.startLine) ?? 1, text }];
      })
    : arr(obj(logs).excerpts).flatMap((l) => {
        const o = obj(l);
        const text = str(o.text);
        const name = [str(o.job), str(o.step)].filter(Boolean).join(" › ") || "log";
        return text === null ? [] : [{ name, startLine: num(o.startLine) ?? 1, text }];
      });
  const failure = b.failure ? obj(b.failure) : null;
  const identity = b.identity ? obj(b.identity) : null;
  const redactionStatus = str(obj(obj(logs).redaction).status) ?? (b.redaction ? "redacted" : null);
  return {
    sourceUrl: str(source.url) ?? str(pr.url) ?? str(obj(b.pipeline).url),
    sourceDetail: str(source.detail) ?? str(source.command) ?? str(source.label),
    deliveryId: str(source.deliveryId),
    labels: strings(pr.labels),
    changedFiles: strings(pr.changedFiles),
    contextLabels: arr(b.contextLabels).flatMap((l) => {
      const o = obj(l);
      const label = str(o.label) ?? str(o.name);
      if (!label) return [];
      return [{ label, provenance: provenanceText(o.provenance), bytes: num(o.bytes) ?? (str(o.fragment)?.length ?? null) }];
    }),
    logExcerpts,
    ciArtifacts: arr(b.artifacts).flatMap((a) => {
      const o = obj(a);
      const name = str(o.name);
      return name ? [{ name, type: str(o.type), url: str(o.url), digest: str(o.digest) }] : [];
    }),
    failure: failure
      ? {
          signature: str(failure.signature),
          testNames: strings(failure.testNames),
          errorLines: str(failure.errorLine) ? [str(failure.errorLine)!] : strings(failure.errorLines),
        }
      : null,
    identity: identity
      ? {
          runnerPool: str(identity.runnerPool),
          runtimeServiceAccount: str(identity.runtimeServiceAccount),
          runnerServiceAccount: str(identity.runnerServiceAccount),
          nativeRoles: strings(identity.nativeRoles),
          secretGrants: grantNames(identity.secretGrants, "secretName"),
          configMapGrants: grantNames(identity.configMapGrants ?? identity.configGrants, "configMapName"),
        }
      : null,
    redaction: redactionStatus,
  };
}

export type StackView = {
  name: string | null;
  version: number | null;
  /** The validated definition; null when the snapshot predates the current schema. */
  spec: StackSpec | null;
};

export function stackView(snapshot: Json): StackView {
  const s = obj(snapshot);
  const parsed = zStackSpec.safeParse(s.spec);
  return { name: str(s.name), version: num(s.version), spec: parsed.success ? parsed.data : null };
}

export type AdmissionView = {
  admitted: boolean;
  poolName: string | null;
  trustTier: string | null;
  runtimeServiceAccount: string | null;
  runnerServiceAccount: string | null;
  secretsGranted: string[];
  secretsDenied: { name: string; reason: string }[];
  configMapsGranted: string[];
  summary: string;
};

/** The admission decision stored on the run (same shape as the `admission` event). */
export function admissionView(admission: Json): AdmissionView | null {
  if (admission === null || admission === undefined) return null;
  const parsed = zAdmissionPayload.safeParse(admission);
  if (!parsed.success) return null;
  const { policyDecisionId: _omit, ...view } = parsed.data;
  return view;
}
