// The "Attach context" form's schema: the runs.attachContext procedure validates with it and the
// run view's dialog uses the same one. Flat (every field present, the kind decides which are
// required) so react-hook-form can hold it. Nothing here needs Node.
import { z } from "zod";

export const ATTACHMENT_KINDS = ["note", "link", "file_excerpt"] as const;

/** Longest attached text; the event catalogue bounds event text at 64 KiB. */
export const MAX_ATTACHMENT_CHARS = 20_000;

export const zAttachContextInput = z
  .object({
    /** Chosen by the browser once per dialog: a retried request attaches nothing twice. */
    attachmentId: z.uuid(),
    kind: z.enum(ATTACHMENT_KINDS),
    title: z.string().trim().max(200, "At most 200 characters"),
    url: z.string().trim().max(2_000, "At most 2,000 characters"),
    path: z.string().trim().max(500, "At most 500 characters"),
    /** Where the excerpt starts in the file: typed text from the form ("" for unknown) or a number. */
    startLine: z.preprocess(
      (v) => (typeof v === "number" ? String(v) : v === null ? "" : v),
      z
        .string()
        .max(20)
        .trim()
        .regex(/^([1-9][0-9]{0,7})?$/, "A line number from 1")
        .transform((v) => (v === "" ? null : Number(v))),
    ),
    text: z.string().max(MAX_ATTACHMENT_CHARS, `At most ${MAX_ATTACHMENT_CHARS.toLocaleString("en")} characters`),
  })
  .superRefine((v, ctx) => {
    const need = (path: "text" | "url" | "path", message: string) => ctx.addIssue({ code: "custom", path: [path], message });
    if ((v.kind === "note" || v.kind === "file_excerpt") && v.text.trim() === "") need("text", "Required");
    if (v.kind === "file_excerpt" && v.path === "") need("path", "Required: the file's path in the repository");
    if (v.kind === "file_excerpt" && /(^|\/)\.\.(\/|$)|^\//.test(v.path)) need("path", "A path inside the repository (no leading / or ..)");
    if (v.kind === "link") {
      if (v.url === "") need("url", "Required");
      else if (!/^https?:\/\/[^\s/]+\S*$/i.test(v.url)) need("url", "An http(s) URL");
    }
  });
export type AttachContextFormValues = z.input<typeof zAttachContextInput>;
export type AttachContextInput = z.output<typeof zAttachContextInput>;

// What an attempt's agent ran with (attempt-launch.ts builds and stores it; the approval screen
// shows it). Bounded; never a value of a secret or config map, only names.
const zLaunchText = (max: number) => z.string().max(max);

export const zAttemptLaunch = z.object({
  adapter: z.enum(["command", "claude-code", "scripted", "kubernetes"]),
  model: zLaunchText(200),
  /** argv, each argument as passed (the prompt goes on stdin, never here). */
  command: z.array(zLaunchText(40_000)).max(200),
  files: z.array(z.object({ name: zLaunchText(200), content: zLaunchText(64_000) })).max(16),
  env: z.array(z.object({ name: zLaunchText(128), from: zLaunchText(300) })).max(200),
  tools: z.array(zLaunchText(200)).max(200),
  mcpServers: z.array(z.object({ name: zLaunchText(80), transport: zLaunchText(10), target: zLaunchText(4_000) })).max(64),
  secrets: z.array(zLaunchText(200)).max(200),
  configMaps: z.array(zLaunchText(200)).max(200),
  withheld: z.array(zLaunchText(1_000)).max(200),
  /** A continuation's launch: resumed the earlier session, or why it started fresh. */
  continuation: zLaunchText(2_000).nullable(),
});
export type AttemptLaunch = z.infer<typeof zAttemptLaunch>;
/** What the adapter itself reports of its launch (the claude-code adapter: its plan). */
export type AdapterLaunch = Pick<AttemptLaunch, "command" | "files" | "env" | "withheld" | "continuation">;

export const zRanWith = z.object({ attemptNumber: z.number().int().min(1), launch: zAttemptLaunch });
export type RanWith = z.infer<typeof zRanWith>;

