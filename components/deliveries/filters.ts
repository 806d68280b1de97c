import { createLoader, parseAsStringLiteral } from "nuqs/server";
import { parseAsText, toInput } from "@/components/ui/url-filters";
import { DeliveryOutcome } from "@/server/db/generated/enums";

// The deliveries page's filters in the URL (shared by the page's prefetch and the list).

/** In the schema's order (received, processed, ... failed), as the outcome filter lists them. */
export const deliveryOutcomes = Object.values(DeliveryOutcome);

export const deliveryFilterParsers = {
  outcome: parseAsStringLiteral(deliveryOutcomes),
  event: parseAsText(100),
  repository: parseAsText(200),
  delivery: parseAsText(200),
};

export const loadDeliveryFilters = createLoader(deliveryFilterParsers);

type Values = { outcome: DeliveryOutcome | null; event: string | null; repository: string | null; delivery: string | null };

/** deliveries.list's input for these filters. */
export const deliveryListInput = ({ delivery, ...f }: Values) => ({ ...toInput({ ...f, deliveryId: delivery }), limit: 50 });
