import { createLoader } from "nuqs/server";
import { parseAsText, toInput } from "@/components/ui/url-filters";

// The audit log's filters in the URL (shared by the page's prefetch and the log).

export const auditFilterParsers = { actor: parseAsText(200), action: parseAsText(200) };

export const loadAuditFilters = createLoader(auditFilterParsers);

/** audit.list's input for these filters. */
export const auditListInput = (f: { actor: string | null; action: string | null }) => ({ ...toInput(f), limit: 50 });
