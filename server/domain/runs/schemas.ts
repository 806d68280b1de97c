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
